"""train_scripts.evaluate keeps hypotheses aligned with the references whatever the decoded text holds, says what
is odd (line breaks joined, empty hypotheses), refuses an all-empty output, bounds generation by default and
reports progress.  fairseq-generate is replaced by a script that prints what a real one prints for such output
(a model that emits these cases on purpose cannot be trained in seconds); the real one runs in
tests/test_recipes_translation.py."""
import json
import sys

import pytest

from preprocess.common import UserError
from train_scripts import evaluate as ev

REFS = ["Ein Hund läuft .", "Zwei Männer sitzen .", "Eine Frau liest .", "Ein Kind spielt .", "Ein Boot ."]


def _fake_generate(tmp_path, hyps: list[str]):
    """A ``fairseq-generate`` that records its arguments and prints S/T/H/D/P records for ``hyps`` (raw text,
    written byte for byte: a line break inside a hypothesis reaches stdout as it would from fairseq)."""
    script = tmp_path / "fake-generate"
    records = []
    for i, hyp in enumerate(hyps):
        records += [f"S-{i}\tsource {i}", f"T-{i}\t{REFS[i]}", f"H-{i}\t-0.5\t{hyp}", f"D-{i}\t-0.5\t{hyp}",
                    f"P-{i}\t-0.1 -0.2"]
    out = "\n".join(records) + "\n2024-01-01 10:00:00 | INFO | fairseq_cli.generate | Translated 5 sentences\n"
    (tmp_path / "stdout.bin").write_bytes(out.encode("utf-8"))
    script.write_text(f"#!{sys.executable}\n"
                      "import json, sys\n"
                      f"json.dump(sys.argv[1:], open({str(tmp_path / 'argv.json')!r}, 'w'))\n"
                      f"sys.stdout.buffer.write(open({str(tmp_path / 'stdout.bin')!r}, 'rb').read())\n")
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    ref = tmp_path / "ref.de"
    ref.write_text("".join(r + "\n" for r in REFS), encoding="utf-8")
    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(b"not read by the fake")

    def run(hyps, **kwargs):
        script = _fake_generate(tmp_path, hyps)
        monkeypatch.setattr(ev, "find_tool", lambda name: script)
        return ev.evaluate(str(ckpt), data_bin=str(tmp_path), ref=str(ref), tgt_lang="de", generate_args=[],
                           cpu=True, **kwargs)

    return tmp_path, run


def test_line_breaks_in_hypotheses_are_joined_and_counted(setup, capsys):
    tmp_path, run = setup
    hyps = ["Ein Hund\nläuft .", "Zwei Männer\rsitzen .", "Eine Frau\u2028liest .", "Ein Kind spielt .",
            "Ein\x85Boot ."]
    result = run(hyps, out_dir=str(tmp_path / "eval"), progress=True)
    written = (tmp_path / "eval" / "hyp.txt").read_bytes().decode("utf-8").split("\n")
    assert written == ["Ein Hund läuft .", "Zwei Männer sitzen .", "Eine Frau liest .", "Ein Kind spielt .",
                       "Ein Boot .", ""]
    assert result["sentences"] == 5 and result["joined_line_breaks"] == 4
    assert result["bleu"] == pytest.approx(100.0)  # scored on the whole hypotheses, not on fragments
    err = capsys.readouterr().err
    assert "warning: 4 of 5 hypotheses contained a line break" in err and "ids 0, 1, 2, 4" in err
    scores = json.loads((tmp_path / "eval" / "scores.json").read_text())
    assert scores["joined_line_breaks"] == 4 and scores["warnings"] == result["warnings"]
    # progress while generating, and where the results go
    assert "evaluate: translating 5 sentences" in err and "evaluate: 5/5 sentences translated (100%" in err
    assert str(tmp_path / "eval") in err


def test_empty_hypotheses_warned_and_all_empty_refused(setup, capsys):
    tmp_path, run = setup
    result = run(["Ein Hund läuft .", "", "Eine Frau liest .", "", "Ein Boot ."])
    assert result["empty_hypotheses"] == 2
    assert "warning: 2 of 5 hypotheses are empty (ids 1, 3)" in capsys.readouterr().err
    with pytest.raises(UserError, match="all 5 hypotheses are empty"):
        run(["", "", "", "", ""], out_dir=str(tmp_path / "none"))
    assert not (tmp_path / "none" / "scores.json").exists() and not (tmp_path / "none" / "hyp.txt").exists()
    allowed = run(["", "", "", "", ""], allow_empty=True)
    assert allowed["bleu"] == 0.0 and allowed["empty_hypotheses"] == 5
    assert "all 5 hypotheses are empty" in allowed["warnings"][0]


def test_generation_bounded_by_default(setup):
    tmp_path, run = setup
    run(REFS)
    argv = json.loads((tmp_path / "argv.json").read_text())
    joined = " ".join(argv)
    assert "--max-len-a 1.2 --max-len-b 10" in joined
    assert "--batch-size 64" in joined and "--max-tokens 4096" in joined
    run(REFS, extra_args=["--max-len-b", "200"])  # the user's options come last and win
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv.index("200") > argv.index("10")


def test_cli_all_empty_is_one_line(setup, monkeypatch, capsys):
    tmp_path, _ = setup
    script = _fake_generate(tmp_path, [""] * 5)
    monkeypatch.setattr(ev, "find_tool", lambda name: script)
    from preprocess.cli import run_main

    code = run_main(ev.main, ["--checkpoint", str(tmp_path / "model.pt"), "--data-bin", str(tmp_path),
                              "--generate-args", "", "--ref", str(tmp_path / "ref.de"), "--tgt-lang", "de",
                              "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--allow-empty" in err


def test_parse_generate_output_keeps_records_apart():
    parsed = ev.parse_generate_output("S-1\tx\nH-1\t-0.5\t▁a ▁b\nD-1\t-0.5\ta b\nH-0\t-1\t\nD-0\t-1\t\n"
                                      "D-2\t-1\tx\u2029y\nP-2\t-1\nD-3\t-1\tend\nof it\n\n")
    assert parsed["hyp"] == {0: "", 1: "a b", 2: "x y", 3: "end of it"} and parsed["hyp_tok"][1] == "▁a ▁b"
    assert parsed["line_breaks"] == [2, 3]
