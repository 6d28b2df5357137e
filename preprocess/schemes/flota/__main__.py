"""``python -m preprocess.schemes.flota`` (or the older ``python -m preprocess.flota``): the ``morphtok-flota`` command."""
from preprocess.schemes.flota import cli

if __name__ == "__main__":
    cli()
