"""fairseq's hub interface for models trained by the recipes: the scheme's ``--bpe``/``--tokenizer`` options as
``from_pretrained`` keyword arguments.

    from train_scripts.hub import load_translation
    model = load_translation("work/spaces", "ckpt/spaces/checkpoint_best.pt")
    model.translate("Two dogs are running .", beam=5)

``from_pretrained`` takes the same options as the command-line tools, as keyword arguments (``--spaces-model M``
-> ``spaces_model="M"``) plus ``user_dir`` so that fairseq knows the schemes; :func:`hub_kwargs` converts the
options that ``binarize.json`` records for ``fairseq-generate``.  The hub has one tokenizer and one BPE for both
languages, so :func:`load_translation` uses the *source* language's options: they encode the input, and the same
encoders decode the output (right for ``spaces`` and ``sentencepiece``; BITE on the English source also
detokenises the German output with Moses rules; Wordmap on a German source decodes English SentencePiece pieces,
see ``fairseq_plugins/wordmap.py``).
"""
from __future__ import annotations

import os

from preprocess.common import UserError


def user_dir() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fairseq_plugins")


def hub_kwargs(fairseq_args: list) -> dict:
    """``["--bpe", "spaces", "--spaces-model", "m.model", "--bite-single-char"]`` ->
    ``{"bpe": "spaces", "spaces_model": "m.model", "bite_single_char": True}``."""
    kwargs, i = {}, 0
    args = [str(a) for a in fairseq_args]
    while i < len(args):
        if not args[i].startswith("--"):
            raise UserError(f"expected an option, got {args[i]!r} in {' '.join(args)}")
        key = args[i][2:].replace("-", "_")
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            kwargs[key], i = args[i + 1], i + 2
        else:
            kwargs[key], i = True, i + 1
    return kwargs


def load_translation(binarized: str, checkpoint: str, side: str = "source", **overrides):
    """A ``GeneratorHubInterface`` for ``checkpoint`` trained on the ``train_scripts.binarize`` folder ``binarized``."""
    import json

    from fairseq.models.transformer import TransformerModel

    with open(os.path.join(binarized, "binarize.json"), encoding="utf-8") as fh:
        info = json.load(fh)
    args = info["source_args" if side == "source" else "generate_args"]
    kwargs = {**hub_kwargs(args), "user_dir": user_dir(), **overrides}
    return TransformerModel.from_pretrained(os.path.dirname(os.path.abspath(checkpoint)),
                                            checkpoint_file=os.path.basename(checkpoint),
                                            data_name_or_path=info["data_bin"][0], **kwargs)
