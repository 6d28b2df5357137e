"""The recipes a researcher runs (binarize, launch, average_checkpoints, evaluate, the ``.sh`` training recipes, ...)
and, in :mod:`train_scripts.demo`, the demo built from them.

The demo's modules lived here before :mod:`train_scripts.demo` held them; their older paths still import, as the same
module objects (through :data:`preprocess.MOVED`): the ``morphtok-demo`` and ``morphtok-report`` an earlier install
wrote run ``train_scripts.pipeline`` and ``train_scripts.report``."""
from preprocess import MOVED

MOVED.update({f"train_scripts.{name}": f"train_scripts.demo.{name}" for name in (
    "pipeline", "report", "demo_report", "lm_corpus", "lm_demo", "lm_plan", "lm_report", "lm_scheduler", "presets",
    "report_document", "report_plots", "report_tables", "stages", "translation_rows")})
