"""``--bpe flota``: FLOTA over a pretrained model's vocabulary, for fine-tuning and inference.

    fairseq-preprocess ... --srcdict dict.txt   (dict.txt from preprocess.flota.write_fairseq_dict(vocab, path))
    fairseq-train ... --bpe flota --flota-vocab vocab.txt --flota-style wordpiece --flota-k 3

Every emitted piece is a token of the vocabulary, so it is in a dictionary written by ``write_fairseq_dict``
from that vocabulary.  A word without any vocabulary substring gives nothing (as in the paper's code), or
``--flota-unk TOKEN``.  ``decode`` joins pieces back into words and is lossy by design: FLOTA drops the
characters it does not cover.  An official fairseq RoBERTa/BART ``dict.txt`` holds GPT-2 ids: with
``--flota-vocab dict.txt --flota-gpt2-encoder encoder.json`` the pieces are written as those ids.
"""
from dataclasses import dataclass, field
from typing import Optional

from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import required_path, user_errors
from preprocess.flota import STYLES, tokenizer_from_options


@dataclass
class FlotaBPEConfig(FairseqDataclass):
    flota_vocab: str = field(default="???", metadata={
        "help": "vocabulary: token list, SentencePiece .model, fairseq dict.txt, BERT vocab.txt, GPT-2 "
                "encoder.json or tokenizer.json"})
    flota_style: str = field(default="auto", metadata={"help": "wordpiece, gpt2, sentencepiece or auto"})
    flota_k: int = field(default=3, metadata={"help": "at most k pieces per word"})
    flota_mode: str = field(default="flota", metadata={"help": "flota, first or longest"})
    flota_strict: bool = field(default=False, metadata={
        "help": "never fall back to the other (start/continuation) form of a piece"})
    flota_max_len: Optional[int] = field(default=None, metadata={
        "help": "longest candidate substring (default 18 wordpiece, 19 gpt2, 16 sentencepiece)"})
    flota_unk: Optional[str] = field(default=None, metadata={
        "help": "token for a word without any vocabulary substring (default: nothing)"})
    flota_case: str = field(default="auto", metadata={
        "help": "lower-case before the search: auto = when the vocabulary is uncased (e.g. bert-base-uncased), "
                "keep or lower"})
    flota_byte_level: bool = field(default=False, metadata={
        "help": "gpt2 only: look words up in GPT-2's byte-level alphabet (the paper's code does not)"})
    flota_gpt2_encoder: Optional[str] = field(default=None, metadata={
        "help": "GPT-2 encoder.json, when --flota-vocab is the dict.txt of GPT-2 ids of an official fairseq "
                "RoBERTa/BART checkpoint: emit the ids that dictionary holds"})


@register_bpe("flota", dataclass=FlotaBPEConfig)
class FlotaBPE:
    def __init__(self, cfg):
        with user_errors("--bpe flota"):
            required_path(cfg, "flota_vocab")
            self.tokenizer = tokenizer_from_options(cfg)
        self.style = self.tokenizer.style
        self.marker, self.marker_on_start, _ = STYLES[self.style]

    def encode(self, x: str) -> str:
        return " ".join(self.tokenizer.tokenize(x))

    def decode(self, x: str) -> str:
        return self.tokenizer.decode(x)

    def is_beginning_of_word(self, x: str) -> bool:
        if x in ("<unk>", "<s>", "</s>", "<pad>"):
            return True
        x = getattr(self.tokenizer, "id_to_piece", {}).get(x, x)  # an official checkpoint's GPT-2 id
        if self.marker_on_start:
            return x.startswith(self.marker)
        return not (x.startswith(self.marker) and len(x) > len(self.marker))
