"""The benchmark's in-process timer (bench/encode_cpu.py): what it times is the scheme's encoding of every line."""
import sys

from preprocess.common import REPO


def test_encode_cpu_times_the_encoding_of_every_line(run_cli, shared_path, tmp_path):
    model = shared_path("space_models/unigram_prime.model")
    src = tmp_path / "in.txt"
    lines = ["A dog runs.", "", "Two men  sit on a bench."] * 50
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = run_cli([sys.executable, str(REPO / "bench" / "encode_cpu.py"), str(src), "--scheme", "spaces",
                   "--model", str(model), "--spaces", "keep", "--chunk-size", "7"])
    seconds, n, second_pass = out.stdout.split()
    assert int(n) == len(lines) and float(seconds) > 0.0 and float(second_pass) > 0.0
