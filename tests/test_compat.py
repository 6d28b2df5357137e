"""The plugin's fixes for fairseq-fixed on current torch."""
import argparse

import numpy as np
import torch


def test_batches_keep_every_index():
    import fairseq_plugins  # noqa: F401  applies the fixes
    from fairseq.data import data_utils

    for n in (1, 7, 8, 30, 33, 100):
        sizes = np.full(n, 20, dtype=np.int64)
        for vec in (sizes, None):
            batches = data_utils.batch_by_size(np.arange(n), lambda i: 20, num_tokens_vec=vec, max_sentences=64,
                                               required_batch_size_multiple=8)
            assert sorted(int(i) for b in batches for i in b) == list(range(n))
            assert all(len(b) % 8 == 0 for b in batches[:-1])


def test_fairseq_checkpoint_loading_trusts_its_own_pickles(tmp_path):
    import fairseq_plugins  # noqa: F401
    from fairseq import checkpoint_utils

    path = tmp_path / "ckpt.pt"
    torch.save({"args": argparse.Namespace(arch="transformer"), "model": {"w": torch.ones(2)}}, path)
    state = checkpoint_utils.torch.load(path, map_location="cpu")  # the call load_checkpoint_to_cpu makes
    assert state["args"].arch == "transformer"
    assert state["model"]["w"].tolist() == [1.0, 1.0]
    # torch.load elsewhere keeps its safe default
    if fairseq_plugins.compat.needs_patch(torch):
        try:
            torch.load(path)
        except Exception as exc:  # noqa: BLE001 - the exact class differs across torch versions
            assert "weights" in str(exc).lower()
        else:
            raise AssertionError("plain torch.load should still refuse pickled Namespace objects")
