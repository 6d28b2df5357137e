"""The verb probe (train_scripts/verb_probe.py): UD verbs found in the text as encoded (a contraction's surface
word), the feature probes' majority baseline and C chosen on the training verbs, the lexeme probe's nearest
neighbour on hand-made vectors, and end to end on a tiny pretrained RoBERTa and a hand-written CoNLL-U: the
record's shape, the word states as the mean of each word's pieces, one record per random seed, and hostile input
(one line naming file and line, no output)."""
import json
import os
import tempfile

import numpy as np
import pytest
import torch

from preprocess.cli import run_main
from tests.conftest import multi30k_slice, run_command
from train_scripts import verb_probe as vp
from train_scripts.prepare_german import read_conllu

# --- a hand-written CoNLL-U ------------------------------------------------------------------------------------------

VERB = "VerbForm=Fin|Mood=Ind|Tense={t}|Person={p}|Number={n}"


def _w(form, lemma, upos, feats="_", space=True):
    return form, lemma, upos, feats, space


def _conllu(sentences) -> str:
    """CoNLL-U text of ``[(text, items)]``: an item is a word (:func:`_w`) or ``("range", form, [words], space)``."""
    out = []
    for n, (text, items) in enumerate(sentences, 1):
        out += [f"# sent_id = s{n}", f"# text = {text}"]
        i = 1
        for item in items:
            if item[0] == "range":
                _, form, words, space = item
                out.append(f"{i}-{i + len(words) - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{'_' if space else 'SpaceAfter=No'}")
                for form_, lemma, upos, feats, _ in words:
                    out.append(f"{i}\t{form_}\t{lemma}\t{upos}\t_\t{feats}\t0\tdep\t_\t_")
                    i += 1
                continue
            form, lemma, upos, feats, space = item
            out.append(f"{i}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t0\tdep\t_\t{'_' if space else 'SpaceAfter=No'}")
            i += 1
        out.append("")
    return "\n".join(out) + "\n"


def _sentence(subject, verb, lemma, tense, person, number, rest, upos="VERB"):
    """``subject verb rest .`` with the verb's features."""
    words = [_w(subject, subject.lower(), "PRON"), _w(verb, lemma, upos, VERB.format(t=tense, p=person, n=number))]
    words += [_w(w, w.lower(), "NOUN") for w in rest.split()]
    words[-1] = words[-1][:4] + (False,)
    return f"{subject} {verb} {rest}.", [*words, _w(".", ".", "PUNCT")]


TRAIN = [
    _sentence("Er", "geht", "gehen", "Pres", "3", "Sing", "Hause"),
    _sentence("Sie", "ging", "gehen", "Past", "3", "Sing", "Schule"),
    _sentence("Wir", "gehen", "gehen", "Pres", "1", "Plur", "Markt"),
    _sentence("Ich", "sage", "sagen", "Pres", "1", "Sing", "Wahrheit"),
    _sentence("Er", "sagte", "sagen", "Past", "3", "Sing", "Antwort"),
    _sentence("Sie", "sagen", "sagen", "Pres", "3", "Plur", "Namen"),
    _sentence("Er", "ist", "sein", "Pres", "3", "Sing", "Lehrer", "AUX"),
    _sentence("Sie", "waren", "sein", "Past", "3", "Plur", "Freunde", "AUX"),
    # a contraction holding a verb: "geht's" = "geht" + "'s", a surface word of the text
    ("Wie geht's dir?", [_w("Wie", "wie", "ADV"),
                         ("range", "geht's", [_w("geht", "gehen", "VERB", VERB.format(t="Pres", p="3", n="Sing")),
                                              _w("'s", "es", "PRON")], True),
                         _w("dir", "du", "PRON", space=False), _w("?", "?", "PUNCT")]),
]
TEST = [
    _sentence("Du", "gehst", "gehen", "Pres", "2", "Sing", "Hause"),
    _sentence("Sie", "gingen", "gehen", "Past", "3", "Plur", "Schule"),
    _sentence("Ihr", "sagt", "sagen", "Pres", "2", "Plur", "Wahrheit"),
    _sentence("Ich", "sagte", "sagen", "Past", "1", "Sing", "Antwort"),
    # a contraction without a verb: "zum" = "zu dem", the verb after it is still the text's third word
    ("Er geht zum Markt.", [_w("Er", "er", "PRON"), _w("geht", "gehen", "VERB", VERB.format(t="Pres", p="3", n="Sing")),
                            ("range", "zum", [_w("zu", "zu", "ADP"), _w("dem", "der", "DET")], True),
                            _w("Markt", "markt", "NOUN", space=False), _w(".", ".", "PUNCT")]),
    _sentence("Es", "ist", "sein", "Pres", "3", "Sing", "kalt", "AUX"),
]


