"""The pretraining commands against hostile input, as the encoding path already is: a bad input,
option or output is one line ``error: ...`` and exit status 2, before any work; an input is never replaced by an
output; nothing partial is left.  Commands: morphtok-classification-data, morphtok-lm-filter, morphtok-multiseed,
morphtok-prepare-wikipedia and morphtok-demo's ``--output`` (both parts)."""
from __future__ import annotations

import bz2
import os
import subprocess
import sys

import pytest

from preprocess.cli import run_main
from tests.conftest import REPO, cli_env, require_shared

CSV_HEADER = "derivative,score,label\n"
TRAIN = CSV_HEADER + "".join(f"word{i}ness,1.0,{i % 2}\n" for i in range(8))
DEV = CSV_HEADER + "".join(f"dev{i}ity,0.0,{i % 2}\n" for i in range(4))


def snapshot(folder):
    """Every file under ``folder`` with its bytes: what a refused command must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error(capsys, status, expected_status=2):
    """The command's single stderr line, after checking that it is one ``error: ...`` line and the status."""
    err = capsys.readouterr().err
    assert status == expected_status, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.strip()


# --- morphtok-classification-data prepare ------------------------------------------------------------------------

@pytest.fixture
def lm(tmp_path):
    """A --lm-data path: the CSVs and --out are checked before the pretraining folder is read, so it need not exist
    (a good CSV set then stops at the missing binarize.json, which proves the CSVs passed)."""
    return tmp_path / "no-lm"


def write_csvs(folder, train=TRAIN, dev=DEV, test=DEV, mode="w"):
    folder.mkdir(exist_ok=True)
    for name, text in (("train", train), ("dev", dev), ("test", test)):
        path = folder / f"set_{name}.csv"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return folder / "set"


def prepare(lm, prefix, out, *extra):
    from train_scripts.classification_data import main

    return run_main(main, ["prepare", "--lm-data", str(lm), "--csv-prefix", str(prefix), "--out", str(out),
                           *map(str, extra)])


def assert_refused(capsys, status, csvs, before, out, expected):
    """One error line containing ``expected``, the CSVs as they were, no output folder."""
    err = one_error(capsys, status)
    assert expected in err, err
    assert snapshot(csvs) == before
    assert not out.exists() or snapshot(out) == {}, snapshot(out)
    return err


CSV_CASES = {
    # an invalid byte was a UnicodeDecodeError traceback
    "invalid UTF-8": (TRAIN.encode() + b"caf\xe9ness,1.0,0\n", None,
                      "set_train.csv:10: invalid UTF-8 at byte 3 (invalid continuation byte); save the CSV as UTF-8"),
    "empty file": ("", None, "set_train.csv:1: expected a header with a 'label' column, got an empty file"),
    "header only": (CSV_HEADER, None, "set_train.csv: no rows"),
    "no label column": ("derivative,score\nx,1\n", None,
                        "set_train.csv:1: expected a header with a 'label' column, got 'derivative', 'score'"),
    "label first": ("label,text\n0,x\n", None, "set_train.csv:1: the first column is the text, not 'label'"),
    "missing label": (CSV_HEADER + "x,1.0\n", None, "set_train.csv:2: missing text or label"),
    "unclosed quote": (CSV_HEADER + 'x,1.0,0\n"y,1.0,0\nz,1.0,1\n', None,
                       "set_train.csv:4: missing text or label (a quote opened in this row is never closed?)"),
    "label with a space": (CSV_HEADER + "x,1.0,a b\n", None,
                           "set_train.csv:2: label 'a b' has a space or a line break in it"),
    "label with a line break": (CSV_HEADER + 'x,1.0,"a\nb"\n', None,
                                "set_train.csv:3: label 'a\\nb' has a space or a line break in it"),
    "huge field": (CSV_HEADER + "x" * 200_000 + ",1.0,0\n", None,
                   "set_train.csv:2: not a readable CSV row (field larger than field limit (131072))"),
    "NUL in the header": (b"deri\x00vative,score,label\nx,1,0\n", "ok", None),
    # a test label the training split never has was accepted (three classes from two)
    "unseen test label": (TRAIN, "test", "set_test.csv:4: label '2' is not in the training split"),
    "unseen dev label": (TRAIN, "dev", "set_dev.csv:4: label '2' is not in the training split"),
}


