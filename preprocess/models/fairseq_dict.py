"""The fairseq dictionary (``dict.txt``): fairseq's own entries, writing a dictionary, and the one of a SentencePiece
model (the project's one dictionary policy: :func:`write_fairseq_dict`).
"""
from __future__ import annotations

from preprocess.files.outputs import atomic_output
from preprocess.models.spm_model import load_model

#: fairseq's Dictionary adds these itself; they must not appear in dict.txt
#: fairseq's own dictionary entries, in the order of their ids (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3)
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
#: the same tokens by their Hugging Face names (tokenizer_config.json, special_tokens_map.json)
SPECIAL_TOKENS = dict(zip(("bos_token", "pad_token", "eos_token", "unk_token"), FAIRSEQ_SPECIALS))


def dictionary_pieces(model_path: str) -> list[str]:
    """The pieces a fairseq dictionary of this model lists: all but control symbols and ``<unk>``, model order."""
    sp = load_model(model_path)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_control(i) or sp.is_unknown(i)) and sp.id_to_piece(i) not in FAIRSEQ_SPECIALS]


def write_dict(tokens: list[str], dict_path: str) -> int:
    """Write a fairseq ``dict.txt`` (atomically) listing ``tokens`` in order; returns the number of entries.

    fairseq wants a count per entry; the counts are rank-based pseudo-counts (``N - rank``), so any frequency
    threshold keeps the given order.
    """
    with atomic_output(dict_path) as out:
        for rank, token in enumerate(tokens):
            out.write(f"{token} {len(tokens) - rank}\n")
    return len(tokens)


def write_fairseq_dict(model_path: str, dict_path: str) -> int:
    """Write the fairseq ``dict.txt`` of a SentencePiece model: every piece it can emit (see
    :func:`dictionary_pieces`).  This is the project's one dictionary policy: the dictionary comes from the
    subword model, not from the encoded data, so every split and every later corpus encoded with the model maps
    to the same ids, and a piece that happens not to occur in the training text still has an embedding."""
    return write_dict(dictionary_pieces(model_path), dict_path)
