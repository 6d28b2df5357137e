"""What the pretraining part measures with, apart from the models: the in-domain corpus and its leakage rules
(train_scripts/demo/pretraining/corpus.py), the character n-gram floor (train_scripts/ngram_floor.py) and the probe's
classifier (train_scripts/probe.py)."""
import csv

import pytest

from train_scripts import ngram_floor, probe
from train_scripts.demo.pretraining import corpus as lm_corpus


def _csv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture()
def sets(tmp_path):
    """A made-up ArXiv folder and Superbizarre folder, with one leak of each kind."""
    flota, sb = tmp_path / "flota", tmp_path / "sb"
    flota.mkdir()
    sb.mkdir()
    for area in lm_corpus.ARXIV_AREAS:
        for size in ("1e+02", "1e+03"):
            for split in ("dev", "test"):
                _csv(flota / f"arxiv_{area}_{size}_{split}.csv", ["text", "label"],
                     [[f"held out {area} {size} {split} title", 0]])
        _csv(flota / f"arxiv_{area}_1e+03_train.csv", ["text", "label"], [
            [f"a {area} title about spin chains", 0],
            [f"held  out {area} 1e+02 test title", 1],                  # = an ArXiv-S test title (spacing aside)
            [f"semithermal, transport in {area}", 0],                  # a Superbizarre test derivative, punctuated
            [f"{area} on hyper-cyberized graphs", 1],                  # a dev derivative inside a hyphenated word
            [f"autoencoded {area} models", 1],                          # a training derivative: kept
        ])
    _csv(sb / "arxiv_train.csv", ["derivative", "score", "label"], [["autoencoded", 1.0, 1]])
    _csv(sb / "arxiv_dev.csv", ["derivative", "score", "label"], [["cyberized", 1.0, 1]])
    _csv(sb / "arxiv_test.csv", ["derivative", "score", "label"], [["Semithermal", 1.0, 0]])
    return flota, sb


def test_arxiv_leakage_rules_and_counts(sets, tmp_path):
    flota, sb = sets
    titles, counts = lm_corpus.arxiv_titles(flota, sb)
    assert counts["titles"] == 15 and counts["removed_heldout_title"] == 3
    assert counts["removed_superbizarre_word"] == 6 and counts["removed_superbizarre_stem"] == 0
    assert counts["kept"] == 6 == len(titles)
    assert all("held out" not in t and "semithermal" not in t and "cyberized" not in t for t in titles)
    assert sum("autoencoded" in t for t in titles) == 3       # training derivatives are not a leak
    out = lm_corpus.prepare_corpus(["arxiv"], tmp_path / "raw", 0, valid_every=3, flota_data=flota,
                                   superbizarre=sb)
    assert out["leakage"] == counts
    assert out["train"]["documents"] + out["valid"]["documents"] == 6            # one title per document
    text = (tmp_path / "raw" / "train.en").read_text() + (tmp_path / "raw" / "valid.en").read_text()
    assert sorted(line for line in text.splitlines() if line) == sorted(titles)


def test_leakage_rule_2_by_stem(tmp_path):
    """Issue 53: rule 2 matched whole words only and missed inflected and hyphenated forms of dev/test derivatives
    ("semirings" for "semiring", "device-free" for "devicefree"); they are now removed and counted apart. The
    derivatives are not stemmed, nor matched inside words: a title with their base ("minimal" for "minimales") or
    a word they are a piece of ("nonlinear" for "nonlin") is kept."""
    flota, sb = tmp_path / "flota", tmp_path / "sb"
    flota.mkdir()
    sb.mkdir()
    for area in lm_corpus.ARXIV_AREAS:
        for size in ("1e+02", "1e+03"):
            for split in ("dev", "test"):
                _csv(flota / f"arxiv_{area}_{size}_{split}.csv", ["text", "label"], [[f"held out {area}", 0]])
        _csv(flota / f"arxiv_{area}_1e+03_train.csv", ["text", "label"], [
            [f"circuit evaluation for finite semirings in {area}", 0],
            [f"device-free localization in {area}", 1],
            ["minimal models of nonlinear chains", 0],                   # must be kept
            [f"semiring theory in {area}", 1]])
    _csv(sb / "arxiv_train.csv", ["derivative", "score", "label"], [["autoencoded", 1.0, 1]])
    _csv(sb / "arxiv_dev.csv", ["derivative", "score", "label"], [["devicefree", 1.0, 1], ["minimales", 1.0, 0]])
    _csv(sb / "arxiv_test.csv", ["derivative", "score", "label"], [["semiring", 1.0, 1], ["nonlin", 1.0, 0]])
    assert {"semiring", "devicefree", "device", "free"} <= lm_corpus.stem_forms("finite semirings, device-free")
    assert "clas" not in lm_corpus.stem_forms("class") and "modell" in lm_corpus.stem_forms("modelling")
    titles, counts = lm_corpus.arxiv_titles(flota, sb)
    assert counts["removed_superbizarre_word"] == 3            # "semiring theory ..." as a whole word, as before
    assert counts["removed_superbizarre_stem"] == 6            # "semirings" and "device-free", in each area
    assert titles == ["minimal models of nonlinear chains"] * 3 and counts["kept"] == 3


def test_corpus_sources_mix_and_fail_in_one_line(sets, tmp_path):
    flota, sb = sets
    english = tmp_path / "english.txt"
    english.write_text("one line\nof a document\n\nanother document\n", encoding="utf-8")
    out = lm_corpus.prepare_corpus(["arxiv", english], tmp_path / "mixed", 0, valid_every=100, flota_data=flota,
                                   superbizarre=sb)
    assert out["train"]["documents"] + out["valid"]["documents"] == 6 + 2   # the first document is validation text
    mixed = (tmp_path / "mixed" / "train.en").read_text() + (tmp_path / "mixed" / "valid.en").read_text()
    assert "one line\nof a document" in mixed and "spin chains" in mixed
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe broken\n")
    with pytest.raises(Exception, match=r"bad\.txt"):
        lm_corpus.prepare_corpus([bad], tmp_path / "x", 0)
    with pytest.raises(Exception, match="does not exist"):
        lm_corpus.prepare_corpus([tmp_path / "missing"], tmp_path / "y", 0)


