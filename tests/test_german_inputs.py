"""The German inputs read as valid text: invalid UTF-8 is one line whose hint names only options the command has
(or what to do to the file), a carriage return or another line break inside a tweet keeps the prepared CSV at one
row per tweet for any CSV reader, a byte-order mark at the start of a file is no text, and the leakage rules'
normalisation ignores what its docstring says it ignores.  Every case is made here, in temporary files."""
from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import pytest
from test_prepare_german import _germeval, tiny  # noqa: F401 - tiny is a fixture

from conftest import run_command
from preprocess.common import REPO
from train_scripts import prepare_german as pg
from train_scripts.classification_data import read_csv

BAD = b"caf\xe9 ist gut"   # Latin-1, not UTF-8


def _options(*command) -> set:
    """The options the command's --help lists."""
    return set(re.findall(r"--[a-z][a-z0-9-]*", run_command(["python", "-m", *command, "--help"]).stdout))


def _one_line_without_foreign_options(proc, path, line, command) -> str:
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip()
    assert "\n" not in err and err.startswith("error: ") and f"{path}:{line}: invalid UTF-8" in err, err
    named = set(re.findall(r"--[a-z][a-z0-9-]*", err))
    assert named <= _options(*command), (named, err)
    assert "--errors" not in err and "save the file as UTF-8" in err
    return err


# --- invalid UTF-8: the hint names what the command has -----------------------------------------------------------

def test_invalid_utf8_germeval_file(tiny, tmp_path):  # noqa: F811 - the fixture
    path = tiny.germeval / "germeval2018.training.txt"
    path.write_bytes(b"Ein Tweet\tOTHER\tOTHER\n" + BAD + b"\tOTHER\tOTHER\n")
    command = ("train_scripts.prepare_german", "germeval")
    proc = run_command(["python", "-m", *command, "--out", tmp_path / "o", "--germeval", tiny.germeval], check=False)
    _one_line_without_foreign_options(proc, path, 2, command)
    assert not (tmp_path / "o").exists()


def test_invalid_utf8_ud_file(tiny, tmp_path):  # noqa: F811
    path = tiny.ud / "de_gsd-ud-test.conllu"
    path.write_bytes(path.read_bytes().replace("Sie".encode(), b"S\xe9e", 1))
    line = next(i for i, raw in enumerate(path.read_bytes().split(b"\n"), 1) if b"\xe9" in raw)
    command = ("train_scripts.prepare_german", "ud")
    proc = run_command(["python", "-m", *command, "--out", tmp_path / "o", "--ud", tiny.ud], check=False)
    _one_line_without_foreign_options(proc, path, line, command)


def test_invalid_utf8_pseudo_perplexity_input(tmp_path):
    (tmp_path / "lm").mkdir()
    (tmp_path / "checkpoint.pt").write_bytes(b"")   # the input is read before either is loaded
    text = tmp_path / "heldout.de"
    text.write_bytes(b"Ein Satz.\n" + BAD + b"\n")
    command = ("train_scripts.pseudo_perplexity",)
    proc = run_command(["python", "-m", *command, "--lm-data", tmp_path / "lm", "--checkpoint",
                        tmp_path / "checkpoint.pt", "--input", text], check=False)
    _one_line_without_foreign_options(proc, text, 2, command)


# --- line breaks inside a tweet ----------------------------------------------------------------------------------

BREAKS = ["Erste Zeile\rzweite Zeile", "mit \"Zitat\"\r\rund, Komma", "Absatz\u2028danach", "Teil\u2029zwei",
          "vertikal\x0bTab", "Seite\x0cneu", "NEL\x85hier"]


def test_a_line_break_inside_a_tweet_keeps_one_csv_row_per_tweet(tiny, tmp_path):  # noqa: F811
    rows = [(text, "OTHER", "OTHER") for text in BREAKS] + [("Du Idiot", "OFFENSE", "INSULT"),
                                                            ("Noch ein Tweet", "OTHER", "OTHER")]
    _germeval(tiny.germeval / "germeval2018.training.txt", rows)
    _germeval(tiny.germeval / "germeval2018.test.txt", rows[:3] + rows[-2:])
    record = pg.prepare_germeval(str(tmp_path / "o"), tiny, dev_fraction=0.2)
    tweets = {"train": [], "dev": []}
    for split in ("train", "dev", "test"):
        path = tmp_path / "o" / f"germeval_{split}.csv"
        with open(path, newline="", encoding="utf-8") as fh:
            table = list(csv.reader(fh))
        assert table[0] == ["text", "label", "fine"]
        assert len(table) - 1 == record["rows"][split] == len(read_csv(str(path)))
        tweets[split] = [r[0] for r in table[1:]]
    assert sorted(tweets["train"] + tweets["dev"]) == sorted(t for t, _, _ in rows)   # exactly as written
    assert tweets["test"] == [t for t, _, _ in rows[:3] + rows[-2:]]


