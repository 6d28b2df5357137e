"""The scaling benchmark (bench/scale_corpus.py, ``make bench-scale``) on a tiny corpus: it builds each size from the
corpus (repeating it where the size is larger, and saying so), measures every step in a fresh process and writes
the dated markdown and json with a growth exponent per step."""
import gzip
import json
import sys

from preprocess.common import REPO


def test_scale_corpus_runs_on_a_tiny_corpus(run_cli, shared_path, tmp_path):
    data = tmp_path / "corpus"
    data.mkdir()
    with gzip.open(shared_path("multi30k/train.en.gz"), "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(300)]   # ~3,700 words: the larger size repeats it
    with gzip.open(data / "a.txt.gz", "wt", encoding="utf-8") as out:
        out.write("".join(lines))
    out_dir = tmp_path / "results"
    run_cli([sys.executable, str(REPO / "bench" / "scale_corpus.py"), "--data", str(data), "--sizes", "2k,8k",
             "--schemes", "spaces", "--vocab-size", "300", "--workers", "1", "--out-dir", str(out_dir),
             "--work-dir", str(tmp_path)])
    (json_file,) = out_dir.glob("*-scale-corpus.json")
    (md_file,) = out_dir.glob("*-scale-corpus.md")
    assert json_file.stem == md_file.stem
    result = json.loads(json_file.read_text(encoding="utf-8"))
    assert [c["size"] for c in result["corpora"]] == [2000, 8000]
    assert result["corpora"][0]["passes"] == 1 and result["corpora"][1]["passes"] >= 2   # repeated, and said
    assert result["corpora"][1]["repeats"] > 1.0
    runs = {(r["step"], r["size"]): r for r in result["runs"]}
    assert set(runs) == {(step, size) for step in ("learn", "binarize", "encode+preprocess") for size in (2000, 8000)}
    for (step, _), r in runs.items():
        assert r["rc"] == 0 and r["wall_s"] >= 0 and r["cpu_s"] >= 0
        if step != "encode+preprocess":
            assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_rss_mb"] > 10
    growth = {g["step"]: g for g in result["growth"]}
    assert set(growth) == {"learn", "binarize", "encode+preprocess"}
    assert all(growth[s]["points"] == 2 and growth[s]["cpu_s_exponent"] is not None for s in ("learn", "binarize"))
    text = md_file.read_text(encoding="utf-8")
    assert "Growth exponents" in text and "| spaces | learn |" in text and "repeat" in text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("scale-corpus-")]   # its work folder is gone


def test_slope_is_the_log_log_growth():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import scale_corpus
    finally:
        sys.path.remove(str(REPO / "bench"))
    assert abs(scale_corpus.slope([1, 4, 16], [3, 12, 48]) - 1.0) < 1e-9
    assert abs(scale_corpus.slope([1, 4, 16], [5, 5, 5])) < 1e-9
    assert abs(scale_corpus.slope([2, 8], [1, 16]) - 2.0) < 1e-9
    assert scale_corpus.slope([2], [1]) is None
    assert scale_corpus.parse_size("4M") == 4_000_000 and scale_corpus.parse_size("20k") == 20_000
