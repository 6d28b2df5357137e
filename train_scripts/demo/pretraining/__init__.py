"""The pretraining part of ``make demo`` (``--part pretraining``): RoBERTa pretraining -> fine-tuning, the
space-as-token and FLOTA papers' questions.  ``part.py``: the part (options, settings, run); ``plan.py``: rows,
presets and commands; ``corpus.py``: the pretraining text and its leakage rules; ``scheduler.py``: running the plan
and collecting its results; ``report.py``: its statistics and sections of the report."""
from train_scripts.demo.pretraining.part import PART

__all__ = ["PART"]
