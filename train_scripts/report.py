"""Moved to ``train_scripts.demo.report``: this name keeps an older install's console script and
``python -m train_scripts.report`` working."""
from train_scripts.demo.report import cli, main  # noqa: F401

if __name__ == "__main__":
    cli()