@pytest.mark.parametrize("case", [c for c, v in CSV_CASES.items() if v[2]])
def test_bad_csv_is_one_line_and_writes_nothing(case, lm, tmp_path, capsys):
    train, where, expected = CSV_CASES[case]
    unseen = CSV_HEADER + "a,0,0\nb,0,1\nc,0,2\nd,0,1\n"    # label 2 on line 4
    prefix = write_csvs(tmp_path / "csv", train=train, dev=unseen if where == "dev" else DEV,
                        test=unseen if where == "test" else DEV)
    before, out = snapshot(tmp_path / "csv"), tmp_path / "out"
    err = assert_refused(capsys, prepare(lm, prefix, out), tmp_path / "csv", before, out, expected)
    assert str(tmp_path / "csv") in err   # the file is named by its path


def test_labels_are_checked_against_the_whole_training_csv(lm, tmp_path, capsys):
    """The first --max-rows rows of a shuffled many-class set may lack a class the dev rows have (the FLOTA ArXiv
    sets at 40 rows): accepted, the training CSV has it; a label the whole training CSV lacks is an error, and a bad
    row after --max-rows too."""
    train = CSV_HEADER + "a,0,0\nb,0,0\nc,0,1\n"
    prefix = write_csvs(tmp_path / "csv", train=train, dev=CSV_HEADER + "d,0,0\ne,0,1\n", test=CSV_HEADER + "f,0,0\n")
    err = one_error(capsys, prepare(lm, prefix, tmp_path / "out", "--max-rows", 2))
    assert err.startswith("error: no binarize.json")   # the CSVs passed
    prefix = write_csvs(tmp_path / "csv", train=train, dev=CSV_HEADER + "d,0,0\ne,0,2\n", test=CSV_HEADER + "f,0,0\n")
    before, out = snapshot(tmp_path / "csv"), tmp_path / "out"
    assert_refused(capsys, prepare(lm, prefix, out, "--max-rows", 2), tmp_path / "csv", before, out,
                   f"set_dev.csv:3: label '2' is not in the training split {prefix}_train.csv, which has 0, 1")
    prefix = write_csvs(tmp_path / "csv", train=train + "g,0\n")
    assert_refused(capsys, prepare(lm, prefix, out, "--max-rows", 2), tmp_path / "csv", snapshot(tmp_path / "csv"),
                   out, "set_train.csv:5: missing text or label")


def test_csv_text_with_control_characters_keeps_its_rows(tmp_path):
    """Line breaks inside a quoted text, a BOM, \\r\\n line ends, NUL and U+2028: one row each, one line each."""
    from preprocess.common import LINE_BREAKING
    from train_scripts.classification_data import read_csv

    text = ('\ufeffderivative,score,label\r\n"two\nlines",1.0,0\r\nnul\x00byte,1.0,1\r\n'
            'sep\u2028ara\x0bted,0.0, 1 \r\n"a ""quoted"", with comma",0,0\r\n')
    path = tmp_path / "c.csv"
    path.write_text(text, encoding="utf-8", newline="")
    rows = read_csv(str(path))
    assert [label for _, label in rows] == ["0", "1", "1", "0"]
    assert rows[0][0] == "two lines" and rows[2][0] == "sep ara ted" and rows[3][0] == 'a "quoted", with comma'
    assert not any(ch in t for t, _ in rows for ch in LINE_BREAKING)
    assert rows.lines == [3, 4, 5, 6]   # a row's line is where it ends
    two = read_csv(str(path), max_rows=2)
    assert two == rows[:2] and two.lines == [3, 4] and two.labels == rows.labels == {"0", "1"}


