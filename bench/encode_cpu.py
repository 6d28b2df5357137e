"""CPU seconds of one scheme's encoding phase, measured inside the process: the encoder is built from
``preprocess.encode``'s own options (``--scheme S ...``), the input read into memory, and then only the calls to
``encode_chunk`` over chunks of ``--chunk-size`` lines (what a ``preprocess.encode`` worker does:
``encode_lines``, the cycle collector paused) are timed with ``time.process_time``.  No start-up is subtracted, so
the figure does not carry the start-up's run-to-run noise; reading and writing (the same for every scheme) are left
out.  Then the same lines are encoded again by the same encoder (every word type seen: the per-word caches hold
them, as they hold most of a large corpus's words) and timed the same way.  Prints ``seconds lines second-pass-seconds``.

    python bench/encode_cpu.py INPUT --scheme spaces --model m.model --spaces keep
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script: the checkout
from preprocess import encode, registry  # noqa: E402
from preprocess.files.inputs import read_lines  # noqa: E402


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    src, scheme_args = argv[0], argv[1:]
    args = encode.parse_args([*scheme_args, "--inputs", src, "--outputs", os.devnull])
    encoder = registry.get(args.scheme).make_encoder(args)
    lines = list(read_lines(src))
    size = args.chunk_size
    seconds = []
    for _ in range(2):
        t0 = time.process_time()
        for i in range(0, len(lines), size):
            encode.encode_chunk(encoder, lines[i:i + size])
        seconds.append(time.process_time() - t0)
    print(f"{seconds[0]:.6f} {len(lines)} {seconds[1]:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
