"""The demo's statistics policy, declared once and applied by every part's report (translation, pretraining,
German); ``docs/demo.md`` ("The statistics policy") states it in words.

1. **The floor gate.**  A model cell is judged against a trivial non-neural baseline of its task, the character
   n-gram Naive Bayes *floor*, with the floor's sampling error: FLOOR_Z binomial standard errors of the floor's
   score p on the n test examples, FLOOR_Z * sqrt(p(1-p)/n) * 100 points (a macro F1 is treated as a proportion
   for this).  A mean is **above** the floor when it exceeds it by more than that, **below** when it is under it
   by more than that, else **at** the floor (:func:`floor_state`).  A comparison between two cells (two
   tokenisers, two segmentations) is drawn only where both are above (:func:`drawn`); where no floor was measured
   there is nothing to clear.  Pretrained against random weights is the measure of what pretraining adds, not a
   comparison of two trained cells: it is not gated, and the pretrained cell's floor state is shown beside it.
2. **Test families.**  Each part declares its *primary* tests (:class:`Family`); Holm's correction runs over
   them and nothing else.  Every other test is *exploratory*: reported apart, its p unchanged and labelled
   :data:`EXPLORATORY`.  The translation part's paired bootstrap tests are its primaries, reported uncorrected
   as before, with the number expected significant by chance beside them (``correction=None``).
3. **Collapsed runs.**  A fine-tuning run whose best checkpoint predicts one class on dev has *collapsed*.  It is
   a real outcome: it stays in every mean and test, and the count of collapsed runs is shown
   (:func:`runs_summary`; the pretraining part also shows the mean without them, marked "kept").
4. **Verdict words.**  :func:`verdict` gives the word of a comparison: "higher" / "lower" (or the part's own pair,
   e.g. "better" / "worse") when p (Holm-adjusted where the family corrects) is under ALPHA, **"not shown"**
   when it is not (an absence of evidence, never "no difference"), **"not drawn"** when its cells are not both
   above the floor.  Pretrained against random keeps the interval rule of :func:`statistics.compare` (helped /
   hurt / no effect / undetermined), read with the family's adjusted p (:func:`control_verdict`).
"""
from __future__ import annotations

from typing import Iterable, Optional

from train_scripts.demo.statistics import binomial_margin, holm, summary

#: the significance level of every verdict
ALPHA = 0.05
#: the floor's sampling error, in binomial standard errors of its score on the test examples (one: about 0.5
#: points at 8,000 examples; 1.96 would make it a 95% interval)
FLOOR_Z = 1.0
#: the floor states (:func:`floor_state`), as the reports word them
FLOOR_WORDS = {"above": "above the floor", "at": "at the floor", "below": "below the floor"}
#: the verdict of a non-significant comparison, and of one whose cells are not both above the floor
NOT_SHOWN, NOT_DRAWN = "not shown", "not drawn"
#: the label of a test outside its part's primary family
EXPLORATORY = "exploratory, uncorrected"


# --- the floor gate -------------------------------------------------------------------------------------------

def floor_margin(floor: Optional[float], n: Optional[int]) -> Optional[float]:
    """The floor's sampling error in points: FLOOR_Z * sqrt(p(1-p)/n) * 100 for its score p (points / 100) on n
    test examples; None without a floor or n."""
    return None if floor is None else binomial_margin(floor / 100, n, FLOOR_Z)


def floor_state(mean: Optional[float], floor: Optional[float], margin: Optional[float]) -> Optional[str]:
    """"above" when ``mean`` exceeds ``floor`` by more than ``margin``, "below" when it is under it by more, else
    "at"; None without a floor or a mean (nothing to clear)."""
    if floor is None or mean is None:
        return None
    m = margin or 0.0
    return "above" if mean > floor + m else "below" if mean < floor - m else "at"


def drawn(*states: Optional[str]) -> bool:
    """Whether a comparison of cells in these floor states is drawn: every one above the floor (or unfloored)."""
    return all(s in ("above", None) for s in states)


