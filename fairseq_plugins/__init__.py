"""fairseq plugin: ``--user-dir $(python -m fairseq_plugins)`` registers every scheme of this project.

Importing the package applies the torch compatibility fixes (:mod:`fairseq_plugins.compat`) and imports every
adapter module in this directory, so a new scheme is a new file here and nothing else.
"""
import importlib
import pkgutil

from fairseq_plugins import compat as _compat

_compat.apply()

for _info in pkgutil.iter_modules(__path__):
    if _info.name not in ("compat", "__main__") and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