def test_real_arxiv_corpus_holds_no_evaluation_text(shared_path):
    flota, sb = shared_path("flota_arxiv"), shared_path("superbizarre")
    titles, counts = lm_corpus.arxiv_titles(flota, sb)
    assert counts["kept"] + counts["removed_heldout_title"] + counts["removed_superbizarre_word"] + \
        counts["removed_superbizarre_stem"] == counts["titles"]
    # rule 2 by stem on the shared data: 319 titles more than the whole-word rule's 1,416 (issue 53)
    assert (counts["removed_superbizarre_word"], counts["removed_superbizarre_stem"]) == (1416, 319)
    heldout = {t for a in lm_corpus.ARXIV_AREAS for size in ("1e+02", "1e+03") for split in ("dev", "test")
               for t in lm_corpus._csv_texts(flota / f"arxiv_{a}_{size}_{split}.csv")}
    words = {w.lower() for split in ("dev", "test") for w in lm_corpus._csv_texts(sb / f"arxiv_{split}.csv")}
    assert not set(titles) & heldout
    assert not any(lm_corpus.title_words(t) & words for t in titles)
    assert not any(lm_corpus.stem_forms(t) & words for t in titles)


def test_floor_learns_character_ngrams_and_uses_the_given_rows(tmp_path):
    train = [(f"{p}thermal", "0") for p in ("semi", "anti", "hyper", "micro")] + \
            [(f"{p}coded", "1") for p in ("auto", "re", "pre", "de")]
    dev = [("nonthermal", "0"), ("uncoded", "1")]
    test = [("megathermal", "0"), ("transcoded", "1")]
    r = ngram_floor.char_ngram_floor(train, dev, {"test": test})
    assert r["test"]["accuracy"] == 1.0 and r["alpha"] in ngram_floor.ALPHAS and r["train_rows"] == 8
    prefix = tmp_path / "set"
    for split, rows in (("train", train), ("dev", dev), ("test", test)):
        _csv(f"{prefix}_{split}.csv", ["derivative", "score", "label"], [[t, 1.0, y] for t, y in rows])
    # the first 2 training rows (both class 0): the floor cannot know class 1
    small = ngram_floor.floor_for_csv(str(prefix), 2, 0)
    assert small["train_rows"] == 2 and small["test"]["accuracy"] == 0.5


def test_matched_floor_counts_the_pieces_of_a_prepared_folder(tmp_path):
    """The Naive Bayes over a segmentation's own pieces: a test title whose pieces were all seen is classified by
    them; with the spaces dropped (the noisy copy) its one piece is unseen, so only the class prior is left (a tie:
    the first class), where character n-grams would still see "thermal" and "coded"."""
    train = [("▁semi thermal", "0"), ("▁anti thermal", "0"), ("▁auto coded", "1"), ("▁re coded", "1")]
    dev = [("▁non thermal", "0"), ("▁un coded", "1")]
    test = [("▁mega thermal", "0"), ("▁trans coded", "1")]
    noisy = [("▁megathermal", "0"), ("▁transcoded", "1")]
    for sub, rows in (("train", train), ("valid", dev), ("test", test), ("test1", noisy)):
        for folder, column, suffix in (("tok", 0, "input0"), ("raw", 1, "label")):
            (tmp_path / folder).mkdir(exist_ok=True)
            (tmp_path / folder / f"{sub}.{suffix}").write_text("".join(r[column] + "\n" for r in rows),
                                                               encoding="utf-8")
    r = ngram_floor.piece_floor_for_data(str(tmp_path), "macro_f1")
    assert r["features"] == "pieces" and r["train_rows"] == 4 and r["alpha"] in ngram_floor.ALPHAS
    assert r["dev"]["macro_f1"] == r["test"]["macro_f1"] == r["test"]["accuracy"] == 1.0
    # both noisy titles predicted "0": class 0 F1 2/3, class 1 F1 0
    assert r["test_noisy"]["accuracy"] == 0.5 and r["test_noisy"]["macro_f1"] == pytest.approx(1 / 3)
    chars = ngram_floor.char_ngram_floor(train, dev, {"test_noisy": noisy}, "macro_f1")
    assert chars["test_noisy"]["accuracy"] == 1.0
    # without a noisy copy in the folder: the clean test only
    (tmp_path / "tok" / "test1.input0").unlink()
    assert "test_noisy" not in ngram_floor.piece_floor_for_data(str(tmp_path))


def test_probe_classifier_picks_c_on_dev():
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 4))
    y = [str(int(v > 0)) for v in x[:, 0]]
    r = probe.fit_and_score(x[:100], y[:100], x[100:150], y[100:150], x[150:], y[150:])
    assert r["C"] in probe.CS and r["test"]["accuracy"] > 0.9


@pytest.mark.parametrize("content", [b"a b\n", b"PK\x03\x04truncated"])
def test_probe_refuses_a_broken_checkpoint_in_one_line(tmp_path, content):
    ckpt = tmp_path / "checkpoint_last.pt"
    ckpt.write_bytes(content)
    with pytest.raises(Exception, match=r"cannot read checkpoint .*checkpoint_last\.pt") as err:
        probe.load_encoder(str(ckpt), str(tmp_path))
    assert type(err.value).__name__ == "UserError" and "\n" not in str(err.value)
