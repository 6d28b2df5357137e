"""Whitespace noise (FLOTA paper, section 4 "Robustness") and the per-line generator every seeded perturbation uses.

A tokeniser may import this module (``preprocess.schemes.flota``'s ``--noise-p``); the test-set perturbations and their
command line (``preprocess.evaluate.noise``) build on it, so the noise of an encoder and of a perturbed test file
are one function."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from preprocess.common import UserError
from preprocess.options import option

#: the FLOTA paper's whitespace noise (section 4 "Robustness": p = 0.3, unseen noise, test set only): the default
#: fraction of ``python -m preprocess.evaluate.noise perturb`` and of the demos' noisy test sets
PAPER_FRACTION = 0.3
#: the demos' noise seed (``morphtok-demo --noise-seed``, ``--lm-noise-seed``).  Two seeds exist on purpose: the
#: library commands (encode, classification data, perturb) default to :attr:`NoiseOptions.noise_seed` (0), while the
#: demos have recorded every result with seed 1 since their first run; changing either would change those outputs
DEMO_SEED = 1


@dataclass
class NoiseOptions:
    """The whitespace noise of an encoder or a data set (``--noise-p`` / ``--noise-seed``), declared once: FLOTA's
    encode options (``preprocess.encode --scheme flota``) and ``train_scripts.classification_data`` derive from
    these fields (see :mod:`preprocess.options`).  The default fraction is 0: no noise unless asked for."""

    noise_p: float = option(0.0, "drop the space between adjacent words with this probability before tokenising")
    noise_seed: int = option(0, "seed of the whitespace noise")


def check_fraction(fraction) -> float:
    """``fraction`` as a float in [0, 1], else :class:`UserError` (NaN and non-numbers included)."""
    try:
        value = float(fraction)
    except (TypeError, ValueError):
        raise UserError(f"noise fraction must be a number between 0 and 1, not {fraction!r}") from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise UserError(f"noise fraction must be between 0 and 1, not {fraction!r}")
    return value


def line_rng(seed: int, line: str) -> random.Random:
    """A generator seeded by (seed, line text): the same noise whatever the chunking or worker count."""
    return random.Random(f"{seed}\t{line}")


def inject_whitespace_noise(text: str, p: float, rng: random.Random) -> str:
    """Drop the space between each pair of adjacent words with probability ``p`` (the paper's noise, p = 0.3).

    Words are whitespace-separated; the result has single spaces.  An empty line stays empty.
    """
    words = text.split()
    if not words:
        return ""
    out = [words[0]]
    for w in words[1:]:
        if rng.random() < p:
            out[-1] += w
        else:
            out.append(w)
    return " ".join(out)
