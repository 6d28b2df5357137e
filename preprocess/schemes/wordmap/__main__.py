"""``python -m preprocess.schemes.wordmap``: the package's command line (:mod:`preprocess.schemes.wordmap.command`)."""
from preprocess.schemes.wordmap.command import cli

if __name__ == "__main__":
    cli()
