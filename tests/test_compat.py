"""The plugin's fixes for fairseq-fixed on current torch: generation keeps every sentence while training and
validation batches stay fairseq's own; checkpoints load as data (weights_only=True and an allowlist)."""
import argparse
import collections
import fractions
import os
import pickle

import pytest
import torch

import fairseq_plugins  # noqa: F401  applies the fixes
from fairseq_plugins import compat


def _dataset(n):
    from fairseq.data import Dictionary, LanguagePairDataset

    d = Dictionary()
    d.add_symbol("a")
    src = [torch.tensor([d.index("a"), d.eos()]) for _ in range(n)]
    return LanguagePairDataset(src, [2] * n, d, tgt=src, tgt_sizes=[2] * n, tgt_dict=d)


def epoch_batches(n=30, multiple=8):
    """Batch sizes of one epoch as fairseq builds them (FairseqTask.get_batch_iterator + next_epoch_itr)."""
    from fairseq.tasks import FairseqTask

    task = FairseqTask(argparse.Namespace())
    itr = task.get_batch_iterator(_dataset(n), max_sentences=8, required_batch_size_multiple=multiple,
                                  disable_iterator_cache=True).next_epoch_itr(shuffle=False)
    return [len(batch["id"]) for batch in itr]


def as_if_called_from(path, fn):
    """Call ``fn`` from a frame whose code lives in ``path`` (how fairseq_cli/generate.py's frames look)."""
    scope = {"fn": fn}
    exec(compile("def caller():\n    return fn()\n", path, "exec"), scope)
    return scope["caller"]()


@pytest.fixture(autouse=True)
def _default_mode(monkeypatch):
    monkeypatch.delenv(compat.KEEP_LAST_BATCH_ENV, raising=False)
    monkeypatch.delenv(compat.TRUST_GLOBALS_ENV, raising=False)
    monkeypatch.delenv(compat.TRUST_ALL_ENV, raising=False)


def test_training_and_validation_batches_are_fairseqs_own():
    """fairseq-fixed drops the last partial batch in training; the plugin must not change that."""
    assert "fairseq.data.data_utils.batch_by_size" in compat.apply()  # the plugin is loaded and its fix active
    assert epoch_batches() == [8, 8, 8]  # 30 items, multiple 8: fairseq's own 3 batches of 24 items
    assert as_if_called_from("/x/fairseq/trainer.py", epoch_batches) == [8, 8, 8]


@pytest.mark.parametrize("entry", compat.GENERATION_FILES)
def test_generation_keeps_every_sentence(entry):
    assert as_if_called_from(f"/site-packages/{entry}", epoch_batches) == [8, 8, 8, 6]


def test_batches_keep_every_index_when_asked(monkeypatch):
    import numpy as np
    from fairseq.data import data_utils

    monkeypatch.setenv(compat.KEEP_LAST_BATCH_ENV, "always")
    for n in (1, 7, 8, 30, 33, 100):
        sizes = np.full(n, 20, dtype=np.int64)
        for vec in (sizes, None):
            batches = data_utils.batch_by_size(np.arange(n), lambda i: 20, num_tokens_vec=vec, max_sentences=64,
                                               required_batch_size_multiple=8)
            assert sorted(int(i) for b in batches for i in b) == list(range(n))
            assert all(len(b) % 8 == 0 for b in batches[:-1])
    monkeypatch.setenv(compat.KEEP_LAST_BATCH_ENV, "never")
    assert as_if_called_from("/x/fairseq_cli/generate.py", epoch_batches) == [8, 8, 8]
    monkeypatch.setenv(compat.KEEP_LAST_BATCH_ENV, "sometimes")
    with pytest.raises(compat.UserError, match=compat.KEEP_LAST_BATCH_ENV):
        epoch_batches()


def test_a_fix_that_fails_is_reported(monkeypatch):
    def broken():
        raise ImportError("no fairseq.data_utils here")

    monkeypatch.setattr(compat, "_keep_last_batch", broken)
    with pytest.warns(RuntimeWarning, match="could not apply the generation batch_by_size fix.*no fairseq"):
        patched = compat.apply()
    assert "fairseq.data.data_utils.batch_by_size" not in patched