@pytest.fixture
def ud(tmp_path):
    train, test = tmp_path / "dev.conllu", tmp_path / "test.conllu"
    train.write_text(_conllu(TRAIN), encoding="utf-8")
    test.write_text(_conllu(TEST), encoding="utf-8")
    return train, test


# --- fast: no model ------------------------------------------------------------------------------------------------

def test_verbs_are_found_in_the_text_contractions_as_written(ud):
    train, test = ud
    texts, verbs, without = vp.ud_verbs(read_conllu(str(train)))
    assert without == 0 and len(verbs) == 9 and texts[8] == "Wie geht's dir?"
    assert [(v.sentence, v.word, v.form, v.lemma) for v in verbs[:2]] == [(0, 1, "geht", "gehen"), (1, 1, "ging", "gehen")]
    # the verb inside "geht's" has the surface word's state (word 1 of the text); the pronoun is no verb
    assert (verbs[8].sentence, verbs[8].word, verbs[8].form, verbs[8].upos) == (8, 1, "geht", "VERB")
    assert verbs[8].feats == {"VerbForm": "Fin", "Tense": "Pres", "Person": "3", "Number": "Sing", "Mood": "Ind"}
    assert {v.upos for v in verbs} == {"VERB", "AUX"}
    _, test_verbs, _ = vp.ud_verbs(read_conllu(str(test)))
    assert [(v.sentence, v.word) for v in test_verbs] == [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]


def test_lexeme_probe_nearest_other_form_of_the_same_lemma():
    forms = ["ging", "geht", "ging", "sagt", "sagte", "ist", "kam", "kam", "kommt"]
    lemmas = ["gehen", "gehen", "gehen", "sagen", "sagen", "sein", "kommen", "kommen", "kommen"]
    vectors = [[1, 0, 0, 0], [0.9, 0.1, 0, 0], [1, 0.01, 0, 0],   # the two "ging" nearest each other: excluded
               [0, 1, 0, 0], [0.1, 0.9, 0, 0],
               [0.7, 0.7, 0, 0],                                 # "sein": one token, no query
               [0, 0, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1]]         # "kam" twice, "kommt" orthogonal to both
    r = vp.lexeme_probe(np.array(vectors, dtype=float), lemmas, forms)
    # queries: the gehen and sagen tokens (5) and the kommen tokens (3); "ist" has no other form of its lemma
    assert r["queries"] == 8 and r["lemmas"] == 3
    # ging(0) -> geht, geht -> ging(2), ging(2) -> geht, sagt <-> sagte: right (without the exclusion ging(0)
    # would find ging(2)); kam -> every other form at cosine 0: the tie goes to the first, ging: wrong; kommt the same
    assert r["correct"] == 5 and r["rate"] == pytest.approx(5 / 8)
    # chance: each query's share of candidates (all other forms) with its lemma
    n = len(forms)
    expected = []
    for i in range(n):
        allowed = [j for j in range(n) if forms[j] != forms[i]]
        good = [j for j in allowed if lemmas[j] == lemmas[i]]
        if good:
            expected.append(len(good) / len(allowed))
    assert r["chance"] == pytest.approx(np.mean(expected))
    # forms compare case-folded: "Geht" is "geht"'s form, so neither is a query of the other; chunks change nothing
    r2 = vp.lexeme_probe(np.array([[1, 0], [1, 0.1], [0, 1]]), ["gehen"] * 3, ["Geht", "geht", "ging"])
    assert r2["queries"] == 3 and r2["correct"] == 3
    assert vp.lexeme_probe(np.array(vectors, dtype=float), lemmas, forms, chunk=2) == r
    none = vp.lexeme_probe(np.zeros((2, 3)), ["a", "b"], ["x", "y"])
    assert none == {"queries": 0, "correct": 0, "rate": None, "chance": None, "lemmas": 0}
    assert vp.lexeme_probe(np.zeros((0, 3)), [], []) == none   # no verbs at all


