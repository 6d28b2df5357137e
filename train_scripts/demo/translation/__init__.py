"""The translation part of ``make demo`` (``--part translation``): every scheme through the translation recipes on
Multi30k En->De.  ``part.py``: the part (options, settings, run); ``rows.py``: how one row runs; ``report.py``
with ``tables.py`` and ``plots.py``: its sections of the report."""
from train_scripts.demo.translation.part import PART

__all__ = ["PART"]