# --- checkpoints are data -------------------------------------------------------------------------------------

def _load(path):
    from fairseq import checkpoint_utils

    with open(path, "rb") as f:  # the call fairseq's load_checkpoint_to_cpu makes (generate, --restore-file, hub)
        return checkpoint_utils.torch.load(f, map_location=torch.device("cpu"))


def test_fairseq_checkpoint_loads_as_data(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save({"args": argparse.Namespace(arch="transformer"), "model": {"w": torch.ones(2)}}, path)
    state = _load(path)
    assert state["args"].arch == "transformer"
    assert state["model"]["w"].tolist() == [1.0, 1.0]
    # torch.load elsewhere keeps its safe default and its refusal
    if compat.needs_patch(torch):
        with pytest.raises(pickle.UnpicklingError):
            torch.load(path)


def test_omegaconf_checkpoint_loads(tmp_path):
    """Official checkpoints of the hydra era may pickle ``cfg`` as an omegaconf DictConfig (with a Namespace in
    it for legacy architectures)."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.create({"model": {"_name": "transformer", "dropout": 0.1}, "task": {"langs": ["en", "de"]},
                            "common": {"seed": 1, "fp16": False}}, flags={"allow_objects": True})
    cfg.model.legacy = argparse.Namespace(arch="transformer")
    path = tmp_path / "official.pt"
    torch.save({"args": None, "cfg": cfg, "model": collections.OrderedDict(w=torch.zeros(3))}, path)
    state = _load(path)
    assert state["cfg"].task.langs == ["en", "de"] and state["cfg"].model.legacy.arch == "transformer"


class _Hostile:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class _Evil:
    def __reduce__(self):
        return eval, ("print('pwned')",)


def test_hostile_checkpoint_is_refused_in_one_line(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.pt"
    torch.save({"args": argparse.Namespace(arch="x"), "model": {}, "extra": _Hostile(marker)}, path)
    with pytest.raises(compat.CheckpointRefused) as info:
        _load(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert f"the global {os.system.__module__}.system" in message and str(path) in message
    assert f"{compat.TRUST_ALL_ENV}=1" in message  # torch blocks os/posix globals even when allowlisted
    assert not marker.exists()
    with pytest.raises(compat.CheckpointRefused, match="the global eval"):
        torch.save({"model": {}, "extra": _Evil()}, path)
        _load(path)


def test_a_trusted_global_is_allowed_explicitly(tmp_path, monkeypatch):
    path = tmp_path / "fraction.pt"
    torch.save({"model": {}, "extra": fractions.Fraction(1, 3)}, path)
    with pytest.raises(compat.CheckpointRefused, match="the global fractions.Fraction"):
        _load(path)
    monkeypatch.setenv(compat.TRUST_GLOBALS_ENV, "fractions.Fraction")
    assert _load(path)["extra"] == fractions.Fraction(1, 3)
    monkeypatch.setenv(compat.TRUST_GLOBALS_ENV, "collections.NoSuchThing")
    with pytest.raises(compat.UserError, match="cannot import 'collections.NoSuchThing'"):
        _load(path)


def test_fairseq_tool_refuses_in_one_line_exit_2(tmp_path, run_cli):
    """Inside a fairseq command-line tool the refusal is ``error: ...`` on one line and exit status 2."""
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.pt"
    torch.save({"args": argparse.Namespace(arch="x"), "model": {}, "extra": _Hostile(marker)}, path)
    code = ("import sys; sys.argv[0] = 'fairseq-generate'\n"
            "import fairseq_plugins\nfrom fairseq import checkpoint_utils\n"
            f"checkpoint_utils.load_checkpoint_to_cpu({str(path)!r})\n")
    proc = run_cli(["python", "-W", "ignore", "-c", code], check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: refusing to load") and str(path) in lines[0]
    assert not marker.exists()
