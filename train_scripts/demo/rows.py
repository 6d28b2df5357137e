"""The demo's rows, shared by every part: each a scheme configuration of the registry (``preprocess/registry.py``;
its recipe in ``train_scripts/schemes``) and how the report shows it.  A part picks its rows from :data:`ROWS` by
name (the translation part's ``--schemes``, the pretraining part's ``--lm-rows``)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Row:
    """One row of the comparison: a scheme configuration of the registry (``config``) and how to show it."""

    name: str
    label: str
    config: dict = field(default_factory=dict)
    note: str = ""


ROWS = {r.name: r for r in [
    Row("bpe", "BPE", {"scheme": "sentencepiece", "model_type": "bpe"}, "SentencePiece BPE, joint En+De"),
    Row("unigram", "Unigram", {"scheme": "sentencepiece", "model_type": "unigram"},
        "SentencePiece Unigram, joint En+De"),
    Row("bpe_prime", "BPE'", {"scheme": "spaces", "model_type": "bpe"}, "spaces always their own token"),
    Row("bpe_prime_nospace", "BPE' no spaces", {"scheme": "spaces", "model_type": "bpe", "spaces": "drop"},
        "space tokens dropped on the source; the target keeps them (a decoder must generate spaces)"),
    Row("unigram_prime", "Unigram'", {"scheme": "spaces", "model_type": "unigram"}, "spaces always their own token"),
    Row("unigram_prime_nospace", "Unigram' no spaces", {"scheme": "spaces", "model_type": "unigram", "spaces": "drop"},
        "space tokens dropped on the source; the target keeps them"),
    Row("bite_unigram", "BITE+Unigram", {"scheme": "bite", "model_type": "unigram"},
        "BITE on the English source, Unigram trained on BITE(en)+de with the inflection symbols"),
    Row("wordmap", "Wordmap", {"scheme": "wordmap", "model_type": "unigram"},
        "German target: verbs by Wordmap, other words by a German Unigram; English source: Unigram"),
    Row("flota", "FLOTA k=3", {"scheme": "flota", "model_type": "unigram", "flota_k": 3},
        "English source by FLOTA (k=3) over a joint Unigram model's vocabulary (the Unigram row's); target Unigram"),
]}
