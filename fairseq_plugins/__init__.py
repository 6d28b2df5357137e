"""fairseq plugin: ``--user-dir $(python -m fairseq_plugins)`` registers every scheme of this project.

Importing the package applies the torch compatibility fixes (:mod:`fairseq_plugins.compat`) and imports every
adapter module in this directory, so a new scheme is a new file here and nothing else.

The one exception is ``python -m fairseq_plugins``, which only prints this directory: Python imports the package
before it runs ``__main__``, and importing torch and fairseq for that would take seconds.  While ``-m`` locates
its module, ``sys.argv[0]`` is ``"-m"`` (Python's documented behaviour), so the adapters are skipped then; any other
import (fairseq's ``--user-dir``, ``import fairseq_plugins``, ``python -m train_scripts...``) registers them.
"""
import importlib
import pkgutil
import sys


def register() -> None:
    """Apply the compatibility fixes and import (register) every adapter module; importing twice is harmless."""
    from fairseq_plugins import compat

    compat.apply()
    for info in pkgutil.iter_modules(__path__):
        if info.name not in ("compat", "__main__") and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


if not (sys.argv[:1] == ["-m"] and "fairseq" not in sys.modules):
    register()
