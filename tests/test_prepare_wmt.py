"""fairseq's prepare-wmt14en2de Moses steps (train_scripts/prepare_wmt.py) on small synthetic files: no network."""
import json

import pytest

from preprocess.common import UserError
from train_scripts.prepare_wmt import MosesCleaner, keep_pair, prepare


def test_clean_corpus_n_rules():
    assert keep_pair("a  b\tc ", "x y z") == ("a b c", "x y z")  # whitespace collapsed like the perl script
    assert keep_pair("a b c", "x y z w") == ("a b c", "x y z w")  # 4/3 <= 1.5
    assert keep_pair("a b", "x y z w") is None  # 4/2 > 1.5
    assert keep_pair("a b c d", "x y") is None  # either direction
    assert keep_pair("", "x") is None and keep_pair("a", "   ") is None  # empty sides
    assert keep_pair(" ".join("a" * 250), " ".join("b" * 250)) is not None
    assert keep_pair(" ".join("a" * 251), " ".join("b" * 250)) is None  # more than 250 words
    assert keep_pair("a|b c", "x y") == ("ab c", "x y")  # pipes removed (not a factored corpus)
    assert keep_pair("a|b c", "x y", strip_pipes=False) == ("a|b c", "x y")
    assert keep_pair("w" * 1001, "x") is None and keep_pair("w" * 1000, "x") is not None


def test_normalisation_and_non_printing():
    en = MosesCleaner("en")
    # Moses' normalize-punctuation: curly quotes become ", no space before ":"; \p{C} (U+200B, U+0007) -> a space
    assert en("\u201cHello\u201d : world\u200b!\x07end") == '"Hello": world ! end'
    assert en("a\u2028b") == "a b"  # a line separator never splits a line


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_prepare_counts_and_outputs(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    train_en = ["A small house .", "one two", "x" * 5, "\u201cQuoted\u201d text here", "", "same length ok"]
    train_de = ["Ein kleines Haus .", "eins zwei drei vier", "y", "\u201eZitat\u201c Text hier", "leer", "gleich lang ja"]
    _write(raw / "train.en", train_en)
    _write(raw / "train.de", train_de)
    _write(raw / "valid.en", ["a b c d", "ok"])
    _write(raw / "valid.de", ["a", "ok"])
    _write(raw / "test.en", ["a b c d", "", "x"])
    _write(raw / "test.de", ["a", "", "y"])
    counts = prepare(str(raw), str(out), quiet=True)
    # dropped: "one two"/4 words (ratio 2), empty English side; kept 4 of 6
    assert counts["train"] == {"input": 6, "kept": 4, "dropped": 2}
    assert counts["valid"] == {"input": 2, "kept": 1, "dropped": 1}
    assert counts["test"] == {"input": 3, "kept": 3, "dropped": 0}  # newstest2014 is never cleaned
    en = (out / "train.en").read_text(encoding="utf-8").splitlines()
    de = (out / "train.de").read_text(encoding="utf-8").splitlines()
    assert en == ["A small house .", "xxxxx", '"Quoted" text here', "same length ok"]
    assert len(de) == 4 and de[1] == "y" and de[2] == '"Zitat" Text hier'
    assert (out / "test.en").read_text().splitlines() == ["a b c d", "", "x"]
    report = json.loads((out / "prepare.json").read_text())
    assert report["counts"] == counts and report["ratio"] == 1.5 and report["max_len"] == 250


def test_prepare_errors_leave_nothing(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    for split in ("train", "valid", "test"):
        _write(raw / f"{split}.en", ["a", "b"])
        _write(raw / f"{split}.de", ["a", "b"])
    _write(raw / "valid.de", ["a"])
    with pytest.raises(UserError, match="fewer lines"):
        prepare(str(raw), str(out), quiet=True)
    assert not (out / "valid.en").exists() and not list(out.glob(".*.tmp"))
    (raw / "test.de").unlink()
    _write(raw / "valid.de", ["a", "b"])
    with pytest.raises(UserError, match="test.de not found"):
        prepare(str(raw), str(out), quiet=True)


def test_wmt16_from_local_copy_is_cleaned(run_cli, tmp_path):
    """prepare_wmt14_en_de.sh --wmt16 takes News Commentary v11 (the BITE paper) and reports kept/dropped."""
    src = tmp_path / "local"
    for corpus, n in (("europarl-v7.de-en", 3), ("commoncrawl.de-en", 2), ("news-commentary-v11.de-en", 2)):
        (src / corpus).mkdir(parents=True)
        for lang in ("en", "de"):
            lines = [f"{corpus} {lang} {i}" for i in range(n)]
            if corpus.startswith("commoncrawl") and lang == "de":
                lines[1] = "viel zu lang für diese kurze Zeile"  # 7 words against 3: dropped (ratio 1.5)
            _write(src / corpus / f"{corpus}.{lang}", lines)
    for year in (2013, 2014):
        _write(src / f"newstest{year}.en", [f"dev {year}"])
        _write(src / f"newstest{year}.de", [f"dev {year}"])
    out = tmp_path / "wmt"
    proc = run_cli(["bash", "train_scripts/prepare_wmt14_en_de.sh", "--out", out, "--from", src, "--wmt16"])
    assert "train: 7 pairs, kept 6, dropped 1" in proc.stderr
    train = (out / "train.en").read_text().splitlines()
    assert len(train) == 6 and train[-1] == "news-commentary-v11.de-en en 1"
    assert json.loads((out / "prepare.json").read_text())["counts"]["train"]["dropped"] == 1
    # without --wmt16 the v9 corpus is required
    bad = run_cli(["bash", "train_scripts/prepare_wmt14_en_de.sh", "--out", tmp_path / "w2", "--from", src],
                  check=False)
    assert bad.returncode == 2 and "news-commentary-v9.de-en.{en,de} not found" in bad.stderr
