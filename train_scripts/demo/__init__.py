"""``make demo`` (``morphtok-demo``): the comparison report built from the recipes in ``train_scripts/``.

The layout shows the architecture: the machinery every part shares lies here, and each part in a folder of its own.

* ``main.py``: the entry point and the one run skeleton (one parser, the command line read once, one ``--jobs``
  policy, each part on the shared machinery, one report); ``part.py``: the :class:`~train_scripts.demo.part.Part`
  interface a part implements.
* shared by every part, importing none: ``stages.py`` (commands, resumable stages, the scheduler, clean stops),
  ``presets.py`` (budget presets as options), ``rows.py`` (the scheme configurations a part picks its rows from),
  ``statistics.py`` (Welch, the pretrained-vs-control verdict, Holm), ``report_document.py`` (sections, tables and
  marks, rendered to Markdown and html), ``report_plots.py`` (matplotlib set-up), ``demo_report.py`` (the one report
  from every part's results).
* ``translation/``: every scheme through the translation recipes on Multi30k; ``pretraining/``: RoBERTa pretraining
  -> fine-tuning (space-as-token, FLOTA).

Nothing outside this package imports it: the recipes a user runs on a cluster stay in ``train_scripts/``.
"""