def test_feature_probe_majority_and_cross_validated_c():
    rng = np.random.default_rng(0)
    labels = ["Ind"] * 12 + ["Sub"] * 6 + ["Imp"] * 2
    centres = {"Ind": [3, 0], "Sub": [0, 3], "Imp": [-3, -3]}
    x = np.array([centres[y] for y in labels]) + rng.normal(0, 0.3, (len(labels), 2))
    test_y = ["Sub", "Sub", "Ind", "Imp"]
    test_x = np.array([centres[y] for y in test_y], dtype=float)
    r = vp.feature_probe(x, labels, test_x, test_y)
    assert r["n_train"] == 20 and r["n_test"] == 4 and r["labels"] == 3
    assert r["majority_label"] == "Ind" and r["majority"] == pytest.approx(1 / 4)
    assert r["majority_macro_f1"] == pytest.approx((2 * 1 * 0.25 / 1.25) / 3)   # Ind: P 1/4, R 1; Sub, Imp: 0
    assert r["accuracy"] == 1.0 and r["macro_f1"] == 1.0
    assert r["C"] in vp.CS and r["cv_folds"] == 5
    # one value to learn: the majority is the probe; a tie goes to the first value in sorted order
    one = vp.feature_probe(x[:3], ["Ind"] * 3, test_x, test_y)
    assert one["C"] is None and one["accuracy"] == one["majority"] == pytest.approx(1 / 4)
    assert vp.majority_label(["Sub", "Ind", "Sub", "Ind"]) == "Ind"
    # fewer of the largest class than folds: fewer folds; no test verbs: counts and no scores
    assert vp.feature_probe(x[[0, 1, 12, 13]], ["Ind", "Ind", "Sub", "Sub"], test_x, test_y)["cv_folds"] == 2
    empty = vp.feature_probe(x, labels, test_x[:0], [])
    assert empty["n_test"] == 0 and empty["accuracy"] is None and empty["majority"] is None


