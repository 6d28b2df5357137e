"""``--de-init`` end to end on a tiny checkpoint this test builds itself: pretrain a tiny RoBERTa on one dictionary,
extend its checkpoint by another row's pieces (``train_scripts/extend_checkpoint.py``), binarise that row's text with
the extended dictionary and continue masked-LM training from the extended checkpoint, as the German part's
``init/ROW`` stage and its ``InitPlan`` pretraining commands do."""
from __future__ import annotations

import json

import pytest

from tests.conftest import run_command


def _raw(src, dest, train=400, valid=40):
    dest.mkdir(parents=True)
    from preprocess.files.inputs import read_lines

    lines = list(read_lines(str(next(p for p in (src / "train.de", src / "train.de.gz") if p.exists()))))
    (dest / "train.de").write_text("\n".join(lines[:train]) + "\n", encoding="utf-8")
    (dest / "valid.de").write_text("\n".join(lines[train:train + valid]) + "\n", encoding="utf-8")


@pytest.mark.slow
def test_continue_pretraining_from_an_extended_tiny_checkpoint(shared_path, tmp_path):
    import torch

    from train_scripts.binarize import binarize
    from train_scripts.demo.german.init import RESETS

    raw = tmp_path / "raw"
    _raw(shared_path("multi30k"), raw)
    base_lm, row_lm = tmp_path / "base-lm", tmp_path / "row-lm"
    binarize({"scheme": "sentencepiece", "model_type": "unigram", "vocab_size": 300}, str(raw), str(base_lm), "de",
             None, lm=True)
    base = tmp_path / "base"
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", base_lm, "--save-dir", base, "--tiny",
                 "--cpu", "--max-update", "4"])
    (base / "dict.txt").write_text((base_lm / "data-bin" / "dict.txt").read_text(encoding="utf-8"),
                                   encoding="utf-8")     # the user's layout: dict.txt beside the checkpoint
    # the row: another vocabulary of the same text, so that it has pieces the checkpoint lacks
    binarize({"scheme": "sentencepiece", "model_type": "unigram", "vocab_size": 450}, str(raw), str(row_lm), "de",
             None, lm=True)
    init = tmp_path / "init"
    run_command(["python", "-m", "train_scripts.extend_checkpoint", "--checkpoint", base / "checkpoint_last.pt",
                 "--row-dict", row_lm / "data-bin" / "dict.txt", "--out", init])
    record = json.loads((init / "extend.json").read_text())
    assert record["added"] > 0 and record["entries"] == record["base_entries"] + record["added"]
    assert record["spelled"] > 0                          # most new pieces are spelled by the base's pieces
    binarize({"scheme": "sentencepiece", "model_type": "unigram", "vocab_size": 450}, str(raw), str(row_lm), "de",
             None, lm=True, srcdict=str(init / "dict.txt"))
    assert (row_lm / "data-bin" / "dict.txt").read_text(encoding="utf-8") == \
        (init / "dict.txt").read_text(encoding="utf-8")
    cont = tmp_path / "continued"
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", row_lm, "--save-dir", cont, "--tiny",
                 "--cpu", "--max-update", "8", "--restore-file", init / "checkpoint.pt", *RESETS])
    before = torch.load(init / "checkpoint.pt", map_location="cpu", weights_only=False)["model"]
    after = torch.load(cont / "checkpoint_last.pt", map_location="cpu", weights_only=False)["model"]
    key = next(k for k in before if k.endswith("embed_tokens.weight"))
    assert after[key].shape == before[key].shape       # the extended dictionary, restored and trained on
    assert after[key].shape[0] == 4 + record["entries"] + 1
    # restored, not trained from random weights: 8 updates at lr <= 5e-4 move every weight by well under 0.05 (a
    # fresh initialisation, normal with sd 0.02, differs from the checkpoint's by more somewhere)
    assert (after[key] - before[key]).abs().max() < 0.05
