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

For a pair whose sides are encoded differently (BITE on the English source and plain SentencePiece on the German
target, Wordmap on one side only, ...) :func:`load_pair` is exact: :class:`PairTranslator` encodes the source with
the options ``binarize.json`` records for the source (``source_args``) and decodes the output with those of the
target (``generate_args``).  ``morphtok-translate`` (``train_scripts/translate.py``) is its command line.

    from train_scripts.hub import load_pair
    pair = load_pair("work/bite", "ckpt/bite/checkpoint_best.pt")
    pair.translate(["Two dogs are running ."], beam=5)

A masked LM pretrained by ``pretrain_roberta.sh`` on a ``binarize --lm`` folder: :func:`load_roberta`.

    from train_scripts.hub import load_roberta
    lm = load_roberta("work/lm", "ckpt/lm/checkpoint_best.pt")
    lm.fill_mask("The <mask> is here.", topk=3)
"""
from __future__ import annotations

import os
import sys

from preprocess.common import UserError, flatten_line
from train_scripts.evaluate import MAX_LEN_A, MAX_LEN_B
from train_scripts.tools import plugins_dir


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


def read_info(binarized) -> dict:
    """``binarize.json`` of a translation corpus binarised by ``train_scripts.binarize`` (the folder or the file),
    checked for the per-side options."""
    from train_scripts.binarize import read_record
    path = os.path.join(binarized, "binarize.json") if os.path.isdir(binarized) else str(binarized)
    info = read_record(path)
    if info.get("lm") or "source_args" not in info or "generate_args" not in info:
        raise UserError(f"{path} records no source_args/generate_args: not a translation corpus binarised by "
                        f"this version of morphtok-binarize")
    return info


def load_translation(binarized: str, checkpoint: str, side: str = "source", warn_asymmetric: bool = True,
                     **overrides):
    """A ``GeneratorHubInterface`` for ``checkpoint`` trained on the ``train_scripts.binarize`` folder ``binarized``.

    Its one set of encoders is ``side``'s (source: encodes input exactly; the output is decoded with the same
    options).  When the two sides are encoded differently a warning says so: use :func:`load_pair` there."""
    from fairseq.models.transformer import TransformerModel

    info = read_info(binarized)
    args = info["source_args" if side == "source" else "generate_args"]
    if info["source_args"] != info["generate_args"] and warn_asymmetric:
        other = "decodes the output" if side == "source" else "encodes the input"
        print(f"warning: {binarized}: the source and target are encoded with different options, and the hub "
              f"{other} with the {side}'s; train_scripts.hub.load_pair (morphtok-translate) uses each side's own",
              file=sys.stderr)
    kwargs = {**hub_kwargs(args), "user_dir": plugins_dir(), **overrides}
    return TransformerModel.from_pretrained(os.path.dirname(os.path.abspath(checkpoint)),
                                            checkpoint_file=os.path.basename(checkpoint),
                                            data_name_or_path=info["data_bin"][0], **kwargs)


def load_roberta(binarized: str, checkpoint: str, **overrides):
    """A ``RobertaHubInterface`` for a masked LM pretrained (``pretrain_roberta.sh``) on the ``binarize --lm`` folder
    ``binarized``: ``RobertaModel.from_pretrained`` with the scheme's ``--bpe`` options that ``binarize.json``
    records and this project's ``user_dir``; ``overrides`` go to ``from_pretrained``.  A "no spaces" model encodes
    without the ``▁`` tokens it never saw (``fairseq_plugins/spaces.py``)."""
    from fairseq.models.roberta import RobertaModel

    from train_scripts.binarize import read_record
    path = os.path.join(binarized, "binarize.json") if os.path.isdir(binarized) else str(binarized)
    info = read_record(path, "give the output folder of binarize --lm")
    if not info.get("lm") or "fairseq_args" not in info:
        raise UserError(f"{path} is not a binarize --lm corpus (no lm/fairseq_args)")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    kwargs = {**hub_kwargs(info["fairseq_args"]), "user_dir": plugins_dir(), **overrides}
    return RobertaModel.from_pretrained(os.path.dirname(os.path.abspath(checkpoint)),
                                        checkpoint_file=os.path.basename(checkpoint),
                                        data_name_or_path=info["data_bin"][0], **kwargs)


def build_encoders(fairseq_args: list) -> tuple:
    """(tokenizer, bpe) that fairseq builds from ``--tokenizer``/``--bpe`` options (either may be None), with the
    project's plugins registered."""
    from argparse import Namespace

    from fairseq import utils
    from fairseq.data import encoders

    utils.import_user_module(Namespace(user_dir=plugins_dir()))
    kwargs = hub_kwargs(fairseq_args)
    namespace = Namespace(**kwargs)
    tokenizer = encoders.build_tokenizer(namespace) if kwargs.get("tokenizer") else None
    bpe = encoders.build_bpe(namespace) if kwargs.get("bpe") else None
    return tokenizer, bpe


class PairTranslator:
    """Raw source text -> raw target text with each side's own encoding (see the module doc).

    ``hub`` is fairseq's ``GeneratorHubInterface`` built with the *target's* options (``generate_args``), so its
    ``decode`` is the target scheme's decoder; the source goes through the tokenizer and BPE built from
    ``source_args``, and then the model's source dictionary."""

    def __init__(self, info: dict, hub):
        self.info = info
        self.hub = hub
        self.source_tokenizer, self.source_bpe = build_encoders(info["source_args"])

    def encode(self, line: str) -> str:
        """The source pieces the model reads for ``line`` (the source scheme's encoding)."""
        text = flatten_line(line)
        if self.source_tokenizer is not None:
            text = self.source_tokenizer.encode(text)
        if self.source_bpe is not None:
            text = self.source_bpe.encode(text)
        return text

    def translate(self, lines: list[str], beam: int = 5, max_len_a: float = MAX_LEN_A, max_len_b: int = MAX_LEN_B,
                  **kwargs) -> list[str]:
        """One translation per line, in order, each on one line (decoded with the target scheme's decoder)."""
        if not lines:
            return []
        tokens = [self.hub.binarize(self.encode(line)) for line in lines]
        outputs = self.hub.generate(tokens, beam=beam, max_len_a=max_len_a, max_len_b=max_len_b, **kwargs)
        return [flatten_line(self.hub.decode(out[0]["tokens"])) for out in outputs]


def load_pair(binarized: str, checkpoint: str, **overrides) -> PairTranslator:
    """A :class:`PairTranslator` for ``checkpoint`` trained on the ``train_scripts.binarize`` folder ``binarized``;
    ``overrides`` go to ``from_pretrained`` (e.g. ``cpu=True``, ``batch_size=32``)."""
    from fairseq.models.transformer import TransformerModel

    info = read_info(binarized)
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    hub = TransformerModel.from_pretrained(os.path.dirname(os.path.abspath(checkpoint)),
                                           checkpoint_file=os.path.basename(checkpoint),
                                           data_name_or_path=info["data_bin"][0], user_dir=plugins_dir(),
                                           **{**hub_kwargs(info["generate_args"]), **overrides})
    hub.eval()
    return PairTranslator(info, hub)
