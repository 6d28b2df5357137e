"""``python -m preprocess.export``: the ``morphtok-export`` command."""
from preprocess.export import cli

if __name__ == "__main__":
    cli()
