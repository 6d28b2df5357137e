"""The German data of Wordmap's question (Jung 2023): a masked LM pretrained on German running text, evaluated by
pseudo-perplexity and verb probes on UD German GSD and by GermEval 2018 offensive-language classification.

    python -m train_scripts.prepare_german corpus --out work/de/pretrain [--valid-lines 1000 --seed 1]
    python -m train_scripts.prepare_german germeval --out work/de/germeval [--dev-fraction 0.1 --seed 1]
    python -m train_scripts.prepare_german ud --out work/de/ud
    python -m train_scripts.prepare_german all --out work/de          # the three above, in OUT/{pretrain,germeval,ud}
    python -m train_scripts.prepare_german floor [--csv-prefix work/de/germeval/germeval]
    python -m train_scripts.prepare_german score --gold work/de/germeval/germeval_test.csv --pred SAVE/test_scores.json

Inputs (read, never written; default ``../shared/data``, ``--data`` another such folder, or each one given):
``--germeval DIR`` with ``germeval2018.{training,test}.txt`` (``text<TAB>coarse<TAB>fine``), ``--ud DIR`` with
``de_gsd-ud-{dev,test}.conllu``, ``--multi30k DIR`` with ``train.de``, ``val.de`` and ``test*.de`` (``.gz`` too).
Every reader is strict: invalid UTF-8 (the message says to save the file as UTF-8: this command has no
``--errors``), a CoNLL-U line without 10 columns or with a malformed ID or FEATS, a GermEval line without its three
columns or with an unknown label is one line ``FILE:LINE: what``.  A byte-order mark at the start of a file is no
text (dropped).  Blank lines of a GermEval file are skipped (counted).  Tweets are kept exactly as written (emoji,
@mentions, URLs, ``|LBR|``, a carriage return or a Unicode line break inside one).

``corpus`` -- German running text for pretraining: the Multi30k German training side, the GermEval 2018 training
tweets (their text only, unlabelled) and the UD German GSD dev sentences (``# text``), each line stripped of
leading and trailing whitespace (nothing else is changed; a character that fairseq would read as a line break
becomes a space, counted).  Rules, applied in this order, each counted per source in ``corpus.json``:
blank lines; a line equal to a GermEval 2018 test tweet; to a UD German GSD test sentence; to a Multi30k
validation or test sentence (``val`` and every ``test*`` file: 2016 and 2017 Flickr); an exact duplicate of an
earlier kept line (the first is kept).  "Equal" is compared after :func:`normalise`: Unicode NFC, a byte-order
mark dropped, GermEval's ``|LBR|`` marker and every Unicode space or line break read as a space, whitespace runs
collapsed and trimmed, case-folded (and composed again).  The kept lines are shuffled
(``random.Random(seed)``) and the first ``--valid-lines`` (default 1,000) are ``valid.de``, the rest ``train.de``,
one sentence per line.

``germeval`` -- the fine-tuning sets in the CSV layout that ``classification_data prepare`` and
``finetune_classification.sh`` read (``--csv-prefix OUT/germeval``): ``germeval_{train,dev,test}.csv`` with the
columns ``text,label,fine`` (the text first; ``label`` the coarse OFFENSE/OTHER).  Dev is a stratified
``--dev-fraction`` (default 10%) of the training tweets: per coarse label, ``round(fraction * n)`` tweets drawn with
``random.Random(seed)`` (seed 1); train is the rest; both keep the file's order, and test is the official test
set.  A text with a carriage return in it is quoted, so that any CSV reader sees one row per tweet.
(``classification_data.read_csv`` collapses whitespace runs in the text as it does for every CSV.)

``ud`` -- the probes' and pseudo-perplexity's data: ``ud_verbs.jsonl``, one record per VERB/AUX word of UD dev
and test (``split, sent_id, sentence, token, word, surface, form, lemma, upos, xpos, feats``; ``feats`` holds those of
VerbForm, Tense, Person, Number, Mood the word has, a missing one absent); ``ud_sentences.jsonl``, one record per
sentence (``split, sentence, sent_id, text, words, surface_tokens, verb_words, verb_surface``); ``ud_dev.de`` and
``ud_test.de``, the sentence texts one per line (``ud_test.de`` is the held-out text of pseudo-perplexity: line i
is the i-th test record); ``ud.json``, the counts.  ``word`` and ``verb_words`` index the whitespace words of
``text`` (``text.split()``, the words ``pseudo_perplexity`` counts), found from the forms and ``SpaceAfter=No``;
``surface`` and ``verb_surface`` index the surface tokens (a multi-word token such as ``im`` = ``in dem`` is one).

``floor`` -- the character 3-6-gram Naive Bayes (``train_scripts/ngram_floor.py``) on GermEval coarse, its alpha
chosen by the official F1 on the last 20% of the training tweets (trained on the first 80%), or on the sets of
``--csv-prefix`` (trained on its train, chosen on its dev); scored on the test set with accuracy, the official F1
(:func:`germeval_macro_f1`) and scikit-learn's macro F1.  ``score`` scores predictions (a ``classification_data
score`` JSON or one label per line) against a GermEval CSV or TSV with the same three measures.

Every output folder's files appear together, through temporary files renamed when complete (nothing partial is
left on an error or Ctrl-C), and an output that is one of the inputs is refused before any work.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from preprocess.cli import run_main
from preprocess.common import SHARED_DATA, UserError

# the data layer, one module per part (train_scripts/german_data); its names stay importable from here
from train_scripts.german_data.conllu import (  # noqa: F401
    UPOS,
    EmptyNode,
    MultiwordToken,
    Sentence,
    Word,
    read_conllu,
    word_positions,
)
from train_scripts.german_data.corpus import (  # noqa: F401
    LEAKAGE_RULES,
    NORMALISATION,
    SOURCES,
    VALID_LINES,
    build_corpus,
    corpus_notes,
    normalise,
    prepare_corpus,
)
from train_scripts.german_data.germeval import (  # noqa: F401
    DEV_FRACTION,
    FLOOR_DEV_FRACTION,
    GERMEVAL_COARSE,
    GERMEVAL_FINE,
    LBR,
    Tweet,
    Tweets,
    csv_text,
    floor,
    germeval_macro_f1,
    germeval_scores,
    label_counts,
    prepare_germeval,
    read_germeval,
    read_gold,
    read_predictions,
    split_dev,
)
from train_scripts.german_data.inputs import GERMEVAL_FILES, SEED, UD_FILES, Inputs, read_all_lines  # noqa: F401
from train_scripts.german_data.ud import VERB_FEATURES, VERB_UPOS, prepare_ud, ud_records  # noqa: F401

# --- command line ------------------------------------------------------------------------------------------------

def _add_inputs(p) -> None:
    g = p.add_argument_group("inputs (default: under --data)")
    g.add_argument("--data", default=None, help=f"the shared data folder (default {SHARED_DATA})")
    g.add_argument("--germeval", default=None, help="folder of germeval2018.{training,test}.txt")
    g.add_argument("--ud", default=None, help="folder of de_gsd-ud-{dev,test}.conllu")
    g.add_argument("--multi30k", default=None, help="folder of train.de, val.de, test*.de (.gz too)")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.prepare_german", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus", help="German running text for pretraining: OUT/{train,valid}.de, corpus.json")
    g = sub.add_parser("germeval", help="GermEval 2018 fine-tuning CSVs: OUT/germeval_{train,dev,test}.csv")
    u = sub.add_parser("ud", help="UD German GSD verbs and held-out text: OUT/ud_*.jsonl, ud_{dev,test}.de")
    a = sub.add_parser("all", help="corpus, germeval and ud into OUT/pretrain, OUT/germeval, OUT/ud")
    f = sub.add_parser("floor", help="the character n-gram Naive Bayes floor on GermEval coarse")
    s = sub.add_parser("score", help="official GermEval 2018 coarse F1 and accuracy of predictions")
    for p in (c, g, u, a):
        p.add_argument("--out", required=True, help="output folder")
    for p in (c, a):
        p.add_argument("--valid-lines", type=int, default=VALID_LINES, help="lines held out as valid.de")
    for p in (g, a):
        p.add_argument("--dev-fraction", type=float, default=DEV_FRACTION, help="training tweets held out as dev")
    for p in (c, g, a):
        p.add_argument("--seed", type=int, default=SEED, help="seed of the shuffle and of the dev split")
    for p in (c, g, u, a, f):
        _add_inputs(p)
    f.add_argument("--csv-prefix", default=None,
                   help="use PREFIX_{train,dev,test}.csv (germeval's) instead of the last 20%% of the training tweets")
    s.add_argument("--gold", required=True, help="a GermEval .txt file, or a germeval_*.csv")
    s.add_argument("--pred", required=True, help="classification_data score JSON, or one label per line")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "score":
        print(json.dumps(germeval_scores(read_gold(args.gold), read_predictions(args.pred)), indent=1))
        return 0
    inputs = Inputs.from_options(args.data, args.germeval, args.ud, args.multi30k)
    if args.command == "floor":
        print(json.dumps(floor(inputs, args.csv_prefix), indent=1))
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder")
    if args.command in ("corpus", "all"):
        record = prepare_corpus(str(out / "pretrain" if args.command == "all" else out), inputs, args.valid_lines,
                                args.seed)
        print("\n".join(record["notes"]))
    if args.command in ("germeval", "all"):
        record = prepare_germeval(str(out / "germeval" if args.command == "all" else out), inputs,
                                  args.dev_fraction, args.seed)
        print(f"GermEval 2018: {json.dumps(record['labels'])} -> {record['csv_prefix']}_{{train,dev,test}}.csv")
    if args.command in ("ud", "all"):
        record = prepare_ud(str(out / "ud" if args.command == "all" else out), inputs)
        print(f"UD German GSD: {record['dev']['sentences']} dev + {record['test']['sentences']} test sentences, "
              f"{record['verbs']} VERB/AUX words")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))

