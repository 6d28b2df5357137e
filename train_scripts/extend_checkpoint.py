"""Grow a fairseq masked-LM checkpoint's dictionary and embedding matrix by a row's new pieces, so that masked-LM
training can continue from it on text segmented by that row (``--restore-file``; the German part's ``--de-init``).

    python -m train_scripts.extend_checkpoint --checkpoint gottbert/checkpoint.pt [--dict gottbert/dict.txt] \\
        --row-dict work/lm/wordmap/data-bin/dict.txt --out work/init/wordmap

Writes ``OUT/dict.txt`` (the checkpoint's entries in their order, then every entry of ``--row-dict`` that is not
among them, in its order), ``OUT/checkpoint.pt`` (the checkpoint with its token embedding matrix, its tied output
projection and its output bias grown to that dictionary) and ``OUT/extend.json`` (the counts below).  Binarise the
row's text with ``--srcdict OUT/dict.txt`` and pretrain with ``--restore-file OUT/checkpoint.pt --reset-optimizer
--reset-dataloader --reset-meters --reset-lr-scheduler``.

fairseq's index order is kept: its 4 specials (``<s> <pad> </s> <unk>``), the ``dict.txt`` entries, then the
``<mask>`` the masked-LM task adds (and any rows after it) — the new rows go between the old entries and
``<mask>``.  A new piece's embedding is the mean of the embeddings of the checkpoint's pieces that spell it
(:func:`spell`: greedy longest match over the checkpoint's entries, a word-start ``▁`` kept on the first piece
where the checkpoint has it), its output bias the mean of theirs; a piece the checkpoint's entries cannot spell gets
the mean of every entry's row (counted as ``unspelled``).  A checkpoint whose dictionary holds numbered byte-BPE
entries (GPT-2's, as GottBERT's ``dict.txt``) spells nothing this way: every new row is then the mean row.

Only torch is needed (no fairseq import): the checkpoint is a dict with a ``model`` state dict, as fairseq writes
it.  :func:`extend` works on the state dict alone, for tests.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from preprocess.cli import run_main
from preprocess.common import UserError

#: fairseq's specials before the dictionary's entries
SPECIALS = 4
#: the word-start mark of SentencePiece pieces
WORD_START = "\u2581"
#: state-dict keys of a RoBERTa's token embeddings (rows = dictionary) and of its output bias
EMBEDDING_SUFFIX = "embed_tokens.weight"
OUTPUT_WEIGHT_SUFFIX = "lm_head.weight"
OUTPUT_BIAS_SUFFIX = "lm_head.bias"


def read_dict(path: str) -> list[str]:
    """The entries of a fairseq ``dict.txt`` (its first field per line; a ``#fairseq:overwrite`` flag ignored)."""
    if not os.path.isfile(path):
        raise UserError(f"no fairseq dictionary at {path}")
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n").rsplit(" ", 1)[0].replace(" #fairseq:overwrite", "").split(" ")[0]
                for line in fh if line.strip()]


def spell(piece: str, known: dict) -> list[int]:
    """Indices (``known``: entry -> index) of the checkpoint's pieces that spell ``piece``, the longest known prefix
    each time (the word-start mark dropped where no known piece carries it); [] when some part cannot be spelled."""
    out, rest = [], piece
    while rest:
        for end in range(len(rest), 0, -1):
            if rest[:end] in known and rest[:end] != WORD_START:
                out.append(known[rest[:end]])
                rest = rest[end:]
                break
        else:
            if not rest.startswith(WORD_START):
                return []
            rest = rest[1:]
    return out


