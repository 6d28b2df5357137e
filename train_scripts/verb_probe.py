"""A frozen-encoder verb probe (Wordmap's question, Jung 2023): what a pretrained masked LM's word states say about
the German verbs of UD German GSD -- their inflection (HYP1's verb features) and their lexeme (HYP2).

    python -m train_scripts.verb_probe --checkpoint ckpt/lm/checkpoint_last.pt --lm-data work/lm \\
        --train-conllu de_gsd-ud-dev.conllu --test-conllu de_gsd-ud-test.conllu [--random-seeds 5] \\
        [--metric accuracy] [--output probe.json]

**Encoding.**  Each UD sentence's text (its ``# text``, else the forms joined by ``SpaceAfter``) is encoded as the
pretraining data was, by the row's scheme from the ``binarize --lm`` folder's record
(:class:`train_scripts.pseudo_perplexity.RowEncoder`, a "no spaces" row's ``▁`` dropped as the checkpoint's task
did), between ``<s>`` and ``</s>``; a sentence over the model's positions is cut after its last whole word that
fits (:func:`~train_scripts.pseudo_perplexity.fit_line`), and verbs cut off are counted (``verbs_truncated``), not
probed.  The encoder is frozen (:func:`train_scripts.probe.load_encoder`: the checkpoint, or with
``--random-seeds N`` the same architecture from random weights under seeds 1..N, the controls: fairseq's
initialisation under that torch seed, so seed 1 is close to the starting point of a model pretrained with
fairseq's default ``--seed 1``); sentences go through it in batches.  A **word's state** is the mean of the last layer's states over its pieces, a word being a
whitespace-separated word of the text and a piece its word's as pseudo-perplexity attributes them
(:func:`~train_scripts.pseudo_perplexity.piece_words`); a sentence whose pieces do not give each of its words a
piece is left out (``words_per_sentence_mismatch``).

**Verbs.**  Every syntactic word with UPOS VERB or AUX (the CoNLL-U reader of
:mod:`train_scripts.german_data.conllu`).  Contractions: the text is encoded as written, so a multi-word token
(``zum`` = ``zu dem``) is encoded as its surface form and a verb inside one gets the state of the whitespace word
that holds the surface token (:func:`train_scripts.german_data.conllu.word_positions`); the split words are never
encoded.  Punctuation written against a verb (``geht.``) is part of that whitespace word, for every row alike.  A
verb whose surface token is not found in the text is counted (``verbs_without_word``).

**(a) Feature probes.**  For each of VerbForm, Tense, Person, Number and Mood, a logistic regression
(scikit-learn, features standardised) is trained on the train file's (UD dev) verbs that have the feature and
scored on the test file's verbs that have it: accuracy and macro F1.  ``C`` (0.01, 0.1 or 1) is chosen by
stratified 5-fold cross-validation on the training verbs alone (folds shuffled with seed 1, fewer folds where the
largest class is smaller; ``--metric`` says by which score), then refitted on all of them.  ``majority``: the
accuracy on test of always answering the training verbs' most frequent value (``majority_label``; a tie goes to the
value first in sorted order), with its macro F1.

**(b) Lexeme probe (HYP2).**  Among the test file's verbs: a verb is a query when another verb of the same gold
lemma with a *different* form exists (forms compared case-folded); its nearest neighbour by cosine of the word
states is taken among all other test verbs **except those with the same form** (so ``ging`` must find ``gehen`` or
``geht``, not another ``ging``; ties go to the first in file order); ``rate`` is the share of queries whose
neighbour has the query's lemma, ``chance`` the mean over queries of the share of its candidates with its lemma
(the expected rate of a random neighbour).

Output (JSON)::

    {"features": {feature: {"n_train", "n_test", "labels", "accuracy", "macro_f1", "majority", "majority_label",
                            "majority_macro_f1", "C", "cv_folds"}},
     "lexeme": {"queries", "correct", "rate", "chance", "lemmas"},
     "random": [{"seed", "features", "lexeme"}, ...],
     "words_per_sentence_mismatch", "sentences": {"train", "test"}, "verbs": {"train", "test"},
     "verbs_used": {"train", "test"}, "verbs_without_word", "verbs_truncated", "truncated_sentences", "unk_tokens",
     "scheme", "metric", "checkpoint", "lm_data", "train_conllu", "test_conllu", "seconds"}

A feature without training or test verbs has its counts and None scores.  Errors (a malformed CoNLL-U line: one
line naming the file and line) leave no output file.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator, NamedTuple

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.files.outputs import write_record
from train_scripts import pseudo_perplexity as pp
from train_scripts.german_data.conllu import read_conllu, word_positions
from train_scripts.german_data.ud import VERB_FEATURES, VERB_UPOS
from train_scripts.probe import CS, load_encoder

#: sentences per forward pass
BATCH_SENTENCES = 64
#: cross-validation folds choosing C, and their shuffling seed
FOLDS = 5
SEED = 1
METRICS = ("accuracy", "macro_f1")


@dataclass
class Verb:
    """A VERB/AUX word of a UD file: its sentence, the whitespace word of the text holding it, its gold values."""
    sentence: int
    word: int
    form: str
    lemma: str
    upos: str
    feats: dict = field(default_factory=dict)


def ud_verbs(sentences: list) -> tuple[list[str], list[Verb], int]:
    """``(texts, verbs, verbs without a word)`` of the sentences of a CoNLL-U file: each sentence's text as one
    line, and its VERB/AUX words (in file order) with the whitespace word of the text holding each (a
    multi-word token's word for a verb inside one)."""
    texts, verbs, without = [], [], 0
    for i, sentence in enumerate(sentences):
        texts.append(flatten_line(sentence.text))
        positions = word_positions(sentence)
        for t, (_, indices, _) in enumerate(sentence.surface_tokens()):
            for wi in indices:
                w = sentence.words[wi]
                if w.upos not in VERB_UPOS:
                    continue
                if positions[t] is None:
                    without += 1
                    continue
                verbs.append(Verb(i, positions[t], w.form, w.lemma, w.upos,
                                  {f: w.feats[f] for f in VERB_FEATURES if f in w.feats}))
    return texts, verbs, without


# --- encoding and word states ------------------------------------------------------------------------------------

def encode_texts(row, dictionary, texts: list, limit: int) -> tuple[list, dict]:
    """One entry per text: ``(ids with <s> and </s>, the word of each piece, words kept)``, or None for a text whose
    pieces do not give each of its words a piece (or that has none); and the counts (``mismatch``,
    ``truncated_sentences``, ``unk_tokens``)."""
    out, counts = [], {"mismatch": 0, "truncated_sentences": 0, "unk_tokens": 0}
    for text, (pieces, words) in zip(texts, row.encode_words(texts)):
        if not pieces:
            counts["mismatch"] += 1
            out.append(None)
            continue
        kept_text, pieces, words = pp.fit_line_words(row, text, pieces, words, limit)
        kept = len(kept_text.split())
        counts["truncated_sentences"] += kept_text != text
        if not pp.words_align(words, kept):
            counts["mismatch"] += 1
            out.append(None)
            continue
        ids = [dictionary.index(p) for p in pieces]
        counts["unk_tokens"] += sum(i == dictionary.unk() for i in ids)
        out.append(([dictionary.bos(), *ids, dictionary.eos()], words, kept))
    return out, counts


def word_states(model, dictionary, encoded: list, batch: int = BATCH_SENTENCES) -> list:
    """Per encoded sentence, an array (words kept x model dimension): each word's mean last-layer state over its
    pieces (None where ``encoded`` has None).  Sentences go through the frozen ``model`` ``batch`` at a time,
    longest first."""
    import numpy as np
    import torch
    from fairseq.data import data_utils

    out = [None] * len(encoded)
    order = sorted((i for i, e in enumerate(encoded) if e is not None), key=lambda i: -len(encoded[i][0]))
    with torch.no_grad():
        for start in range(0, len(order), max(1, batch)):
            chunk = order[start:start + max(1, batch)]
            tokens = data_utils.collate_tokens([torch.tensor(encoded[i][0]) for i in chunk], dictionary.pad())
            states, _ = model(tokens, features_only=True)
            states = states.double().numpy()
            for r, i in enumerate(chunk):
                ids, words, kept = encoded[i]
                # a word's pieces are consecutive (piece_words never goes back): sums over runs
                starts = np.flatnonzero(np.diff(words, prepend=-1))
                sums = np.add.reduceat(states[r, 1:len(ids) - 1], starts, axis=0)
                out[i] = sums / np.diff(np.append(starts, len(words)))[:, None]
    return out


# --- the probes --------------------------------------------------------------------------------------------------

def _scores(gold, pred) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    return {"accuracy": float(accuracy_score(gold, pred)),
            "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0))}


def majority_label(labels) -> str:
    """The most frequent label (a tie: the first in sorted order)."""
    counts = Counter(labels)
    return min(counts, key=lambda label: (-counts[label], label))


def feature_probe(train_x, train_y, test_x, test_y, metric: str = "accuracy", folds: int = FOLDS,
                  seed: int = SEED) -> dict:
    """One feature's probe (module doc, (a)): ``n_train``, ``n_test``, ``labels`` (distinct training values),
    ``accuracy``, ``macro_f1``, ``majority``, ``majority_label``, ``majority_macro_f1``, ``C``, ``cv_folds``."""
    import numpy as np

    out = {"n_train": len(train_y), "n_test": len(test_y), "labels": len(set(train_y)), "accuracy": None,
           "macro_f1": None, "majority": None, "majority_label": None, "majority_macro_f1": None, "C": None,
           "cv_folds": 0}
    if not train_y or not test_y:
        return out
    label = majority_label(train_y)
    base = _scores(test_y, [label] * len(test_y))
    out.update(majority=base["accuracy"], majority_label=label, majority_macro_f1=base["macro_f1"])
    if out["labels"] < 2:   # one value to learn: the classifier is the majority
        out.update(base)
        return out
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    pipeline = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    k = min(folds, max(Counter(train_y).values()))
    # one BLAS thread: problems this small run several times faster so, above all on a machine shared with others
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", UserWarning)          # a class with fewer members than folds
        warnings.simplefilter("ignore", ConvergenceWarning)
        if k >= 2:
            search = GridSearchCV(pipeline, {"logisticregression__C": list(CS)},
                                  scoring="f1_macro" if metric == "macro_f1" else "accuracy",
                                  cv=StratifiedKFold(n_splits=k, shuffle=True, random_state=seed), refit=True)
            search.fit(np.asarray(train_x), list(train_y))
            c, clf = search.best_params_["logisticregression__C"], search.best_estimator_
        else:   # every value seen once: nothing to cross-validate
            c, clf = 1.0, pipeline.set_params(logisticregression__C=1.0).fit(np.asarray(train_x), list(train_y))
    out.update(_scores(test_y, list(clf.predict(np.asarray(test_x)))), C=float(c), cv_folds=k if k >= 2 else 0)
    return out


def lexeme_probe(vectors, lemmas, forms, chunk: int = 1024) -> dict:
    """The nearest-neighbour lexeme probe (module doc, (b)) over the rows of ``vectors`` with their gold
    ``lemmas`` and ``forms``: ``queries``, ``correct``, ``rate``, ``chance`` (None without queries) and ``lemmas``
    (distinct lemmas among the queries)."""
    import numpy as np

    if not len(lemmas):
        return {"queries": 0, "correct": 0, "rate": None, "chance": None, "lemmas": 0}
    x = np.asarray(vectors, dtype=np.float64).reshape(len(lemmas), -1)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms > 0, norms, 1.0)
    lemma_id = np.unique(np.asarray(lemmas, dtype=object).astype(str), return_inverse=True)[1]
    form_id = np.unique(np.asarray([f.casefold() for f in forms], dtype=object).astype(str), return_inverse=True)[1]
    queries = correct = 0
    chances, query_lemmas = [], set()
    for start in range(0, len(lemmas), chunk):
        rows = np.arange(start, min(len(lemmas), start + chunk))
        allowed = form_id[rows, None] != form_id[None, :]          # not itself, not its own form
        same = lemma_id[rows, None] == lemma_id[None, :]
        good = allowed & same
        is_query = good.any(axis=1)
        nearest = np.where(allowed, x[rows] @ x.T, -np.inf).argmax(axis=1)
        hit = same[np.arange(len(rows)), nearest] & is_query
        queries += int(is_query.sum())
        correct += int(hit.sum())
        chances += list((good.sum(axis=1) / np.maximum(allowed.sum(axis=1), 1))[is_query])
        query_lemmas.update(lemma_id[rows][is_query].tolist())
    return {"queries": queries, "correct": correct, "rate": correct / queries if queries else None,
            "chance": float(np.mean(chances)) if queries else None, "lemmas": len(query_lemmas)}


def probe_states(states: dict, verbs: dict, metric: str) -> dict:
    """``{"features", "lexeme"}`` of one encoder: ``states`` and ``verbs`` per split (``train``, ``test``); the
    verbs given are those with a state."""
    import numpy as np

    x = {s: np.array([states[s][v.sentence][v.word] for v in verbs[s]]) for s in verbs}
    features = {}
    for f in VERB_FEATURES:
        pick = {s: [k for k, v in enumerate(verbs[s]) if f in v.feats] for s in verbs}
        features[f] = feature_probe(x["train"][pick["train"]], [verbs["train"][k].feats[f] for k in pick["train"]],
                                    x["test"][pick["test"]], [verbs["test"][k].feats[f] for k in pick["test"]],
                                    metric)
    test = verbs["test"]
    return {"features": features,
            "lexeme": lexeme_probe(x["test"], [v.lemma for v in test], [v.form for v in test])}


# --- the whole probe ---------------------------------------------------------------------------------------------

class RowModel(NamedTuple):
    """A row's pretrained encoder and what scoring text with it needs (:func:`row_model`)."""

    model: object
    dictionary: object
    row: object                          # pseudo_perplexity.RowEncoder: the row's scheme, pieces to words
    limit: int                           # pieces a line may have (the model's positions less <s> and </s>)
    random_encoder: Callable[[int], object]   # seed -> an encoder of the same architecture from random weights


@contextlib.contextmanager
def row_model(checkpoint: str, info: dict, prefix: str) -> Iterator[RowModel]:
    """The encoder of ``checkpoint`` pretrained on the ``binarize --lm`` folder whose record is ``info``, its
    dictionary, the row's encoder and the pieces a line may have, and random encoders of the same architecture on
    demand: what the verb probe and the agreement command score with (``probe.load_encoder`` reads the dictionary
    from DATA/input0, a classification folder's layout: a temporary folder links it, for the block's duration)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        os.symlink(os.path.abspath(info["data_bin"][0]), os.path.join(tmp, "input0"))
        with pp._quiet_fairseq():
            model, dictionary = load_encoder(checkpoint, tmp)
        row = pp.RowEncoder(info, drops_spaces(checkpoint) or info.get("spaces") == "drop")
        limit = int(model.max_positions()) - 2
        if limit < 1:
            raise UserError(f"the model's max_positions ({limit + 2}) leaves no room for a token")

        def random_encoder(seed: int):
            with pp._quiet_fairseq():
                return load_encoder(checkpoint, tmp, seed)[0]

        yield RowModel(model, dictionary, row, limit, random_encoder)


def drops_spaces(checkpoint: str) -> bool:
    """Whether the checkpoint's pretraining task dropped the standalone ``▁`` (masked_lm_words
    --drop-space-tokens)."""
    from fairseq import checkpoint_utils

    import fairseq_plugins  # noqa: F401  (checkpoint loading on torch >= 2.6)

    cfg = checkpoint_utils.load_checkpoint_to_cpu(checkpoint).get("cfg")
    task = getattr(cfg, "task", None) if cfg is not None else None
    return bool(getattr(task, "drop_space_tokens", False)) if task is not None else False


def verb_probe(checkpoint: str, lm_data: str, train_conllu: str, test_conllu: str, random_seeds: int = 0,
               metric: str = "accuracy", batch: int = BATCH_SENTENCES, threads: int = 0) -> dict:
    """The probe of the module doc: the pretrained ``checkpoint`` (pretrained on the ``binarize --lm`` folder
    ``lm_data``) and ``random_seeds`` random encoders, trained on ``train_conllu``'s verbs, scored on
    ``test_conllu``'s."""
    import torch

    from train_scripts.binarize import read_record

    started = time.perf_counter()
    if metric not in METRICS:
        raise UserError(f"--metric must be one of {', '.join(METRICS)}, not {metric!r}")
    if random_seeds < 0:
        raise UserError(f"--random-seeds must be 0 or more, not {random_seeds}")
    if batch < 1:
        raise UserError(f"--batch-size must be at least 1, not {batch}")
    if threads < 0:
        raise UserError(f"--threads must be 0 (torch's default) or more, not {threads}")
    files = {"train": train_conllu, "test": test_conllu}
    ud = {s: ud_verbs(read_conllu(path)) for s, path in files.items()}   # every input checked before any work
    info = read_record(lm_data, "give the output folder of binarize --lm the model was pretrained on")
    if not info.get("lm") or not info.get("data_bin"):
        raise UserError(f"{lm_data} is not a binarize --lm folder (its record has no lm/data_bin)")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    if threads:
        torch.set_num_threads(threads)
    with row_model(checkpoint, info, "verb_probe.") as rm:
        dictionary = rm.dictionary
        encoded, counts = {}, Counter()
        for s, (texts, _, _) in ud.items():
            encoded[s], c = encode_texts(rm.row, dictionary, texts, limit=rm.limit)
            counts.update(c)
        used, truncated = {}, 0
        for s, (_, verbs, _) in ud.items():
            ok = [v for v in verbs if encoded[s][v.sentence] is not None]
            used[s] = [v for v in ok if v.word < encoded[s][v.sentence][2]]
            truncated += len(ok) - len(used[s])

        def one(m) -> dict:
            return probe_states({s: word_states(m, dictionary, encoded[s], batch) for s in ud}, used, metric)

        result = one(rm.model)
        randoms = [{"seed": seed, **one(rm.random_encoder(seed))} for seed in range(1, random_seeds + 1)]
    result.update({
        "random": randoms, "words_per_sentence_mismatch": counts["mismatch"],
        "sentences": {s: len(ud[s][0]) for s in ud}, "verbs": {s: len(ud[s][1]) + ud[s][2] for s in ud},
        "verbs_used": {s: len(used[s]) for s in ud}, "verbs_without_word": sum(ud[s][2] for s in ud),
        "verbs_truncated": truncated, "truncated_sentences": counts["truncated_sentences"],
        "unk_tokens": counts["unk_tokens"], "scheme": (info.get("config") or {}).get("scheme", info.get("scheme")),
        "metric": metric, "checkpoint": os.path.abspath(checkpoint), "lm_data": os.path.abspath(lm_data),
        "train_conllu": os.path.abspath(train_conllu), "test_conllu": os.path.abspath(test_conllu),
        "seconds": round(time.perf_counter() - started, 3)})
    return result


# --- command line ------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.verb_probe", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="the pretrained RoBERTa (pretrain_roberta.sh)")
    ap.add_argument("--lm-data", required=True, help="the binarize --lm folder the model was pretrained on")
    ap.add_argument("--train-conllu", required=True, help="UD file whose verbs train the probes (UD German GSD dev)")
    ap.add_argument("--test-conllu", required=True, help="UD file whose verbs score them (UD German GSD test)")
    ap.add_argument("--random-seeds", type=int, default=0, help="random-weight control encoders (seeds 1..N)")
    ap.add_argument("--metric", choices=METRICS, default="accuracy", help="selects C by cross-validation")
    ap.add_argument("--batch-size", type=int, default=BATCH_SENTENCES, help="sentences per forward pass")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--output", default=None, help="write the JSON record here (default: stdout only)")
    a = ap.parse_args(argv)
    for path, what in ((a.lm_data, "--lm-data"), (a.checkpoint, "--checkpoint")):
        if not os.path.exists(path):
            raise UserError(f"{what} not found: {path}")
    result = verb_probe(a.checkpoint, a.lm_data, a.train_conllu, a.test_conllu, a.random_seeds, a.metric,
                        a.batch_size, a.threads)
    write_record(result, a.output)
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
