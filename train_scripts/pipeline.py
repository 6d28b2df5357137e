"""Moved to ``train_scripts.demo.pipeline``: this name keeps an older install's console script and
``python -m train_scripts.pipeline`` working."""
from train_scripts.demo.pipeline import cli, main  # noqa: F401

if __name__ == "__main__":
    cli()