def floor_note(state: Optional[str]) -> str:
    """`` (below the floor)`` / `` (at the floor)`` after a mean that does not clear the floor, else nothing."""
    return f" ({FLOOR_WORDS[state]})" if state in ("at", "below") else ""


def gate_reason(states: dict) -> Optional[str]:
    """Why a comparison is not drawn, ``{cell label: floor state}`` -> "not drawn: Unigram is below the floor"
    (the first cell that does not clear it), or None when it is drawn."""
    for label, state in states.items():
        if not drawn(state):
            return f"{NOT_DRAWN}: {label} is {FLOOR_WORDS[state]}"
    return None


# --- verdict words --------------------------------------------------------------------------------------------

def verdict(p: Optional[float], diff: Optional[float], states: Iterable[Optional[str]] = (),
            words: tuple = ("higher", "lower"), alpha: float = ALPHA) -> str:
    """The one verdict word of a comparison between two cells: :data:`NOT_DRAWN` unless every cell is above the
    floor, :data:`NOT_SHOWN` without a p under ``alpha`` (no test, or a non-significant one), else ``words[0]``
    when ``diff`` > 0 and ``words[1]`` when it is < 0.  ``p``: Holm-adjusted where the part's family corrects."""
    if not drawn(*states):
        return NOT_DRAWN
    if p is None or diff is None or p >= alpha or diff == 0:
        return NOT_SHOWN
    return words[0] if diff > 0 else words[1]


def control_verdict(c: dict, q: Optional[float], alpha: float = ALPHA) -> str:
    """Pretrained against random init (:func:`statistics.compare`'s interval rule) with the family's adjusted p
    ``q``: "helped" and "hurt" need ``q`` < alpha as well (else "undetermined"); the other verdicts stand."""
    v = c.get("verdict", "undetermined")
    if v in ("helped", "hurt") and (q is None or q >= alpha):
        return "undetermined"
    return v


# --- test families --------------------------------------------------------------------------------------------

class Family:
    """A part's tests by name: :meth:`primary` ones, Holm-adjusted together (``correction="holm"``) or reported
    as they are (``None``), and :meth:`exploratory` ones, never adjusted and labelled :data:`EXPLORATORY`."""

    def __init__(self, part: str, correction: Optional[str] = "holm"):
        self.part, self.correction = part, correction
        self._primary: list = []
        self._exploratory: list = []

    def primary(self, name: str, p: Optional[float]) -> None:
        self._primary.append((name, p))

    def exploratory(self, name: str, p: Optional[float]) -> None:
        self._exploratory.append((name, p))

    def adjusted(self) -> dict:
        """``{name: p}`` of the primary tests, Holm-adjusted over them (as they are without a correction)."""
        ps = [p for _, p in self._primary]
        qs = holm(ps) if self.correction == "holm" else ps
        return {name: q for (name, _), q in zip(self._primary, qs)}

    def p(self, name: str) -> Optional[float]:
        """A test's p as the verdicts read it: adjusted for a primary test, as it is for an exploratory one."""
        adjusted = self.adjusted()
        return adjusted[name] if name in adjusted else dict(self._exploratory).get(name)

    def record(self) -> dict:
        """The family as results.json stores it."""
        adjusted = self.adjusted()
        return {"part": self.part, "correction": self.correction,
                "tests": sum(p is not None for _, p in self._primary),
                "primary": [{"test": n, "p": p, "holm_p": adjusted[n] if self.correction == "holm" else None}
                            for n, p in self._primary],
                "exploratory": [{"test": n, "p": p, "label": EXPLORATORY} for n, p in self._exploratory]}


# --- collapsed runs -------------------------------------------------------------------------------------------

def runs_summary(values: list, collapsed: list) -> dict:
    """Every run's score in the mean (collapsed ones too: :func:`statistics.summary` of ``values``), with
    ``collapsed``: how many of them collapsed (``collapsed`` is one flag per value) and ``kept``: the summary
    without them, shown beside where a part shows it."""
    kept = [v for v, c in zip(values, collapsed) if not c]
    return {**summary(list(values)), "collapsed": sum(bool(c) for c in collapsed), "kept": summary(kept)}
