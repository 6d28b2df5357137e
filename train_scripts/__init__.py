"""The recipes a researcher runs (binarize, launch, average_checkpoints, evaluate, the ``.sh`` training recipes, ...)
and, in :mod:`train_scripts.demo`, the demo built from them.

The demo's modules lived here before :mod:`train_scripts.demo` held them; their older paths still import, as the same
module objects (through :data:`preprocess.MOVED`): the ``morphtok-demo`` and ``morphtok-report`` an earlier install
wrote run ``train_scripts.pipeline`` and ``train_scripts.report``."""
from preprocess import MOVED

#: the demo's modules before it had parts (``train_scripts.demo.pipeline`` ...), and before that in train_scripts/
DEMO_MOVED = {"pipeline": "main", "report": "translation.report", "demo_report": "demo_report",
              "translation_rows": "translation.rows", "report_tables": "translation.tables",
              "report_plots": "report_plots", "lm_demo": "pretraining.part", "lm_plan": "pretraining.plan",
              "lm_corpus": "pretraining.corpus", "lm_scheduler": "pretraining.scheduler",
              "lm_report": "pretraining.report", "presets": "presets", "report_document": "report_document",
              "stages": "stages"}
MOVED.update({f"train_scripts.{old}": f"train_scripts.demo.{new}" for old, new in DEMO_MOVED.items()})
MOVED.update({f"train_scripts.demo.{old}": f"train_scripts.demo.{new}" for old, new in DEMO_MOVED.items()
              if old != new})