def test_good_csvs_pass_the_checks(lm, tmp_path, capsys):
    prefix = write_csvs(tmp_path / "csv", train=TRAIN.replace("\n", "\r\n"))
    err = one_error(capsys, prepare(lm, prefix, tmp_path / "out"))
    assert err.startswith(f"error: no binarize.json at {lm}") and not (tmp_path / "out").exists()


def test_csv_missing_or_a_folder(lm, tmp_path, capsys):
    prefix = write_csvs(tmp_path / "csv")
    (tmp_path / "csv" / "set_test.csv").unlink()
    out = tmp_path / "out"
    assert_refused(capsys, prepare(lm, prefix, out), tmp_path / "csv", snapshot(tmp_path / "csv"), out,
                   f"CSV not found: {prefix}_test.csv")
    (tmp_path / "csv" / "set_test.csv").mkdir()
    assert_refused(capsys, prepare(lm, prefix, out), tmp_path / "csv", snapshot(tmp_path / "csv"), out,
                   f"CSV is a directory, not a file: {prefix}_test.csv")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_unreadable_csv(lm, tmp_path, capsys):
    prefix = write_csvs(tmp_path / "csv")
    (tmp_path / "csv" / "set_dev.csv").chmod(0)
    out = tmp_path / "out"
    err = one_error(capsys, prepare(lm, prefix, out))
    assert "is not readable (permission denied)" in err and not out.exists()


def test_classification_out_folder(lm, tmp_path, capsys):
    prefix = write_csvs(tmp_path / "csv")
    before = snapshot(tmp_path / "csv")
    out = tmp_path / "out.txt"
    out.write_text("keep me\n")
    err = one_error(capsys, prepare(lm, prefix, out))
    assert err == f"error: --out {out} is a file, not a folder" and out.read_text() == "keep me\n"
    err = one_error(capsys, prepare(lm, prefix, out / "sub"))
    assert err.startswith(f"error: cannot write --out file {out}/sub/classification.json: {out} is a file")
    lm.mkdir()
    (lm / "binarize.json").write_text("{}")
    os.symlink(lm, tmp_path / "link")   # the same folder under another name
    err = one_error(capsys, prepare(lm, prefix, tmp_path / "link"))
    assert err == f"error: --out {tmp_path}/link is the --lm-data folder: give the fine-tuning data its own folder"
    assert snapshot(lm) == {"binarize.json": b"{}"}
    err = one_error(capsys, prepare(lm, prefix, tmp_path / "o", "--max-rows", -1))
    assert err.startswith("error: --max-rows") and err.endswith("must be 0 (all) or more, not -1")
    assert not (tmp_path / "o").exists()
    assert snapshot(tmp_path / "csv") == before


