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
    assert "| cores busy |" in text   # CPU over wall: a step that should use --workers cores and does not shows
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


def _scale_estimate():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import scale_estimate
    finally:
        sys.path.remove(str(REPO / "bench"))
    return scale_estimate


def _result(runs: list[tuple], lines: dict) -> dict:
    """A scale-corpus result: runs of (scheme, step, words, wall, cpu, peak)."""
    return {"corpora": [{"size": w, "words": w, "lines": n} for w, n in lines.items()],
            "runs": [{"scheme": s, "step": step, "size": w, "words": w, "rc": 0, "wall_s": wall, "cpu_s": cpu,
                      "peak_rss_mb": peak} for s, step, w, wall, cpu, peak in runs]}


def test_scale_estimate_carries_the_measurements_to_a_corpus(tmp_path, capsys):
    est = _scale_estimate()
    lines = {1_000_000: 40_000, 4_000_000: 2_000_000, 8_000_000: 4_000_000}
    # learn: 20 CPU s + 1 s per million words; encode+preprocess: 2 s + 5 s per million words; wall = CPU / 2
    runs = []
    for w in lines:
        learn = 20 + w / 1e6
        runs += [("lin", "learn", w, learn / 2, learn, 100),
                 ("lin", "binarize", w, (learn + 2 + 5 * w / 1e6) / 2, learn + 2 + 5 * w / 1e6, 150)]
    # a learn step that took less CPU at the larger size: no negative cost per word; only sizes below the bound
    runs += [("flat", "learn", 1_000_000, 30, 30, 50), ("flat", "binarize", 1_000_000, 40, 40, 50),
             ("flat", "learn", 2_000_000, 25, 25, 50), ("flat", "binarize", 2_000_000, 35, 35, 50)]
    first = tmp_path / "a.json"
    first.write_text(json.dumps(_result(runs, {**lines, 2_000_000: 80_000})))
    data = est.load([first])
    lin = est.scheme_model(data["runs"]["lin"], data["lines"])
    assert lin["above_bound"] == 2 and lin["learn_peak_mb"] == 100 and lin["peak_mb"] == 150
    for step, per_word, fixed in (("learn", 1e-6, 20), ("encode", 5e-6, 2)):
        assert abs(lin[step]["per_word"] - per_word) < 1e-12 and abs(lin[step]["fixed"] - fixed) < 1e-6, step
        assert abs(lin[step]["wall_per_cpu"] - 0.5) < 1e-9
    assert abs(est.cpu_s(lin["learn"], 100_000_000) - 120) < 1e-6
    assert abs(est.cpu_s(lin["encode"], 100_000_000) - 502) < 1e-6
    # on 10 cores: learn 20 * 0.5 + 100 / 10, encode 2 * 0.5 + 500 / 10
    assert abs(est.wall_s(lin, 100_000_000, 10) - (10 + 10 + 1 + 50)) < 1e-6
    # the SLURM path: the learn job on 5 cores, the shards on 10: learn 10 + 100 / 5, encode 1 + 500 / 10
    assert abs(est.wall_s(lin, 100_000_000, 10, learn_cores=5) - (10 + 20 + 1 + 50)) < 1e-6
    flat = est.scheme_model(data["runs"]["flat"], data["lines"])
    assert flat["learn"]["per_word"] == 0 and flat["learn"]["fixed"] == 25 and flat["above_bound"] == 0
    # a later file wins for the scheme and size it measured again
    second = tmp_path / "b.json"
    second.write_text(json.dumps(_result([("lin", "binarize", 8_000_000, 60, 100, 150)], {8_000_000: 4_000_000})))
    again = est.scheme_model(est.load([first, second])["runs"]["lin"], lines)
    assert again["encode"]["per_word"] == ((100 - 28) - 22) / 4e6   # encode at 8M minus encode at 4M
    assert est.main([str(first), "--corpus", "big=100M", "--cores", "1,10", "--learn-cores", "5",
                     "--out", str(tmp_path / "e.md")]) == 0
    text = capsys.readouterr().out
    assert text == (tmp_path / "e.md").read_text()
    # CPU 622 s; wall on 1 core 10 + 100 + 1 + 500 s, on 10 cores 71 s
    assert "## big: 100M words" in text and "| lin | 10 min | 10 min | 1.2 min |" in text
    assert "| lin | 30 s | 1.4 min |" in text   # SLURM: the learn job alone, then in all with N = 10 (81 s)
    flat_row = text.split("| flat |")[1].splitlines()[0]
    assert "too low" in flat_row and "an overestimate" in flat_row
