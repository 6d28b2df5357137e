"""``--de-init CHECKPOINT``: both rows continue masked-LM training from a user's German RoBERTa (fairseq format, its
``dict.txt`` beside it) instead of pretraining from scratch, as the thesis continued bert-base-german-cased's.

Per row, inside its binarisation stage once the row's own dictionary is learned: ``train_scripts/extend_checkpoint.py``
writes ``rows/ROW/init/{dict.txt, checkpoint.pt}`` (the checkpoint's dictionary plus the row's pieces it lacks, the
new embedding rows the mean of the checkpoint's pieces that spell them), then the row's text is binarised again
with that dictionary (``binarize --srcdict``); every pretraining run of the row restores that checkpoint
(:class:`InitPlan`: ``--restore-file`` and fairseq's resets of optimiser, data loader, meters and schedule).  The
architecture options of the preset must be the checkpoint's (the gpu preset's: RoBERTa-base).
"""
from __future__ import annotations

from pathlib import Path

from train_scripts.demo.lm.plan import Plan

#: fairseq-train's options of a run that starts from another run's weights, not its training state
RESETS = ("--reset-optimizer", "--reset-dataloader", "--reset-meters", "--reset-lr-scheduler")


def init_options() -> tuple:
    """The pretraining options every row's runs share under ``--de-init`` (the restore file is the row's own:
    :class:`InitPlan`)."""
    return RESETS


def init_dir(root: Path, row: str) -> Path:
    """The row's extended copy of ``--de-init``'s checkpoint and its dictionary (``rows/ROW/init``)."""
    return root / "rows" / row / "init"


class InitPlan(Plan):
    """The pipeline's plan whose pretraining runs restore the row's extended checkpoint."""

    def pretrain_command(self, row: str, seed: int = 1) -> list:
        return super().pretrain_command(row, seed) + ["--restore-file", init_dir(self.root, row) / "checkpoint.pt"]


def extend_command(a, plan, paths, row: str) -> list:
    """The command that writes the row's extended checkpoint and dictionary."""
    return ["python", "-m", "train_scripts.extend_checkpoint", "--checkpoint", a.init, "--row-dict",
            plan.lm_dir(row) / "data-bin" / "dict.txt", "--out", paths.init(row)]


def extend_stage(run, row: str) -> dict:
    """Stage ``init/ROW`` of a :class:`~train_scripts.demo.german.steps.GermanRun`: the extended checkpoint, then
    the row's text binarised again with its dictionary; the extension's record."""
    import json

    a, plan, paths = run.a, run.plan, run.paths
    cmd = extend_command(a, plan, paths, row)
    rebinarize = [*plan.binarize_command(row), "--srcdict", paths.init(row) / "dict.txt"]

    def go():
        run.runner.run(f"init/{row}", cmd, run.logs / f"{row}.init.log")
        run.runner.run(f"init/{row}/binarize", rebinarize, run.logs / f"{row}.init-binarize.log")
        return json.loads((paths.init(row) / "extend.json").read_text())

    return run.stages.run(f"init/{row}", [paths.init(row)], go, key=[str(x) for x in cmd + rebinarize],
                          after=(f"lm/{row}/binarize",), announce=False)