def test_console_script_invalid_byte(lm, tmp_path):
    """Item 9.1 through the installed console script (python -m where it is not installed): no traceback."""
    prefix = write_csvs(tmp_path / "csv", dev=DEV.encode() + b"bad\xff,0,1\n")
    exe = os.path.join(os.path.dirname(sys.executable), "morphtok-classification-data")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "train_scripts.classification_data"]
    proc = subprocess.run([*cmd, "prepare", "--lm-data", str(lm), "--csv-prefix", str(prefix),
                           "--out", str(tmp_path / "out")], cwd=REPO, env=cli_env(), capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr == (
        f"error: {prefix}_dev.csv:6: invalid UTF-8 at byte 3 (invalid start byte); save the CSV as UTF-8\n")
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


# --- morphtok-lm-filter ------------------------------------------------------------------------------------------

@pytest.fixture
def models():
    return [str(require_shared("space_models/unigram_prime.model")), str(require_shared("space_models/bpe_prime.model"))]


def lm_filter(*args):
    from train_scripts.lm_filter import main

    return run_main(main, [str(a) for a in args])


def filter_args(src, out, models, *extra):
    return ["--input", src, "--output", out, *[a for m in models for a in ("--model", m)], *extra]


@pytest.mark.parametrize("how", ["same path", "relative path", "symlink", "hard link"])
def test_lm_filter_refuses_to_replace_its_input(how, models, tmp_path, capsys, monkeypatch):
    """Item 9.3: --output equal to --input rewrote the input; the same file under another name too."""
    src = tmp_path / "raw.en"
    src.write_text("A short sentence.\n" + "word " * 600 + "\nAnother one.\n")
    before = snapshot(tmp_path)
    out = {"same path": src, "relative path": "./raw.en", "symlink": tmp_path / "link.en",
           "hard link": tmp_path / "hard.en"}[how]
    if how == "symlink":
        os.symlink(src, out)
    elif how == "hard link":
        os.link(src, out)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    err = one_error(capsys, lm_filter(*filter_args(src, out, models)))
    assert err == f"error: --output {out} is the same file as --input {src}: refusing to overwrite it"
    assert snapshot(tmp_path) == before   # no temporary file either


def test_lm_filter_refuses_a_model_as_output(models, tmp_path, capsys):
    src, model = tmp_path / "raw.en", tmp_path / "m.model"
    src.write_text("x\n")
    model.write_bytes(open(models[0], "rb").read())
    before = snapshot(tmp_path)
    err = one_error(capsys, lm_filter(*filter_args(src, model, [str(model)])))
    assert "--output" in err and "is the same file as --model" in err and snapshot(tmp_path) == before


def test_lm_filter_bad_inputs(models, tmp_path, capsys):
    src, out = tmp_path / "raw.en", tmp_path / "out" / "kept.en"
    src.write_bytes(b"fine\ncaf\xe9\nfine too\n")
    before = snapshot(tmp_path)
    err = one_error(capsys, lm_filter(*filter_args(src, out, models)))
    assert err == (f"error: {src}:2: invalid UTF-8 at byte 3 (unexpected end of data); fix the input or pass "
                   "--errors replace")
    assert snapshot(tmp_path) == before and not out.exists()
    # the documented fallback: U+FFFD, no line lost
    assert lm_filter(*filter_args(src, out, models, "--errors", "replace")) == 0
    assert out.read_text(encoding="utf-8") == "fine\ncaf\ufffd\nfine too\n"
    capsys.readouterr()
    for bad, expected in ((tmp_path / "nope.en", "--input not found"), (tmp_path, "--input is a directory")):
        err = one_error(capsys, lm_filter(*filter_args(bad, tmp_path / "o.en", models)))
        assert expected in err and not (tmp_path / "o.en").exists()
    err = one_error(capsys, lm_filter(*filter_args(src, tmp_path / "out", models)))
    assert err == f"error: --output is a directory: {tmp_path / 'out'}; give a file name"
    err = one_error(capsys, lm_filter(*filter_args(src, src / "x.en", models)))
    assert err == f"error: cannot write --output {src}/x.en: {src} is a file, not a directory"
    err = one_error(capsys, lm_filter(*filter_args(src, tmp_path / "o.en", [str(src)])))
    assert "not a valid SentencePiece model" in err and not (tmp_path / "o.en").exists()


def test_lm_filter_odd_lines_are_kept_whole(models, tmp_path, capsys):
    """Empty input, control characters, \\r\\n, a huge line without a final newline: every line is judged once and
    the kept ones are written as they were."""
    src, out = tmp_path / "raw.en", tmp_path / "kept.en"
    src.write_text("")
    assert lm_filter(*filter_args(src, out, models)) == 0 and out.read_text() == ""
    assert "0 sentences, kept 0" in capsys.readouterr().err
    lines = ["a\rb", "nul\x00here", "tab\tand\x0bvt", "line\u2028sep", "", "\x85next", "word " * 100_000]
    src.write_bytes("\n".join(lines).encode("utf-8"))
    assert lm_filter(*filter_args(src, out, models)) == 0
    assert out.read_bytes().decode("utf-8").split("\n") == [*lines[:-1], ""]
    assert "7 sentences, kept 6, removed 1" in capsys.readouterr().err


# --- morphtok-multiseed ------------------------------------------------------------------------------------------

def multiseed(*args):
    from train_scripts.multiseed import main

    return run_main(main, [str(a) for a in args])


def test_multiseed_out_is_a_file(tmp_path, capsys):
    out = tmp_path / "seeds"
    out.write_text("keep me\n")
    for args in (["--report-only"], ["--csv-prefix", "x", "--scheme", "a", "p.pt", "lm"]):
        err = one_error(capsys, multiseed("--out", out, *args))
        assert err == f"error: --out {out} is a file, not a folder" and out.read_text() == "keep me\n"
    (tmp_path / "o" / "multiseed.json").mkdir(parents=True)   # found before any run, not after all of them
    err = one_error(capsys, multiseed("--out", tmp_path / "o", "--csv-prefix", "x", "--scheme", "a", "p.pt", "lm"))
    assert err == f"error: report is a directory: {tmp_path}/o/multiseed.json; give a file name"
    assert os.listdir(tmp_path / "o") == ["multiseed.json"]


@pytest.mark.parametrize("content, expected", [
    (b'{"accuracy": 0.7', "not valid JSON"),
    (b"", "not valid JSON"),
    (b'{"accuracy": "\xff"}', "invalid UTF-8 at byte 14"),
    (b"[0.7]", "expected a JSON object of scores, not list"),
    (b'{"accuracy": "high"}', "accuracy is 'high', not a number"),
    (b'{"accuracy": NaN}', "accuracy is nan, not a number"),
    (b'{"macro_f1": 0.5}', "has no 'accuracy' (has macro_f1)"),
])
def test_multiseed_bad_scores_file(content, expected, tmp_path, capsys):
    out = tmp_path / "seeds"
    for seed in (1, 2):
        (out / "a" / f"seed{seed}").mkdir(parents=True)
        (out / "a" / f"seed{seed}" / "test_scores.json").write_text('{"accuracy": 0.5}')
    (out / "a" / "seed2" / "test_scores.json").write_bytes(content)
    before = snapshot(out)
    err = one_error(capsys, multiseed("--out", out, "--report-only"))
    assert err.startswith(f"error: {out}/a/seed2/test_scores.json") and expected in err, err
    assert snapshot(out) == before   # no multiseed.json


# --- morphtok-prepare-wikipedia -----------------------------------------------------------------------------------

PAGE = ("<page><title>T{i}</title><ns>0</ns><id>{i}</id><revision><id>{i}</id><text>Sentence number {i} is here. "
        "Another sentence follows it.</text></revision></page>\n")


def dump_text(n=30):
    return "<mediawiki>\n" + "".join(PAGE.format(i=i) for i in range(1, n + 1)) + "</mediawiki>\n"


def wikipedia(*args):
    from train_scripts.prepare_wikipedia import main

    return run_main(main, [*map(str, args), "--quiet", "--valid-fraction", "0.3"])


@pytest.mark.parametrize("how", ["plain", "symlink", "hard link"])
def test_wikipedia_refuses_to_replace_its_dump(how, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "train.en"     # a plain-XML dump that happens to be named like an output
    if how == "plain":
        dump = target
    else:
        dump = tmp_path / "dump.xml"
        dump.write_text(dump_text())
        (os.symlink if how == "symlink" else os.link)(dump, target)
    target.write_text(dump_text()) if how == "plain" else None
    before = snapshot(tmp_path)
    err = one_error(capsys, wikipedia("--dump", dump, "--out", out))
    assert "is the same file as --dump" in err and "refusing to overwrite it" in err
    assert snapshot(tmp_path) == before


def test_wikipedia_bad_out_lang_and_dump(tmp_path, capsys):
    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(bz2.compress(dump_text().encode()))
    out = tmp_path / "out"
    out.write_text("keep me\n")
    err = one_error(capsys, wikipedia("--dump", dump, "--out", out))
    assert err == f"error: --out {out} is a file, not a folder" and out.read_text() == "keep me\n"
    for lang in ("../x", "", "a/b", ".."):
        err = one_error(capsys, wikipedia("--dump", dump, "--out", tmp_path / "o", "--lang", lang))
        assert "--lang must be a plain file-name suffix" in err and not (tmp_path / "o").exists()
    bad = tmp_path / "bad.xml"
    bad.write_bytes(dump_text().encode().replace(b"Another", b"Anoth\xe9r"))
    err = one_error(capsys, wikipedia("--dump", bad, "--out", tmp_path / "o"))
    assert err.startswith(f"error: {bad}: not a readable MediaWiki XML dump (not well-formed (invalid token)")
    assert not (tmp_path / "o").exists() or os.listdir(tmp_path / "o") == []
    assert wikipedia("--dump", dump, "--out", tmp_path / "o") == 0   # the good dump: both splits written
    assert sorted(os.listdir(tmp_path / "o")) == ["prepare.json", "train.en", "valid.en"]


# --- morphtok-demo --output ---------------------------------------------------------------------------------------

def demo(*args):
    from train_scripts.demo.main import main

    return run_main(main, [str(a) for a in args])


@pytest.mark.parametrize("part", ["all", "translation", "pretraining"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_demo_output_is_a_file(part, dry_run, tmp_path, capsys):
    """Item 9.4: a regular file as --output was a FileExistsError traceback."""
    out = tmp_path / "demo-output"
    out.write_text("keep me\n")
    err = one_error(capsys, demo("--part", part, "--output", out, *(["--dry-run"] if dry_run else [])))
    assert err == f"error: --output {out} is a file, not a folder"
    assert out.read_text() == "keep me\n"
    assert os.listdir(tmp_path) == ["demo-output"]


def test_demo_output_below_a_file(tmp_path, capsys):
    out = tmp_path / "demo-output"
    out.mkdir()
    (out / "pretraining").write_text("keep me\n")
    err = one_error(capsys, demo("--part", "pretraining", "--output", out, "--dry-run"))
    assert err == (f"error: cannot write --output file {out}/pretraining/results.json: {out}/pretraining is a "
                   "file, not a directory")
    blocker = tmp_path / "file"
    blocker.write_text("keep me\n")
    for part in ("translation", "pretraining"):
        err = one_error(capsys, demo("--part", part, "--output", blocker / "sub", "--dry-run"))
        assert f"{blocker} is a file, not a directory" in err and blocker.read_text() == "keep me\n"


def test_demo_data_inside_the_folder_it_rewrites(tmp_path, capsys):
    raw = tmp_path / "out" / "raw"
    raw.mkdir(parents=True)
    (raw / "train.en").write_text("a line\n")
    err = one_error(capsys, demo("--part", "translation", "--output", tmp_path / "out", "--data", raw))
    assert err == f"error: --mt-data {raw} overlaps {raw}, which the demo rewrites; give --output another folder"
    assert (raw / "train.en").read_text() == "a line\n"


# --- morphtok-demo: every part's inputs before any stage ----------------------------------------------------------

def data_root(tmp_path, leave_out=()):
    """A data root with the files the default demo reads (empty: only their presence is checked before the
    first stage), but the folders or files named in ``leave_out``."""
    from train_scripts.demo.pretraining.corpus import ARXIV_AREAS

    names = [f"multi30k/{split}.{lang}" for split in ("train", "val", "test_2016_flickr") for lang in ("en", "de")]
    names += [f"superbizarre/arxiv_{split}.csv" for split in ("train", "dev", "test")]
    names += [f"flota_arxiv/arxiv_{area}_{size}_{split}.csv" for area in ARXIV_AREAS for size in ("1e+02", "1e+03")
              for split in ("train", "dev", "test")]
    root = tmp_path / "data"
    for name in names:
        if not any(name == gone or name.startswith(gone + "/") for gone in leave_out):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("")
    return root


@pytest.mark.parametrize("leave_out, expected", [
    (["superbizarre"], "{root}/superbizarre (--lm-superbizarre; the Superbizarre sets: git clone "
                       "https://github.com/valentinhofmann/superbizarre)"),
    (["flota_arxiv/arxiv_maths_1e+02_dev.csv"], "{root}/flota_arxiv/arxiv_maths_1e+02_dev.csv (--lm-flota-data; "
                                                "the FLOTA ArXiv sets: data/ of git clone "
                                                "https://github.com/valentinhofmann/flota)"),
    (["superbizarre/arxiv_train.csv", "flota_arxiv"], "{root}/flota_arxiv (--lm-flota-data; the FLOTA ArXiv sets: "
                                                       "data/ of git clone https://github.com/valentinhofmann/flota); "
                                                       "{root}/superbizarre/arxiv_train.csv (--lm-superbizarre;"),
])
def test_demo_checks_the_pretraining_inputs_before_the_translation_part(leave_out, expected, tmp_path, capsys,
                                                                        monkeypatch):
    """``make demo`` without ../shared/data/superbizarre ran the translation part for 25 minutes, then failed on the
    pretraining part: now one line names what is missing and where it comes from, and nothing runs."""
    from train_scripts.demo.pretraining import part as lm_part
    from train_scripts.demo.translation.part import TranslationPart

    root = data_root(tmp_path, leave_out)
    monkeypatch.setattr(lm_part, "SHARED_DATA", root)   # the pretraining part's defaults: the data root's folders
    started = []
    monkeypatch.setattr(TranslationPart, "run", lambda self, args, ctx: started.append(args) or {})
    out = tmp_path / "demo-output"
    err = one_error(capsys, demo("--data", root / "multi30k", "--output", out))
    assert err.startswith("error: the pretraining part's input is missing: ")
    assert expected.format(root=root) in err
    assert err.endswith("Put it there (docs/data.md: the row of each folder says where to get it) or pass the "
                        "option with your copy; --part translation runs without it")
    assert started == [] and not out.exists()
    capsys.readouterr()
    assert demo("--data", root / "multi30k", "--output", out, "--part", "translation") == 0 and len(started) == 1
    assert "note:" not in capsys.readouterr().err


def test_demo_refuses_a_corpus_folder_without_text_files(tmp_path, capsys, monkeypatch):
    """The docs once gave ``--lm-corpus wiki/`` for morphtok-prepare-wikipedia's output (``train.en``,
    ``valid.en``), which the corpus reader refuses: it reads a folder's ``*.txt[.gz]`` or one file.  Refused before
    any stage now; the file itself is accepted."""
    from train_scripts.demo.main import build_parser
    from train_scripts.demo.pretraining import part as lm_part
    from train_scripts.demo.translation.part import TranslationPart

    root = data_root(tmp_path)
    monkeypatch.setattr(lm_part, "SHARED_DATA", root)
    monkeypatch.setattr(TranslationPart, "run", lambda self, args, ctx: pytest.fail("the translation part ran"))
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "train.en").write_text("one article\n\nanother article\n")
    err = one_error(capsys, demo("--data", root / "multi30k", "--output", tmp_path / "out", "--lm-corpus", "arxiv",
                                 wiki))
    assert err == (f"error: --lm-corpus {wiki}: no *.txt or *.txt.gz files in the folder (give a folder of them, or "
                   "one file, e.g. morphtok-prepare-wikipedia's OUT/train.en)")
    args = lm_part.PART.settings(build_parser().parse_args(["--output", str(tmp_path / "out"), "--lm-corpus", "arxiv",
                                                            str(wiki / "train.en")]))
    assert args.corpus == ["arxiv", wiki / "train.en"] and not (tmp_path / "out").exists()