def test_a_tweet_without_a_carriage_return_is_written_as_before():
    tweets = [pg.Tweet("schlicht", "OTHER", "OTHER", 1), pg.Tweet('mit, "Komma"', "OFFENSE", "ABUSE", 2)]
    assert pg.csv_text(tweets) == 'text,label,fine\nschlicht,OTHER,OTHER\n"mit, ""Komma""",OFFENSE,ABUSE\n'


# --- a byte-order mark at the start of a file --------------------------------------------------------------------

def _bom_first(path):
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())


def test_a_bom_first_germeval_file_and_train_de_give_no_bom(tiny, tmp_path):  # noqa: F811
    for path in (tiny.germeval / "germeval2018.training.txt", tiny.germeval / "germeval2018.test.txt",
                 tiny.multi30k / "train.de", tiny.multi30k / "val.de", tiny.ud / "de_gsd-ud-dev.conllu"):
        _bom_first(path)
    first = pg.read_germeval(str(tiny.germeval / "germeval2018.training.txt"))[0].text
    assert first == "@user Schau mal 😂🇩🇪 https://t.co/abc?x=1 |LBR| #Bahn  doppelt"
    corpus = pg.prepare_corpus(str(tmp_path / "o" / "corpus"), tiny, valid_lines=2, seed=3)
    pg.prepare_germeval(str(tmp_path / "o" / "germeval"), tiny)
    pg.prepare_ud(str(tmp_path / "o" / "ud"), tiny)
    outputs = sorted(p for d in ("corpus", "germeval", "ud") for p in (tmp_path / "o" / d).iterdir())
    assert len(outputs) == 3 + 4 + 5
    for path in outputs:
        assert "\ufeff" not in path.read_text(encoding="utf-8"), path
    lines = (tmp_path / "o" / "corpus" / "train.de").read_text(encoding="utf-8").splitlines() + \
        (tmp_path / "o" / "corpus" / "valid.de").read_text(encoding="utf-8").splitlines()
    assert "Ein Hund rennt." in lines   # train.de's first line, kept as the text it is
    assert corpus["removed"]["multi30k_heldout"] == 3   # val.de's first line still matches despite its BOM


# --- the leakage rules' normalisation ----------------------------------------------------------------------------

@pytest.mark.parametrize("variant", [
    "\ufeffDies ist ein Testtweet",            # a byte-order mark
    "Dies\u00a0ist\tein  Testtweet ",          # a no-break space, a tab, a run of spaces, a trailing space
    "Dies ist|LBR|ein\u2028Testtweet",         # GermEval's marker, a Unicode line separator
    "DIES IST EIN TESTTWEET",                  # case
])
def test_normalise_ignores_what_it_says(variant):
    assert pg.normalise(variant) == pg.normalise("dies ist ein testtweet") == "dies ist ein testtweet"


def test_normalise_composes_and_casefolds():
    assert pg.normalise("Mu\u0308ller") == pg.normalise("MÜLLER") == "müller"
    assert pg.normalise("\u0130stanbul") == pg.normalise("i\u0307stanbul")   # casefold's decomposed İ composed again
    assert pg.normalise("ein Hund") != pg.normalise("einHund")


def test_a_bom_first_training_line_still_leaks():
    train, valid, record = pg.build_corpus({"germeval_train": ["\ufeffdies ist ein Testtweet", "Ein Satz"]},
                                           {"germeval_test": ["Dies ist ein Testtweet"]}, valid_lines=0)
    assert record["removed"]["germeval_test"] == 1 and train == ["Ein Satz"]


@pytest.mark.parametrize("command", [
    ["train_scripts.binarize", "--lm", "--data", "{d}", "--src", "de", "--out", "{d}/out", "--scheme",
     "sentencepiece", "--vocab-size", "20"],
    ["train_scripts.significance", "--refs", "{d}/train.de", "--baseline", "a={d}/ok.txt", "--systems",
     "b={d}/ok.txt"],
])
def test_commands_without_errors_option_hint_the_file_not_the_option(tmp_path, command):
    """A command with no --errors (binarize, significance, ...) says what to do to the file, not an option it
    lacks."""
    (tmp_path / "train.de").write_bytes(b"hallo welt\n\xff\n")
    (tmp_path / "valid.de").write_bytes(b"hallo welt\n\xff\n")
    (tmp_path / "ok.txt").write_text("a\nb\n")
    proc = subprocess.run([sys.executable, "-m", *[w.format(d=tmp_path) for w in command]], capture_output=True,
                          text=True, cwd=REPO, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "invalid UTF-8" in last and "save the file as UTF-8" in last and "--errors" not in last
