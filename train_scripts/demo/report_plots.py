"""The demo's plots, shared by every part: matplotlib on the Agg backend (files, no display) and one way to save a
figure; each part draws its own figures with them."""
from __future__ import annotations

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

logging.getLogger("matplotlib").setLevel(logging.WARNING)  # fairseq's imports may leave the root at DEBUG

__all__ = ["plt", "save"]


def save(fig, path: str) -> str:
    """Every plot of the demo's report is saved so: laid out tight, 110 dpi, closed."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
