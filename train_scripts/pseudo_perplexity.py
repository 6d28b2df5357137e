"""Pseudo-perplexity per word of a masked LM pretrained by ``pretrain_roberta.sh`` (BITE paper, Tan et al. 2020,
section 4.3 and appendix B.2): how certain the model is of held-out text, clean or with inflection noise.

    python -m train_scripts.pseudo_perplexity --lm-data work/lm --checkpoint ckpt/lm/checkpoint_best.pt \\
        --input heldout.en [--max-lines 300] [--infl-noise 0.3 [--noise-seed 1]] [--word-marks verbs.marks] \\
        [--output pppl.json]

**Pseudo-log-likelihood** (Salazar et al. 2020, "Masked language model scoring"): for a sentence of tokens
``w_1 .. w_n`` (the pieces the row's scheme gives, between ``<s>`` and ``</s>``),
``PLL(W) = sum_t log P(w_t | W with w_t replaced by <mask>)``: every token is masked in turn, one at a time (n
copies of the sentence, each with one ``<mask>``, scored in batches), and the model's log-probability of the true
token at the mask is summed.  ``<s>``/``</s>`` are never masked.

**Normalised by words, not tokens** (Mielke 2019): ``PPPL per word = exp(-(sum of PLL over the corpus) / W)``
with ``W`` the whitespace-separated words of the *raw* text, the same number for every row, so rows that segment
differently (more pieces, BITE's inflection symbols, space tokens) are compared on the same footing: the row with
the lower PPPL per word gives the text a higher pseudo-likelihood.  ``pppl_per_token`` (normalised by the
row's own pieces, the paper's earlier "default") is reported for reference only: it is not comparable across rows.

**Marked words** (``--word-marks FILE``: one line per input line, one ``0``/``1`` per whitespace word, e.g. 1 for
the gold VERB/AUX words of UD): the record's ``marked`` gives the same per-word numbers over the marked words
alone.  A word's PLL is the sum of the PLLs of its pieces (each piece still masked alone, in its whole sentence);
a piece belongs to the word it starts or continues (:func:`piece_words`: by the ``▁`` word-start marks, a
standalone ``▁`` to the word after it, punctuation glued to a word and BITE's symbols to that word), so the words'
PLLs sum to the sentence's and marking every word gives the all-words figure.  No piece spans two words; a line
whose pieces do not give each of its words a piece is left out of ``marked`` and counted (``unaligned_lines``).

Two differences from the paper, both deliberate:

* The paper estimates the PLL stochastically: it masks 15% of the symbols at random (BERT's pretraining masking),
  sums their log-likelihoods and divides by the masking probability 0.15 "so that the final pPPLs are within a
  reasonable range".  Masking every position once and alone, as here (Salazar et al.'s PLL), computes the whole
  sum the paper samples 15% of (there with the other sampled positions masked at the same time), so no scaling is
  needed, and the result is deterministic (no sampling; the model in eval mode, no dropout).  The cost
  grows with the square of a sentence's length (n copies of n tokens): on 2 CPU cores the ``--small`` model (2
  layers, 128 dimensions, 8k pieces) scores 300 Multi30k sentences (12 words) in about 5 s, 300 Brown corpus
  sentences (24 words) in about 25 s.
* The paper divides by the "word tokens fed into the WordPiece component of each tokenization pipeline": for
  BITE that is the pretokenised words *plus* the inflection symbols (its Table 4: 51,982,873 vs 45,803,898 word
  tokens on the same CSE text), a larger denominator for BITE alone.  ``words`` here is the raw text's words (the
  same for every row); the paper's denominator is reported too, as ``words_paper`` (the BITE pretokeniser's words
  of the raw text, plus the inflection symbols on a BITE row) and ``pppl_per_word_paper``.

The text is encoded exactly as the pretraining data was: the row's scheme (``binarize.json``, the encoder that
``train_scripts.binarize`` used, BITE's inflection symbols and the space tokens of a "spaces" row included),
and for a "no spaces" row the standalone ``▁`` pieces removed afterwards, as the pretraining task
``masked_lm_words --drop-space-tokens`` did.  A line longer than the model's ``max_positions`` (``<s>`` and
``</s>`` included) is cut after its last whole word that fits (the words cut off are counted in neither
``words`` nor ``tokens``: ``truncated_lines``, ``truncated_words``).  Empty lines are skipped.

**Whole words** (``--whole-words``): the piece-level PLL above lets a piece be predicted from the other pieces
of its own word, which favours a segmentation into many pieces.  With ``--whole-words`` each piece is instead
scored with itself *and every later piece of the same word* masked (PLL-word-l2r of Kauf and Ivanova 2023, "A
Better Way to Do Masked Language Model Scoring", ACL 2023): the word's earlier pieces and all other words stay
visible, so by the chain rule the sum over a word's pieces is the log-probability of the whole word left to right,
and a word's own later pieces are never seen while it is scored.  Still one masked copy per piece (the same cost).
The record then has each word's log-probability (``word_scores``, nats) and, beside the unigram floor (which
depends on the row's pieces), a floor that does not: ``char_floor_bits_per_word``, the same words under an order-5
interpolated Witten-Bell character model (:mod:`preprocess.evaluate.char_lm`) of the raw ``train`` text
``binarize --lm`` encoded (the same text for every row).  Without the option every number and key is as before.

The inflection noise is the demo's (``preprocess.evaluate.noise``, kind ``infl``: MORPHEUS-style random
re-inflection, fraction 0.3, seed 1 by default): :func:`write_inflection_noise` writes the noisy copy of a file,
the same for every row; ``--infl-noise F`` scores a noisy copy made in memory.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import re
import sys
import time
from typing import Sequence

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate.paired import paired_bootstrap_bits  # noqa: F401  (two rows' word_scores compared)
from preprocess.files.inputs import UTF8_HINT, read_lines, require_input, without_bom
from preprocess.files.outputs import write_record
from preprocess.whitespace_noise import DEMO_SEED, PAPER_FRACTION

#: masked copies scored in one forward pass by default (one sentence of n tokens gives n copies)
BATCH_SIZE = 256
#: lines encoded at a time
_CHUNK = 500


# --- the inflection-noised copy ----------------------------------------------------------------------------------

def write_inflection_noise(input_path: str, output_path: str, fraction: float = PAPER_FRACTION,
                           seed: int = DEMO_SEED, tagger: str | None = None) -> dict:
    """The demo's inflection noise (``preprocess.evaluate.noise``, kind ``infl``) on a raw text file: a copy with
    the same line count at ``output_path``; returns the noise's counts.  Seeded per line, so every row scores the
    same noisy text."""
    from preprocess.evaluate.noise import INFLECTION, write_noisy

    return write_noisy(input_path, output_path, INFLECTION, fraction, seed, *([tagger] if tagger else []))


def inflection_noise_lines(lines: Sequence[str], fraction: float = PAPER_FRACTION, seed: int = DEMO_SEED,
                           tagger: str | None = None) -> tuple[list[str], dict]:
    """:func:`write_inflection_noise` in memory: (noisy lines, counts)."""
    from preprocess.evaluate.noise import INFLECTION, perturb_lines

    return perturb_lines(list(lines), INFLECTION, fraction, seed, *([tagger] if tagger else []))


# --- encoding as in pretraining ----------------------------------------------------------------------------------

class RowEncoder:
    """Raw lines -> the pieces the row's model saw in pretraining (see the module doc), and the paper's word
    count (:meth:`paper_words`)."""

    def __init__(self, info: dict, drop_spaces: bool | None = None):
        """``info``: the row's ``binarize.json`` record; ``drop_spaces``: whether pretraining dropped the standalone
        ``▁`` (None: as the record says, ``"spaces": "drop"``; :func:`score_lines` reads the checkpoint's task)."""
        from preprocess.models.spm import SPACE_SYMBOL
        from train_scripts.binarize import scheme_from_info

        self.info = info
        scheme = scheme_from_info(info)
        self.encoder = scheme.encoder(info["lang"])()
        self.drop_spaces = info.get("spaces") == "drop" if drop_spaces is None else bool(drop_spaces)
        self.space = SPACE_SYMBOL
        config = info.get("config") or {}
        # the pieces that count as words of their own (BITE's inflection symbols), as the row's recipe says
        self._symbols = scheme.word_symbols(info["lang"])
        self._pretokenizer = None
        self._config = config   # a BITE row's own pretokeniser, else BITE's default

    def encode(self, lines: Sequence[str]) -> list[list[str]]:
        from preprocess.encode import encode_chunk

        out = []
        for start in range(0, len(lines), _CHUNK):
            for text in encode_chunk(self.encoder, list(lines[start:start + _CHUNK])):
                pieces = text.split()
                if self.drop_spaces:
                    pieces = [p for p in pieces if p != self.space]
                out.append(pieces)
        return out

    def encode_words(self, lines: Sequence[str]) -> list[tuple[list[str], list[int]]]:
        """``(pieces, words)`` per line: the pieces of :meth:`encode` and, for each, the index of the whitespace
        word of the line it belongs to (:func:`piece_words`, taken before a "no spaces" row's ``▁`` are dropped)."""
        from preprocess.encode import encode_chunk

        out = []
        for start in range(0, len(lines), _CHUNK):
            for text in encode_chunk(self.encoder, list(lines[start:start + _CHUNK])):
                pieces = text.split()
                words = piece_words(pieces, self.space)
                if self.drop_spaces:
                    keep = [k for k, p in enumerate(pieces) if p != self.space]
                    pieces, words = [pieces[k] for k in keep], [words[k] for k in keep]
                out.append((pieces, words))
        return out

    def inflection_symbols(self, pieces: Sequence[str]) -> int:
        """The pieces of a line that stand for words of their own (BITE's inflection symbols; 0 on a row whose
        scheme has none: :meth:`train_scripts.schemes.Scheme.word_symbols`)."""
        return sum(p in self._symbols for p in pieces) if self._symbols else 0

    def pretokenized_words(self, line: str) -> int:
        """The words BITE's pretokeniser (the row's, else BITE's default) makes of a raw line."""
        if self._pretokenizer is None:
            from preprocess import registry
            self._pretokenizer = registry.pretokenizer_of(self._config)   # the scheme that declares a pretokenizer
        return len(self._pretokenizer(line))


def _word_ends(line: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\S+", line)]


def piece_words(pieces: Sequence[str], space: str = "\u2581") -> list[int]:
    """The whitespace word (0, 1, ...) of each piece of an encoded line, from the word-start marks every scheme
    writes (SentencePiece's convention): a piece that begins with ``▁`` starts a word, and so does the piece after
    a standalone ``▁`` (a "spaces" row), which belongs to the word after it (as the space inside ``▁word`` does);
    any other piece (a continuation, punctuation glued to a word, BITE's inflection symbol) belongs to the word
    before it, and the first piece of a line starts word 0 with or without a mark.  A trailing ``▁`` belongs to
    the last word.  A piece cannot span two words here: a scheme that merged across a space would give fewer
    words than the line has, which :func:`words_align` reports."""
    out, word, pending = [], -1, False   # pending: a standalone ▁ has started a word no piece has filled yet
    for piece in pieces:
        if piece == space:
            if not pending:
                word, pending = word + 1, True
        elif piece.startswith(space):
            if not pending:
                word += 1
            pending = False
        else:
            word, pending = max(word, 0), False
        out.append(word)
    if pending and word > 0:   # a trailing ▁ starts no word
        out = [w if w < word else word - 1 for w in out]
    return out


def words_align(words: Sequence[int], n_words: int) -> bool:
    """Whether :func:`piece_words` gives every one of the line's ``n_words`` whitespace words a piece."""
    return (words[-1] + 1 if words else 0) == n_words


def fit_line_words(row: RowEncoder, line: str, pieces: list[str], words: list[int],
                   limit: int) -> tuple[str, list[str], list[int]]:
    """:func:`fit_line` with the word of each piece (:meth:`RowEncoder.encode_words`): ``(text, pieces, words)``."""
    text, fitted = fit_line(row, line, pieces, limit)
    if text == line:
        return text, pieces, words
    again, again_words = row.encode_words([text])[0]
    return text, fitted, again_words[:len(fitted)]   # the first word's first pieces when not even it fits


def fit_line(row: RowEncoder, line: str, pieces: list[str], limit: int) -> tuple[str, list[str]]:
    """``(text, pieces)`` of ``line`` cut after its last whole word whose encoding has at most ``limit`` pieces
    (the line itself when it fits; the first ``limit`` pieces of the first word when not even that fits)."""
    if len(pieces) <= limit:
        return line, pieces
    ends = _word_ends(line)
    lo, hi, best = 1, len(ends) - 1, None   # the whole line does not fit: at most len(ends) - 1 words
    while lo <= hi:
        mid = (lo + hi) // 2
        text = line[:ends[mid - 1]]
        enc = row.encode([text])[0]
        if len(enc) <= limit:
            best, lo = (text, enc), mid + 1
        else:
            hi = mid - 1
    if best is None:
        text = line[:ends[0]]
        return text, row.encode([text])[0][:limit]
    return best


# --- scoring -----------------------------------------------------------------------------------------------------

def _masked_batches(model, sequences: Sequence, mask_idx: int, pad_idx: int, batch_size: int, device,
                    spans: Sequence[Sequence[int]] | None = None):
    """``([(sequence, position)], log-probabilities)`` per batch of masked copies (see :func:`sentence_plls`).
    ``spans``: per sequence, for each scored position ``p`` (1 .. n-2) the position after the last one masked with
    it (:func:`l2r_spans`: the rest of its word); None: ``p`` alone."""
    import torch

    seqs = [torch.as_tensor(s, dtype=torch.long) for s in sequences]
    jobs = [(i, p) for i in sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
            for p in range(1, len(seqs[i]) - 1)]
    with torch.no_grad():
        for start in range(0, len(jobs), max(1, batch_size)):
            chunk = jobs[start:start + max(1, batch_size)]
            width = max(len(seqs[i]) for i, _ in chunk)
            tokens = torch.full((len(chunk), width), pad_idx, dtype=torch.long)
            masked = torch.zeros((len(chunk), width), dtype=torch.bool)
            rows = torch.arange(len(chunk))
            positions = torch.tensor([p for _, p in chunk])
            for r, (i, _) in enumerate(chunk):
                tokens[r, :len(seqs[i])] = seqs[i]
            targets = tokens[rows, positions].clone()
            tokens[rows, positions] = mask_idx
            if spans is not None:   # the target's later pieces of its word hidden too; only the target scored
                for r, (i, p) in enumerate(chunk):
                    tokens[r, p:spans[i][p - 1]] = mask_idx
            masked[rows, positions] = True
            if device is not None:
                tokens, masked, targets = tokens.to(device), masked.to(device), targets.to(device)
            logits = model(tokens, features_only=False, return_all_hiddens=False, masked_tokens=masked)[0]
            # one mask per row: the projected rows come in row order
            logp = torch.log_softmax(logits.float(), dim=-1).gather(1, targets.unsqueeze(1)).squeeze(1)
            yield chunk, logp.double().cpu()


def sentence_plls(model, sequences: Sequence, mask_idx: int, pad_idx: int, batch_size: int = BATCH_SIZE,
                  device=None) -> list[float]:
    """The pseudo-log-likelihood (natural log) of each id sequence (``<s> ... </s>``, 1-D LongTensors or lists):
    every position but the first and the last masked in turn, one at a time; the masked copies of one or several
    sentences (longest first, to pad little) go through the model ``batch_size`` at a time, and only the masked
    positions are projected onto the vocabulary.  ``model``: fairseq's RobertaModel, in eval mode."""
    import torch

    plls = torch.zeros(len(sequences), dtype=torch.float64)
    for chunk, logp in _masked_batches(model, sequences, mask_idx, pad_idx, batch_size, device):
        plls.index_add_(0, torch.tensor([i for i, _ in chunk]), logp)
    return plls.tolist()


def token_plls(model, sequences: Sequence, mask_idx: int, pad_idx: int, batch_size: int = BATCH_SIZE,
               device=None) -> list[list[float]]:
    """:func:`sentence_plls` per token: for each sequence, the log-probability of each of its tokens between
    ``<s>`` and ``</s>`` masked alone (their sum is the sentence's PLL)."""
    out = [[0.0] * max(0, len(s) - 2) for s in sequences]
    for chunk, logp in _masked_batches(model, sequences, mask_idx, pad_idx, batch_size, device):
        for (i, p), value in zip(chunk, logp.tolist()):
            out[i][p - 1] = value
    return out


def l2r_spans(words: Sequence[int]) -> list[int]:
    """For each piece of a line (``words``: the word of each piece, :func:`piece_words`, without ``<s>``/``</s>``),
    the position in the id sequence (``<s>`` at 0) just after the last piece of its word: PLL-word-l2r masks the
    piece there and every later piece of the same word (positions ``1 + j`` up to this, exclusive)."""
    out, end = [0] * len(words), len(words)
    for j in range(len(words) - 1, -1, -1):
        if j + 1 < len(words) and words[j + 1] != words[j]:
            end = j + 1
        out[j] = end + 1
    return out


def whole_word_token_plls(model, sequences: Sequence, words: Sequence[Sequence[int]], mask_idx: int, pad_idx: int,
                          batch_size: int = BATCH_SIZE, device=None) -> list[list[float]]:
    """:func:`token_plls` under PLL-word-l2r (Kauf and Ivanova 2023; module doc): each piece scored with itself and
    the pieces to its right *within its word* masked (the word's earlier pieces and every other word visible), one
    masked copy per piece as before.  ``words``: per sequence, the word of each piece between ``<s>`` and ``</s>``
    (consecutive runs, as :func:`piece_words` gives).  A word's log-probability is the sum over its pieces, the
    chain rule left to right: ``log P(word | context) = sum_j log P(piece_j | context, pieces before j)``."""
    spans = [l2r_spans(w) for w in words]
    out = [[0.0] * max(0, len(s) - 2) for s in sequences]
    for chunk, logp in _masked_batches(model, sequences, mask_idx, pad_idx, batch_size, device, spans):
        for (i, p), value in zip(chunk, logp.tolist()):
            out[i][p - 1] = value
    return out


def word_sums(per_token: Sequence[float], words: Sequence[int], n_words: int) -> list[float]:
    """The pieces' values summed per word (``words``: the word of each piece): one value per word 0 .. n_words-1."""
    out = [[] for _ in range(n_words)]
    for w, value in zip(words, per_token):
        if w < n_words:
            out[w].append(value)
    return [math.fsum(v) for v in out]


_CHAR_LMS: dict = {}


def char_floor_model(info: dict):
    """The character model (:class:`preprocess.evaluate.char_lm.CharLM`, order 5) of the pretraining text: the raw
    ``train`` split ``binarize --lm`` encoded (``raw_dir``/train.LANG of its record, the same for every row), or
    None where that file is no longer there.  Built once per file in a process."""
    from preprocess.evaluate.char_lm import CharLM

    raw = char_floor_source(info)
    if raw is None or not os.path.isfile(raw):
        return None
    if raw not in _CHAR_LMS:
        _CHAR_LMS[raw] = CharLM(without_bom(read_lines(raw, hint=UTF8_HINT)))
    return _CHAR_LMS[raw]


@contextlib.contextmanager
def _quiet_fairseq():
    """fairseq's INFO records (the whole training configuration, when a checkpoint is loaded) held back."""
    logger = logging.getLogger("fairseq")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def load_model(lm_data: str, checkpoint: str, cpu: bool = True):
    """``(hub, binarize.json record)``: the RoBERTa hub of :func:`train_scripts.hub.load_roberta` in eval mode
    (no dropout), on the GPU unless ``cpu`` or none is there."""
    import torch

    from train_scripts.binarize import read_record
    from train_scripts.hub import load_roberta

    info = read_record(lm_data, "give the output folder of binarize --lm")
    with _quiet_fairseq():
        hub = load_roberta(lm_data, checkpoint)
    if not cpu and torch.cuda.is_available():
        hub.cuda()
    hub.eval()
    return hub, info


def score_lines(hub, info: dict, lines: Sequence[str], batch_size: int = BATCH_SIZE,
                word_marks: Sequence[Sequence[int]] | None = None, whole_words: bool = False) -> dict:
    """The pseudo-perplexity record of raw ``lines`` (see :func:`pseudo_perplexity`) with a loaded ``hub`` and
    its ``binarize.json`` record ``info``; adds ``sentence_pll`` (one per line, None for an empty line).
    ``word_marks``: one sequence of 0/1 per line, one per whitespace word (1: a marked word): adds ``marked``
    (:func:`marked_record`).  ``whole_words``: PLL-word-l2r (:func:`whole_word_token_plls`) instead of one piece
    masked at a time, and the keys of ``--whole-words`` (:func:`pseudo_perplexity`)."""
    import torch

    started = time.perf_counter()
    # the checkpoint's own task says whether the model saw the ▁ tokens (masked_lm_words --drop-space-tokens)
    task_cfg = getattr(hub.task, "cfg", None)
    dropped = bool(getattr(task_cfg, "drop_space_tokens", False)) if task_cfg is not None else False
    row = RowEncoder(info, dropped or info.get("spaces") == "drop")
    dictionary = hub.task.source_dictionary
    limit = int(hub.model.max_positions()) - 2          # <s> and </s>
    if limit < 1:
        raise UserError(f"the model's max_positions ({limit + 2}) leaves no room for a token")
    lines = list(lines)
    if word_marks is not None:
        word_marks = check_word_marks(lines, word_marks)
    if word_marks is not None or whole_words:
        encoded_words = row.encode_words(lines)
        encoded = [pieces for pieces, _ in encoded_words]
    else:
        encoded = row.encode(lines)
    seqs, kept, words, words_paper, kept_words = [], [], 0, 0, []
    truncated_lines = truncated_words = unk = 0
    for k, (line, pieces) in enumerate(zip(lines, encoded)):
        if not pieces:
            continue
        if word_marks is not None or whole_words:
            text, pieces, of_piece = fit_line_words(row, line, pieces, encoded_words[k][1], limit)
            kept_words.append((of_piece, len(text.split())))
        else:
            text, pieces = fit_line(row, line, pieces, limit)
        n_words = len(text.split())
        if text != line:
            truncated_lines += 1
            truncated_words += len(line.split()) - n_words
        ids = [dictionary.index(p) for p in pieces]
        unk += sum(i == dictionary.unk() for i in ids)
        seqs.append(torch.tensor([dictionary.bos(), *ids, dictionary.eos()], dtype=torch.long))
        kept.append(k)
        words += n_words
        words_paper += row.pretokenized_words(text) + row.inflection_symbols(pieces)
    if not words:
        raise UserError("the input has no words to score")
    device = next(hub.model.parameters()).device
    if whole_words:
        per_token = whole_word_token_plls(hub.model, seqs, [w for w, _ in kept_words], hub.task.mask_idx,
                                          dictionary.pad(), batch_size, device if device.type != "cpu" else None)
        plls = [math.fsum(t) for t in per_token]
    elif word_marks is not None:
        per_token = token_plls(hub.model, seqs, hub.task.mask_idx, dictionary.pad(), batch_size,
                               device if device.type != "cpu" else None)
        plls = [math.fsum(t) for t in per_token]
    else:
        plls = sentence_plls(hub.model, seqs, hub.task.mask_idx, dictionary.pad(), batch_size,
                             device if device.type != "cpu" else None)
    per_line: list = [None] * len(lines)
    for k, pll in zip(kept, plls):
        per_line[k] = pll
    tokens = sum(len(s) - 2 for s in seqs)
    nll = -math.fsum(plls)
    counts = train_counts(hub)
    log_probs = unigram_log_probs(counts) if counts is not None else None
    floor = [log_probs[s[1:-1].numpy()].tolist() for s in seqs] if log_probs is not None else None
    floor_nll = -math.fsum(map(math.fsum, floor)) if floor is not None else None
    result = {
        "pppl_per_word": math.exp(nll / words), "bits_per_word": nll / words / math.log(2),
        "nll": nll, "nll_per_word": nll / words,
        "pppl_per_token": math.exp(nll / tokens), "tokens_per_word": tokens / words,
        "words": words, "tokens": tokens, "lines": len(lines), "scored_lines": len(seqs),
        "empty_lines": len(lines) - len(seqs), "truncated_lines": truncated_lines,
        "truncated_words": truncated_words, "unk_tokens": unk, "max_positions": limit + 2,
        "words_paper": words_paper, "pppl_per_word_paper": math.exp(nll / words_paper) if words_paper else None,
        "unigram_bits_per_word": floor_nll / words / math.log(2) if floor is not None else None,
        "scheme": (info.get("config") or {}).get("scheme", info.get("scheme")),
        "spaces": info.get("spaces"), "space_tokens_dropped": row.drop_spaces, "batch_size": batch_size,
        "seconds": None, "sentence_pll": per_line,
    }
    if word_marks is not None:
        scored_marks = [word_marks[k] for k in kept]
        result["marked"] = marked_record(scored_marks, kept_words, per_token, word_marks)
        unigram = marked_record(scored_marks, kept_words, floor, word_marks) if floor else {}
        result["marked"]["unigram_bits_per_word"] = unigram.get("bits_per_word")
    if whole_words:
        result.update(_whole_word_keys(info, [lines[k] for k in kept], kept_words, per_token,
                                       [word_marks[k] for k in kept] if word_marks is not None else None,
                                       result.get("marked")))
        # one entry per input line, as sentence_pll and a --word-marks file: [] for an empty line (no words)
        per_input: list = [[] if not line.split() else None for line in lines]
        for k, scores in zip(kept, result["word_scores"]):
            per_input[k] = scores
        result["word_scores"] = per_input
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def _whole_word_keys(info: dict, lines: Sequence[str], kept_words: Sequence[tuple], per_token: Sequence,
                     marks: Sequence[Sequence[int]] | None, marked: dict | None) -> dict:
    """The keys ``--whole-words`` adds (:func:`pseudo_perplexity`): the word scores of the scored lines (None for a
    line whose pieces do not give each of its words a piece), the scoring's name and the character floor; the
    floor of the marked words goes into ``marked``."""
    from preprocess.evaluate.char_lm import word_floor

    scores, unaligned = [], 0
    for (of_piece, n_words), tokens in zip(kept_words, per_token):
        if words_align(of_piece, n_words):
            scores.append(word_sums(tokens, of_piece, n_words))
        else:
            scores.append(None)
            unaligned += 1
    texts = [" ".join(line.split()[:n]) for line, (_, n) in zip(lines, kept_words)]   # the words kept
    model = char_floor_model(info)
    out = {"whole_words": True, "scoring": "PLL-word-l2r", "word_scores_unit": "nats",
           "word_scores": scores, "word_scores_unaligned_lines": unaligned,
           "char_floor_bits_per_word": word_floor(model, texts)["bits_per_word"] if model else None,
           "char_floor": ({"order": model.order, "smoothing": "interpolated Witten-Bell",
                           "train": os.path.abspath(char_floor_source(info))} if model else None)}
    if marked is not None:
        aligned = [k for k, (w, n) in enumerate(kept_words) if words_align(w, n)]
        marked["char_floor_bits_per_word"] = word_floor(
            model, [texts[k] for k in aligned], [marks[k][:kept_words[k][1]] for k in aligned])["bits_per_word"] \
            if model else None
    return out


def char_floor_source(info: dict) -> str | None:
    """The raw pretraining text of a ``binarize --lm`` record (``raw_dir``/train.LANG[.gz]), None if gone."""
    from train_scripts.binarize import raw_file

    return raw_file(info["raw_dir"], "train", info["lang"], False) if info.get("raw_dir") else None


def train_counts(hub):
    """How often each dictionary symbol occurs in the model's binarized training split (numpy, one count per
    symbol), or None where the hub's data folder has no ``train`` split.  (``dict.txt``'s counts are no
    frequencies here: a SentencePiece vocabulary is written with counts by rank.)"""
    import numpy as np
    from fairseq.data import data_utils

    data = str(getattr(getattr(hub.task, "cfg", None), "data", "") or "").split(os.pathsep)[0]
    dictionary = hub.task.source_dictionary
    dataset = data_utils.load_indexed_dataset(os.path.join(data, "train"), dictionary) if data else None
    if dataset is None:
        return None
    buffer = getattr(dataset, "_bin_buffer", None)
    index = getattr(dataset, "_index", None)
    if buffer is not None and index is not None:         # fairseq's mmap format: the whole split as one array
        ids = np.frombuffer(buffer, dtype=index.dtype)
    else:
        ids = np.concatenate([dataset[i].numpy() for i in range(len(dataset))])
    return np.bincount(ids, minlength=len(dictionary))


def unigram_log_probs(counts):
    """The context-free floor of a pseudo-log-likelihood: every symbol's log probability (nats, a numpy array
    indexed by id) under the pieces' frequencies in the pretraining data (``counts``: :func:`train_counts`, add-one
    smoothed over the symbols).  A masked LM that learned anything from a piece's context scores above it; one
    that did not scores about at it."""
    import numpy as np

    return np.log((counts + 1) / (float(counts.sum()) + len(counts)))


def check_word_marks(lines: Sequence[str], word_marks: Sequence[Sequence[int]], name: str = "word marks",
                     input_name: str = "the input") -> list[list[int]]:
    """``word_marks`` as lists of 0/1, after checking one per line and one per whitespace word of its line
    (a :class:`UserError` naming the first line that breaks this)."""
    marks = [[int(m) for m in line_marks] for line_marks in word_marks]
    for k, (line, line_marks) in enumerate(zip(lines, marks), 1):
        n = len(line.split())
        if len(line_marks) != n:
            raise UserError(f"{name}:{k}: {len(line_marks)} marks for the {n} words of line {k} of {input_name}")
        if any(m not in (0, 1) for m in line_marks):
            raise UserError(f"{name}:{k}: a mark is 0 or 1")
    if len(marks) != len(lines):
        raise UserError(f"{name} has {len(marks)} lines, {input_name} {len(lines)}: one line of marks per line")
    return marks


def marked_record(marks: Sequence[Sequence[int]], kept_words: Sequence[tuple], per_token: Sequence[Sequence[float]],
                  all_marks: Sequence[Sequence[int]]) -> dict:
    """The pseudo-perplexity over the marked words alone.  A word's PLL is the sum of its pieces' (the word of a
    piece: :func:`piece_words`; a space token is its next word's, a BITE symbol or glued punctuation its own
    word's, so the PLLs of all a line's words sum to the line's PLL).  Per scored line (``marks``, ``kept_words``:
    (the word of each piece, the words kept), ``per_token``: the pieces' PLLs); ``all_marks``: every line's, to
    count the marks.  Returns ``words`` (marked words scored), ``tokens`` (their pieces), ``nll``, ``nll_per_word``,
    ``pppl_per_word``, ``bits_per_word`` (None when no word is scored), ``marks`` (1s in the marks, every line),
    ``truncated_words`` (marked words cut off a long line), ``unaligned_lines`` and ``unaligned_words`` (lines whose
    pieces do not give each of their words a piece (:func:`words_align`), and the marked words there: left out)."""
    terms, n_marked, n_tokens, truncated, unaligned_lines, unaligned_words = [], 0, 0, 0, 0, 0
    for line_marks, (of_piece, n_words), tokens in zip(marks, kept_words, per_token):
        truncated += sum(line_marks[n_words:])
        if not words_align(of_piece, n_words):
            unaligned_lines += 1
            unaligned_words += sum(line_marks[:n_words])
            continue
        per_word = [[] for _ in range(n_words)]
        for word, value in zip(of_piece, tokens):
            per_word[word].append(value)
        for word in range(n_words):
            if line_marks[word]:
                terms += per_word[word]
                n_marked += 1
                n_tokens += len(per_word[word])
    nll = -math.fsum(terms)
    return {"words": n_marked, "tokens": n_tokens, "nll": nll if n_marked else None,
            "nll_per_word": nll / n_marked if n_marked else None,
            "pppl_per_word": math.exp(nll / n_marked) if n_marked else None,
            "bits_per_word": nll / n_marked / math.log(2) if n_marked else None,
            "marks": sum(map(sum, all_marks)), "truncated_words": truncated,
            "unaligned_lines": unaligned_lines, "unaligned_words": unaligned_words}


def pseudo_perplexity(lm_data: str, checkpoint: str, text_file: str, max_lines: int = 0,
                      batch_size: int = BATCH_SIZE, cpu: bool = True, infl_noise: float = 0.0,
                      noise_seed: int = DEMO_SEED, sentences: bool = False, threads: int = 0,
                      word_marks: str | None = None, whole_words: bool = False) -> dict:
    """Pseudo-perplexity per word of the masked LM ``checkpoint`` pretrained on the ``binarize --lm`` folder
    ``lm_data``, on the raw text ``text_file`` (its first ``max_lines`` lines; 0: all).  Returns::

        pppl_per_word        exp(total NLL / words): the headline number, comparable across rows
        bits_per_word        total NLL / words / ln 2;  nll: total NLL in nats (-sum of sentence PLLs);
                             nll_per_word: nats per word
        pppl_per_token       exp(total NLL / tokens), the row's own pieces (for reference, not comparable)
        unigram_bits_per_word  the trivial floor beside bits_per_word: the same pieces scored without context, by
                             their frequency in the pretraining data (:func:`unigram_log_probs`)
        words, tokens, tokens_per_word, lines (read), scored_lines, empty_lines, truncated_lines,
        truncated_words (cut off, in neither count), unk_tokens, max_positions
        words_paper, pppl_per_word_paper   the BITE paper's denominator (module doc)
        scheme, spaces, batch_size, seconds (encoding and scoring, not loading), input, checkpoint, lm_data
        noise                (with infl_noise > 0) the inflection noise's counts: the text scored is the noisy copy
        sentence_pll         (with sentences=True) each line's PLL in nats, None for an empty line
        marked               (with word_marks) the same over the marked words alone (:func:`marked_record`):
                             words, tokens, nll, nll_per_word, pppl_per_word, bits_per_word, marks,
                             truncated_words, unaligned_lines, unaligned_words, unigram_bits_per_word
                             (with whole_words also char_floor_bits_per_word)

    With ``whole_words`` (``--whole-words``): every figure above is PLL-word-l2r's (module doc) and the record
    adds ``whole_words`` (True), ``scoring`` ("PLL-word-l2r"), ``word_scores`` (one list per input line, as
    ``sentence_pll`` and a ``--word-marks`` file: one natural-log probability per whitespace word kept, [] for an
    empty line, None for a line whose pieces do not give each word a piece), ``word_scores_unit`` ("nats"),
    ``word_scores_unaligned_lines``, ``char_floor_bits_per_word`` (the same words under the character model of
    the pretraining text, :func:`char_floor_model`; None where that text is gone) and ``char_floor`` (its order,
    smoothing and training file).

    ``infl_noise``: score the demo's inflection noise (:func:`inflection_noise_lines`) of the text at this
    fraction instead of the clean text.  ``threads``: torch's CPU threads (0: torch's default; 1 is often faster
    on a machine shared with other work).  ``word_marks``: a file with one line per input line (the first
    ``max_lines`` are used), one ``0``/``1`` per whitespace word of its line (1: score the word in ``marked``, e.g.
    the gold verbs); a line whose count differs is an error naming it.  Deterministic: the same inputs give the
    same numbers."""
    require_input(text_file, "--input")
    if word_marks is not None:
        require_input(word_marks, "--word-marks")
    if max_lines < 0:
        raise UserError(f"--max-lines must be 0 (all) or more, not {max_lines}")
    if batch_size < 1:
        raise UserError(f"--batch-size must be at least 1, not {batch_size}")
    lines = []
    for line in without_bom(read_lines(text_file, hint=UTF8_HINT)):
        lines.append(line)
        if max_lines and len(lines) >= max_lines:
            break
    if not any(line.strip() for line in lines):
        raise UserError(f"{text_file} has no text to score (empty or blank lines only)")
    if threads < 0:
        raise UserError(f"--threads must be 0 (torch's default) or more, not {threads}")
    noise = None
    if infl_noise:
        lines, noise = inflection_noise_lines(lines, infl_noise, noise_seed)
    marks = read_word_marks(word_marks, lines, text_file, bool(max_lines)) if word_marks is not None else None
    if threads:
        import torch
        torch.set_num_threads(threads)
    hub, info = load_model(lm_data, checkpoint, cpu)
    result = score_lines(hub, info, lines, batch_size, marks, whole_words)
    if not sentences:
        del result["sentence_pll"]
    result.update({"input": os.path.abspath(text_file), "checkpoint": os.path.abspath(checkpoint),
                   "lm_data": os.path.abspath(lm_data)})
    if noise is not None:
        result["noise"] = noise
    if word_marks is not None:
        result["marked"]["file"] = os.path.abspath(word_marks)
    return result


def read_word_marks(path: str, lines: Sequence[str], text_file: str, prefix: bool = False) -> list[list[int]]:
    """The ``--word-marks`` file for the input ``lines`` (all the file's lines, or with ``prefix`` its first ones):
    one line per input line, one ``0``/``1`` per whitespace word; anything else is one error naming the line."""
    marks = []
    for number, line in enumerate(read_lines(path, hint=UTF8_HINT), 1):
        if prefix and number > len(lines):
            break
        items = line.split()
        if any(m not in ("0", "1") for m in items):
            bad = next(m for m in items if m not in ("0", "1"))
            raise UserError(f"{path}:{number}: {bad!r} is no word mark (0 or 1 per word)")
        marks.append([int(m) for m in items])
    return check_word_marks(lines, marks, path, text_file)


# --- command line ------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train_scripts.pseudo_perplexity",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--lm-data", required=True, help="the binarize --lm folder the model was pretrained on")
    ap.add_argument("--checkpoint", required=True, help="the pretrained checkpoint (pretrain_roberta.sh)")
    ap.add_argument("--input", required=True, help="raw held-out text, one sentence per line (.gz allowed)")
    ap.add_argument("--max-lines", type=int, default=0, help="score only the first N lines (0: all)")
    ap.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="masked copies per forward pass")
    ap.add_argument("--infl-noise", type=float, default=0.0, metavar="F",
                    help="score the demo's inflection noise of the input at this fraction instead (0: clean; the "
                         "demo's is 0.3)")
    ap.add_argument("--noise-seed", type=int, default=DEMO_SEED, help="seed of --infl-noise")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--gpu", action="store_true", help="use the GPU if there is one (default: CPU)")
    ap.add_argument("--sentences", action="store_true", help="also list each line's PLL")
    ap.add_argument("--word-marks", metavar="FILE", default=None,
                    help="one line per input line, one 0/1 per whitespace word: also score the words marked 1 "
                         "alone (the record's 'marked')")
    ap.add_argument("--whole-words", action="store_true",
                    help="whole-word PLL (PLL-word-l2r: a piece scored with the rest of its word masked too), "
                         "per-word scores and the character floor")
    ap.add_argument("--output", help="write the JSON record here (default: stdout only)")
    args = ap.parse_args(argv)
    for path, what in ((args.lm_data, "--lm-data"), (args.checkpoint, "--checkpoint")):
        if not os.path.exists(path):
            raise UserError(f"{what} not found: {path}")
    if args.infl_noise and not 0.0 < args.infl_noise <= 1.0:
        raise UserError(f"--infl-noise must be between 0 and 1, not {args.infl_noise}")
    result = pseudo_perplexity(args.lm_data, args.checkpoint, args.input, args.max_lines, args.batch_size,
                               cpu=not args.gpu, infl_noise=args.infl_noise, noise_seed=args.noise_seed,
                               sentences=args.sentences, threads=args.threads, word_marks=args.word_marks,
                               whole_words=args.whole_words)
    write_record(result, args.output)
    return 0


def cli() -> None:
    """Console-script entry point."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
