"""morphtok-metrics-intrinsic: Rényi efficiency (tokenization-scorer), fertility, pieces per word and the boundary
figures, per tokeniser; the command prints Rényi efficiency for every scheme's exported tokenizer."""
from __future__ import annotations

import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

pytest.importorskip("tokenization_scorer", reason="the hf extra (pip install .[hf]) is not installed")
pytest.importorskip("tokenizers", reason="the hf extra (pip install .[hf]) is not installed")
pytest.importorskip("transformers", reason="the hf extra (pip install .[hf]) is not installed")

from preprocess import export  # noqa: E402
from preprocess.common import UserError  # noqa: E402
from preprocess.evaluate import intrinsic, morph  # noqa: E402
from preprocess.schemes.spaces import SpacesEncoder  # noqa: E402
from tests.conftest import require_shared, run_command  # noqa: E402
from tests.hf_fixtures import bite_scheme, shared_lines, wordmap_scheme  # noqa: E402,F401


def test_renyi_efficiency_is_its_definition():
    """Zouhar et al. (2023): H_a(p) = log2(sum p_i^a) / (1 - a), divided by log2 of the number of types."""
    encoded = ["a a b", "a c"]          # a: 3/5, b: 1/5, c: 1/5
    probs = [3 / 5, 1 / 5, 1 / 5]
    for power in (2.5, 3.0):
        want = math.log2(sum(p ** power for p in probs)) / (1 - power) / math.log2(3)
        got = intrinsic.text_scores(encoded, ["x y", "z"], power=power)["renyi_efficiency"]
        assert got == pytest.approx(want, rel=1e-12)
    assert intrinsic.text_scores(["a a", "a"], ["x", "y"])["renyi_efficiency"] is None   # one type: undefined


def test_fertility_and_pieces_per_word():
    raw = ["the dogs barked", "hello"]
    encoded = [["the", "▁", "dog", "s", "▁", "bark", "ed"], ["hel", "lo"]]     # 9 pieces, 2 of them spaces
    r = intrinsic.text_scores(encoded, raw)
    assert (r["n_words"], r["n_pieces"], r["n_sentences"], r["n_types"]) == (4, 9, 2, 8)
    assert r["fertility"] == pytest.approx(9 / 4)
    assert r["pieces_per_word"] == pytest.approx(7 / 4)
    assert r["tokens_per_sentence"] == pytest.approx(9 / 2)
    assert intrinsic.text_scores([" ".join(p) for p in encoded], raw) == r     # encoded lines as strings
    with pytest.raises(UserError, match="aligned"):
        intrinsic.text_scores(encoded[:1], raw)


def test_boundary_figures_are_the_projects(tmp_path):
    """The boundary figures of an exported tokenizer are those of preprocess.evaluate.morph on its model."""
    model = str(require_shared("space_models/unigram_prime.model"))
    gold = morph.read_gold(str(require_shared("morph_gold/eng.word.dev.tsv")))
    assert export.main(["--scheme", "spaces", "--model", model, "--out", str(tmp_path / "hf")]) == 0
    lines = shared_lines("en", limit=100)
    r = intrinsic.tokenizer_scores(intrinsic.load_tokenizer(str(tmp_path / "hf")), lines, gold)
    want = morph.evaluate(morph.spm_segmenter(model), gold)
    assert {k: r["boundary"][k] for k in ("precision", "recall", "f1", "mean_pieces", "n_words")} == \
        {k: want[k] for k in ("precision", "recall", "f1", "mean_pieces", "n_words")}
    assert r == {**intrinsic.text_scores(SpacesEncoder(model).encode_lines(lines), lines), "boundary": r["boundary"]}


def test_command_prints_renyi_efficiency_for_every_scheme(tmp_path, bite_scheme, wordmap_scheme):
    out = tmp_path / "hf"
    space = str(require_shared("space_models/unigram_prime.model"))
    plain = str(require_shared("space_models/bpe_default.model"))
    exports = {
        "spaces": ["--scheme", "spaces", "--model", space],
        "no_spaces": ["--scheme", "spaces", "--model", space, "--spaces", "drop"],
        "sentencepiece": ["--scheme", "sentencepiece", "--model", plain],
        "bite": ["--scheme", "bite", "--subword-model", bite_scheme.model],
        "flota": ["--scheme", "flota", "--flota-vocab", str(require_shared("flota_vocabs/bert-base-uncased.txt"))],
        "wordmap": ["--scheme", "wordmap", "--wordmap-vocab", wordmap_scheme.path("wordmap.de.txt"),
                    "--wordmap-spm", wordmap_scheme.vocabulary_file("de"), "--dict", wordmap_scheme.dictionary("de")],
    }
    for name, argv in exports.items():
        assert export.main(argv + ["--out", str(out / name)]) == 0
    text = {"en": tmp_path / "test.en", "de": tmp_path / "test.de"}
    for lang, path in text.items():
        path.write_text("\n".join(shared_lines(lang, limit=60)) + "\n", encoding="utf-8")
    encoded = tmp_path / "test.tok.en"
    encoded.write_text("\n".join(SpacesEncoder(space).encode_lines(shared_lines("en", limit=60))) + "\n",
                       encoding="utf-8")
    runs = {"en": [n for n in exports if n != "wordmap"], "de": ["wordmap"]}
    rows = {}
    for lang, names in runs.items():
        args = ["python", "-m", "preprocess.evaluate.intrinsic", "--text", text[lang]]
        for name in names:
            args += ["--tokenizer", f"{name}={out / name}"]
        if lang == "en":
            args += ["--encoded", f"encoded_spaces={encoded}"]
        table = run_command(args + ["--json", tmp_path / f"scores.{lang}.json"]).stdout
        result = json.loads((tmp_path / f"scores.{lang}.json").read_text(encoding="utf-8"))
        assert result["n_sentences"] == 120 and result["renyi_power"] == 2.5
        for name, r in result["tokenizers"].items():
            assert 0 < r["renyi_efficiency"] <= 1, (name, r)
            # the Markdown row shows the same value, rounded
            row = next(line for line in table.splitlines() if line.startswith(f"| {name} |"))
            assert row.split(" | ")[1] == f"{r['renyi_efficiency']:.3f}"
        rows.update(result["tokenizers"])
    assert set(rows) == set(exports) | {"encoded_spaces"}
    # the encoded file is the spaces tokenizer's own output: same figures
    assert rows["encoded_spaces"] == rows["spaces"]
    # dropping the ▁ tokens removes exactly the difference between fertility and pieces per word
    assert rows["no_spaces"]["fertility"] == pytest.approx(rows["spaces"]["pieces_per_word"])


def test_command_rejects_bad_input(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("a b\n", encoding="utf-8")
    proc = run_command(["python", "-m", "preprocess.evaluate.intrinsic", "--text", text], check=False)
    assert proc.returncode == 2 and "error:" in proc.stderr and "--tokenizer" in proc.stderr
    short = tmp_path / "short.txt"
    short.write_text("", encoding="utf-8")
    command = ["python", "-m", "preprocess.evaluate.intrinsic", "--text", text]
    proc = run_command(command + ["--encoded", f"x={short}"], check=False)
    assert proc.returncode == 2 and "aligned" in proc.stderr
    proc = run_command(command + ["--tokenizer", f"x={tmp_path / 'none'}"], check=False)
    assert proc.returncode == 2 and "not found" in proc.stderr
