"""A stub of ``python -m train_scripts.agreement`` by its contract (issue 59, item 4a): reads the pairs and writes
the record's shape with deterministic made-up scores; ``mcnemar`` is the exact two-sided test."""
import argparse
import json
import math
import os
import random
import sys


def mcnemar(correct_a, correct_b):
    b01 = sum(1 for a, b in zip(correct_a, correct_b) if not a and b)
    b10 = sum(1 for a, b in zip(correct_a, correct_b) if a and not b)
    n, k = b01 + b10, min(b01, b10)
    p = 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)
    return {"b01": b01, "b10": b10, "p": p}


def main(argv=None):
    ap = argparse.ArgumentParser()
    for name in ("--lm-data", "--checkpoint", "--pairs", "--form", "--output"):
        ap.add_argument(name, required=True)
    ap.add_argument("--random-seeds", type=int, default=0)
    ap.add_argument("--max-pairs", type=int, default=0)
    a = ap.parse_args(argv)
    rng = random.Random(a.checkpoint)
    record = {"form": a.form, "constructions": {}, "overall": {}, "seconds": 0.1}
    every, rand_all = [], [[] for _ in range(a.random_seeds)]
    for name in sorted(os.listdir(a.pairs)):
        if not name.endswith(".txt"):
            continue
        lines = [x for x in open(os.path.join(a.pairs, name), encoding="utf-8").read().splitlines() if x.strip()]
        pairs = len(lines) // 2 if not a.max_pairs else min(a.max_pairs, len(lines) // 2)
        correct = [int(rng.random() < 0.6) for _ in range(pairs)]
        rand = [[int(random.Random(f"{s}{name}{i}").random() < 0.5) for i in range(pairs)]
                for s in range(a.random_seeds)]
        for s, r in enumerate(rand):
            rand_all[s] += r
        every += correct
        record["constructions"][name[:-4]] = {"pairs": pairs, "accuracy": 100 * sum(correct) / max(1, pairs),
                                              "correct": correct, "chance": 50.0,
                                              "random": [100 * sum(r) / max(1, pairs) for r in rand]}
    record["overall"] = {"pairs": len(every), "accuracy": 100 * sum(every) / max(1, len(every)),
                         "random": [100 * sum(r) / max(1, len(r)) for r in rand_all]}
    with open(a.output, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
