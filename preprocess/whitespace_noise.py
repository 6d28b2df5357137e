"""Whitespace noise (FLOTA paper, section 4 "Robustness") and the per-line generator every seeded perturbation uses.

A tokeniser may import this module (``preprocess.flota``'s ``--noise-p``); the test-set perturbations and their
command line (``preprocess.evaluate.noise``) build on it, so the noise of an encoder and of a perturbed test file
are one function."""
from __future__ import annotations

import math
import random

from preprocess.common import UserError


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
