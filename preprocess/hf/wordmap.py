"""Wordmap's Hugging Face tokenizer class (``morphtok-export --scheme wordmap``): HanTa-tagged verbs over the base
SentencePiece model, which a ``tokenizer.json`` cannot express."""
from __future__ import annotations

from preprocess.hf import MorphtokTokenizer


class MorphtokWordmapTokenizer(MorphtokTokenizer):
    """Wordmap (HanTa-tagged verbs) + its base SentencePiece model, as ``preprocess.schemes.wordmap.WordmapTokenizer``;
    decode as ``--bpe wordmap``."""

    vocab_files_names = {"vocab_file": "dict.txt", "wordmap_vocab_file": "wordmap.txt",
                         "wordmap_spm_file": "wordmap-spm.model"}

    def __init__(self, vocab_file: str, wordmap_vocab_file: str, wordmap_spm_file: str, **kwargs):
        from preprocess.schemes import wordmap
        self.wordmap_vocab_file, self.wordmap_spm_file = wordmap_vocab_file, wordmap_spm_file
        # the dictionary is also the inventory verbs are written with, as the recipe encodes (``--wordmap-dict``)
        self.line_encoder = wordmap.make_encoder(wordmap.WordmapOptions(wordmap_vocab=wordmap_vocab_file,
                                                                        wordmap_spm=wordmap_spm_file,
                                                                        wordmap_dict=vocab_file))
        super().__init__(vocab_file, **kwargs)

    @classmethod
    def from_options(cls, args, dict_path, dictionary=None):
        from preprocess.common import UserError
        from preprocess.files.inputs import require_file
        from preprocess.models.fairseq_dict import write_dict

        if dictionary is None:
            raise UserError("export --scheme wordmap needs --dict: Wordmap's dictionary is its base model's pieces "
                            "plus the pieces of its encoded training text (binarize writes dict.wordmap.LANG.txt)")
        write_dict(dictionary, dict_path)
        return cls(dict_path, require_file(args.wordmap_vocab, "--wordmap-vocab"),
                   require_file(args.wordmap_spm, "--wordmap-spm"))

    def _segment(self, text: str) -> list[str]:
        return self.line_encoder.encode_pieces(text)

    def _detokenize(self, tokens: list[str]) -> str:
        from preprocess.schemes.wordmap import decode_line
        return decode_line(" ".join(tokens))
