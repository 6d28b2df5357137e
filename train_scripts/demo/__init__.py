"""``make demo`` (``morphtok-demo``): the comparison report built from the recipes in ``train_scripts/``.

Its two parts share one parser (``pipeline.py``), one preset mechanism (``presets.py``), one scheduler and its
resumable stages (``stages.py``) and one report (``demo_report.py``, rendered by ``report_document.py``).  The
translation part: ``pipeline.py`` and ``translation_rows.py``, its report ``report.py`` (with ``report_tables.py``
and ``report_plots.py``); the pretraining part: ``lm_demo.py``, ``lm_plan.py``, ``lm_corpus.py``,
``lm_scheduler.py``, its report ``lm_report.py``.  Nothing outside this package imports it: the recipes a user
runs on a cluster stay in ``train_scripts/``.
"""
