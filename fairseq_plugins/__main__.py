"""``python -m fairseq_plugins`` prints the directory to pass to fairseq's ``--user-dir``.

It imports nothing but ``os`` (the package skips its adapters under ``-m``, see ``__init__``), so it returns in
a few tens of milliseconds and can sit inside every command: ``--user-dir $(python -m fairseq_plugins)``.
"""
import os

print(os.path.dirname(os.path.abspath(__file__)))
