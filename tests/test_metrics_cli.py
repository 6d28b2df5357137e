"""The intrinsic-metric console scripts run end to end on small inputs of their own (one real
invocation each; ``morphtok-metrics-wordmap`` crashed with NameError: SPACE_SYMBOL)."""
from __future__ import annotations

import json


def test_metrics_wordmap_runs(run_cli, tmp_path):
    verbs = ["fallen", "gefallen", "befallen", "fahren", "befahren", "verfahren", "kaufen", "verkaufen", "laufen",
             "verlaufen", "belaufen", "kommen", "bekommen", "stehen", "verstehen", "bestehen"]
    corpus = tmp_path / "corpus.de"
    corpus.write_text("".join(f"Der Mann will heute {v} und morgen {verbs[i - 1]} .\n" for i, v in enumerate(verbs))
                      * 5, encoding="utf-8")
    (tmp_path / "verbs.txt").write_text("\n".join(verbs) + "\n", encoding="utf-8")
    # MorphyNet's derivational format: base, derived, base POS, derived POS, affix, kind
    gold = tmp_path / "gold.tsv"
    gold.write_text("fallen\tbefallen\tV\tV\tbe\tprefix\nkaufen\tverkaufen\tV\tV\tver\tprefix\n"
                    "stehen\tverstehen\tV\tV\tver\tprefix\nHaus\thausen\tN\tN\ten\tsuffix\n", encoding="utf-8")
    proc = run_cli(["morphtok-metrics-wordmap", "--corpus", corpus, "--gold", gold, "--verbs",
                    tmp_path / "verbs.txt", "--vocab-size", "60", "--json"])
    rows = json.loads(proc.stdout)
    assert [r["system"].split(" (")[0] for r in rows] == ["Wordmap", "SentencePiece BPE", "SentencePiece Unigram"]
    assert all(r["n_words"] == 3 for r in rows)  # the three concatenative verb derivations of the gold file
    assert all(0.0 <= r["f1"] <= 1.0 for r in rows)
