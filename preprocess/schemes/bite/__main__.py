"""``python -m preprocess.schemes.bite`` (or the older ``python -m preprocess.bite``): the ``morphtok-bite`` command."""
from preprocess.schemes.bite import cli

if __name__ == "__main__":
    cli()
