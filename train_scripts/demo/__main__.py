"""``python -m train_scripts.demo``: ``morphtok-demo`` (``train_scripts/demo/main.py``)."""
from train_scripts.demo.main import cli

cli()
