"""The older flat module paths of ``preprocess`` (before the schemes, models, tagging and files folders) still import:
console scripts installed before the move and ``python -m preprocess.flota`` name them (preprocess.MOVED)."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import preprocess
import train_scripts  # noqa: F401  (adds the demo modules' older paths to MOVED)


@pytest.mark.parametrize("old", sorted(preprocess.MOVED))
def test_an_old_path_is_the_new_module(old):
    new = importlib.import_module(preprocess.MOVED[old])
    assert importlib.import_module(old) is new
    assert new.__spec__.name == preprocess.MOVED[old]   # the module keeps its own spec


def test_every_old_path_is_gone_from_the_tree():
    """An alias never hides a file: a module at the old path would be imported instead of the new one."""
    root = Path(preprocess.__file__).parent.parent
    for old in preprocess.MOVED:
        path = root / old.replace(".", "/")
        assert not path.with_suffix(".py").exists() and not path.is_dir(), path


def test_an_old_console_script_and_python_m_still_run(tmp_path):
    """What a console-script wrapper installed before the move runs (``from preprocess.bite import cli``), and
    ``python -m`` of an old path (a module, a package with ``__main__``)."""
    wrapper = "import sys\nfrom {} import cli\nsys.argv[0] = 'morphtok-x'\nsys.exit(cli())\n"
    for argv in ([sys.executable, "-c", wrapper.format("preprocess.spm"), "--help"],
                 [sys.executable, "-c", wrapper.format("train_scripts.pipeline"), "--help"],
                 [sys.executable, "-m", "preprocess.flota", "dict", "--help"],
                 [sys.executable, "-m", "preprocess.bite", "--help"],
                 [sys.executable, "-m", "train_scripts.report", "--help"]):
        done = subprocess.run(argv, capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("usage:"), (argv, done.stderr[-2000:])