def test_malformed_conllu_is_one_line_and_no_output(ud, tmp_path, capsys):
    train, test = ud
    lm, checkpoint = tmp_path / "lm", tmp_path / "checkpoint.pt"
    lm.mkdir()
    checkpoint.write_bytes(b"")
    lines = test.read_text(encoding="utf-8").split("\n")
    lines[3] = lines[3].replace("\t", " ", 2)   # a word line of sentence 1 with too few columns
    test.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "probe.json"
    args = ["--checkpoint", str(checkpoint), "--lm-data", str(lm), "--train-conllu", str(train),
            "--test-conllu", str(test), "--output", str(out)]
    assert run_main(vp.main, args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{test}:4:" in err and "10 tab-separated columns" in err, err
    assert not out.exists()
    for wrong, message in ((["--train-conllu", str(tmp_path / "none.conllu")], "not found"),
                           (["--checkpoint", str(tmp_path / "none.pt")], "--checkpoint not found"),
                           (["--random-seeds", "-1"], "--random-seeds")):
        fixed = dict(zip(args[::2], args[1::2]))
        fixed[wrong[0]] = wrong[1]
        fixed["--test-conllu"] = str(train)
        assert run_main(vp.main, [x for kv in fixed.items() for x in kv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()


# --- slow: a tiny pretrained model ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """(binarize --lm folder, checkpoint): German Multi30k, 400 lines, vocabulary 500, 10 tiny updates."""
    from train_scripts.binarize import binarize

    root = tmp_path_factory.mktemp("verb_probe")
    raw = multi30k_slice(root / "raw", 400, 20, 10)
    lm, save = root / "lm", root / "ckpt"
    binarize({"scheme": "spaces", "vocab_size": 500}, str(raw), str(lm), "de", None, lm=True)
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", save, "--tiny",
                 "--max-update", "10", "--validate-interval-updates", "10", "--no-epoch-checkpoints"])
    return lm, save / "checkpoint_last.pt"


@pytest.mark.slow
def test_probe_end_to_end_on_a_tiny_model(lm, ud, tmp_path):
    from train_scripts import pseudo_perplexity as pp
    from train_scripts.binarize import read_record

    lm_dir, checkpoint = lm
    train, test = ud
    out = tmp_path / "probe.json"
    assert run_main(vp.main, ["--checkpoint", str(checkpoint), "--lm-data", str(lm_dir), "--train-conllu",
                              str(train), "--test-conllu", str(test), "--random-seeds", "2", "--batch-size", "3",
                              "--output", str(out)]) == 0
    r = json.loads(out.read_text())
    assert set(r["features"]) == {"VerbForm", "Tense", "Person", "Number", "Mood"}
    assert r["words_per_sentence_mismatch"] == 0 and r["verbs_without_word"] == 0 and r["verbs_truncated"] == 0
    assert r["sentences"] == {"train": 9, "test": 6} and r["verbs"] == r["verbs_used"] == {"train": 9, "test": 6}
    tense = r["features"]["Tense"]
    # dev: Pres 6 (geht, gehen, sage, sagen, ist, geht's), Past 3 -> Pres; test: Pres 4 of 6
    assert tense["n_train"] == 9 and tense["n_test"] == 6 and tense["majority_label"] == "Pres"
    assert tense["majority"] == pytest.approx(4 / 6) and 0 <= tense["accuracy"] <= 1 and tense["C"] in vp.CS
    mood = r["features"]["Mood"]   # one value everywhere: the majority is the probe
    assert mood["labels"] == 1 and mood["C"] is None and mood["accuracy"] == mood["majority"] == 1.0
    # test: gehst/gingen/geht (gehen), sagt/sagte (sagen) are queries; "ist" is alone
    assert r["lexeme"]["queries"] == 5 and r["lexeme"]["lemmas"] == 2 and 0 <= r["lexeme"]["rate"] <= 1
    assert r["lexeme"]["chance"] == pytest.approx(np.mean([2 / 5, 2 / 5, 2 / 5, 1 / 5, 1 / 5]))
    assert [x["seed"] for x in r["random"]] == [1, 2]
    assert all(set(x) == {"seed", "features", "lexeme"} and x["lexeme"]["queries"] == 5 for x in r["random"])
    assert r["scheme"] == "spaces" and r["metric"] == "accuracy"
    # the word states: each word's mean over its pieces of the frozen encoder's last layer, batching aside
    info = read_record(str(lm_dir))
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(info["data_bin"][0], os.path.join(tmp, "input0"))
        model, dictionary = vp.load_encoder(str(checkpoint), tmp)
    row = pp.RowEncoder(info)
    texts, _, _ = vp.ud_verbs(read_conllu(str(test)))
    encoded, counts = vp.encode_texts(row, dictionary, texts, int(model.max_positions()) - 2)
    assert counts["mismatch"] == 0
    batched = vp.word_states(model, dictionary, encoded, batch=4)
    for text, (ids, words, kept), states in zip(texts, encoded, batched):
        with torch.no_grad():
            alone = model(torch.tensor([ids]), features_only=True)[0][0, 1:-1]
        assert states.shape == (kept, alone.shape[1]) and kept == len(text.split())
        for w in range(kept):
            mean = alone[[k for k, x in enumerate(words) if x == w]].double().mean(0).numpy()
            assert np.allclose(states[w], mean, atol=1e-5)
    # deterministic: the same pretrained record again
    again = vp.verb_probe(str(checkpoint), str(lm_dir), str(train), str(test), random_seeds=1)
    assert again["features"] == r["features"] and again["lexeme"] == r["lexeme"]
    assert again["random"][0] == r["random"][0]