def extend(state: dict, base_entries: Sequence[str], new_entries: Sequence[str]) -> tuple[dict, dict]:
    """The state dict with its token embeddings (and tied output projection) and output bias grown by one row per
    entry of ``new_entries``, inserted after the dictionary's ``len(base_entries)`` entries (before ``<mask>``);
    and the counts ``{"spelled", "unspelled", "pieces_per_new_entry"}``."""
    import torch

    keys = [k for k in state if k.endswith(EMBEDDING_SUFFIX) and "position" not in k]
    if not keys:
        raise UserError("the checkpoint's model has no token embedding matrix (a key ending in embed_tokens.weight)")
    emb = state[keys[0]]
    cut = SPECIALS + len(base_entries)
    if emb.shape[0] < cut:
        raise UserError(f"the checkpoint's embedding has {emb.shape[0]} rows, fewer than its dictionary's "
                        f"{len(base_entries)} entries and fairseq's {SPECIALS} specials: not this dictionary's")
    known = {entry: SPECIALS + i for i, entry in enumerate(base_entries)}
    spelled = [spell(entry, known) for entry in new_entries]
    counts = {"spelled": sum(bool(s) for s in spelled), "unspelled": sum(not s for s in spelled),
              "pieces_per_new_entry": (sum(len(s) for s in spelled) / max(1, sum(bool(s) for s in spelled)))}

    def grow(tensor):
        mean = tensor[SPECIALS:cut].mean(dim=0)
        rows = [tensor[idx].mean(dim=0) if idx else mean for idx in spelled]
        added = torch.stack(rows) if rows else tensor[:0]
        return torch.cat([tensor[:cut], added.to(tensor.dtype), tensor[cut:]], dim=0)

    out = dict(state)
    grown = {}
    for key, tensor in state.items():
        tied = next((k for k, t in grown.items() if state[k] is tensor or (
            hasattr(tensor, "data_ptr") and hasattr(state[k], "data_ptr")
            and tensor.data_ptr() == state[k].data_ptr() and tensor.shape == state[k].shape)), None)
        if key in keys or key.endswith(OUTPUT_WEIGHT_SUFFIX) or key.endswith(OUTPUT_BIAS_SUFFIX):
            if tensor.shape[0] != emb.shape[0]:
                raise UserError(f"{key} has {tensor.shape[0]} rows, the embedding {emb.shape[0]}")
            out[key] = grown[tied] if tied else grow(tensor)
            grown[key] = out[key]
    return out, counts


def extend_checkpoint(checkpoint: str, row_dict: str, out_dir: str, dict_path: str | None = None) -> dict:
    """Write ``out_dir/{dict.txt, checkpoint.pt, extend.json}`` (see the module's docstring); the record."""
    import torch

    dict_path = dict_path or os.path.join(os.path.dirname(os.path.abspath(checkpoint)), "dict.txt")
    base, row = read_dict(dict_path), read_dict(row_dict)
    if not os.path.isfile(checkpoint):
        raise UserError(f"no checkpoint at {checkpoint}")
    known = set(base)
    new = [entry for entry in dict.fromkeys(row) if entry not in known]
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    if not isinstance(ckpt, dict) or "model" not in ckpt:
        raise UserError(f"{checkpoint} is not a fairseq checkpoint (a dict with a 'model' state dict)")
    ckpt["model"], counts = extend(ckpt["model"], base, new)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "dict.txt"), "w", encoding="utf-8") as fh:
        for entry in [*base, *new]:
            fh.write(f"{entry} 1\n")
    torch.save(ckpt, os.path.join(out_dir, "checkpoint.pt"))
    record = {"checkpoint": os.path.abspath(checkpoint), "dict": os.path.abspath(dict_path),
              "row_dict": os.path.abspath(row_dict), "base_entries": len(base), "row_entries": len(row),
              "row_entries_in_base": len(row) - len(new), "added": len(new), "entries": len(base) + len(new),
              **counts}
    with open(os.path.join(out_dir, "extend.json"), "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1)
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.extend_checkpoint", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="the fairseq masked-LM checkpoint to continue from")
    ap.add_argument("--dict", default=None, help="its dict.txt (default: beside the checkpoint)")
    ap.add_argument("--row-dict", required=True, help="the row's fairseq dictionary (binarize's data-bin/dict.txt)")
    ap.add_argument("--out", required=True, help="output folder: dict.txt, checkpoint.pt, extend.json")
    a = ap.parse_args(argv)
    record = extend_checkpoint(a.checkpoint, a.row_dict, a.out, a.dict)
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
