"""``python -m preprocess.wordmap``: the package's command line (:mod:`preprocess.wordmap.command`)."""
from preprocess.wordmap.command import cli

if __name__ == "__main__":
    cli()
