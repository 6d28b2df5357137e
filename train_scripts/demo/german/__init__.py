"""The German part of ``make demo`` (``--part german``): Wordmap's own question (Jung 2023), Wordmap against Unigram
pretrained on the same German text.  ``part.py``: the part (options, settings, run); ``plan.py``: rows, presets,
paths; ``steps.py``: its steps on the scheduler (the pretraining part's, on German, and the verb measures);
``report.py``: statistics, tables and the conclusions on HYP1 and HYP2."""
from train_scripts.demo.german.part import PART

__all__ = ["PART"]
