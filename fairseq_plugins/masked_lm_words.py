"""``--task masked_lm_words``: fairseq's ``masked_lm`` with whole-word masking that knows where words start in
every scheme, and the space-as-token paper's "no spaces" variant trained from data that keeps the spaces.

fairseq marks word starts per vocabulary entry (``bpe.is_beginning_of_word(piece)``).  With space-as-token models
(BPE', Unigram') the piece after a standalone ``▁`` is an ordinary piece, so the vocabulary alone cannot tell a
word's first piece from its continuation and a masked word would take the space before it.  Here a position starts
a word when its piece does by the scheme's ``--bpe`` (``▁``-prefixed pieces of default models) or is a special
symbol, or when it follows a standalone ``▁`` or a special symbol; a standalone ``▁`` is a unit of its own (masked
alone, never together with the word after it).

``--drop-space-tokens`` (binarise the "no spaces" variant with the ``▁`` kept): word starts are taken first, then
the standalone ``▁`` are removed *before* sentences are packed into ``--tokens-per-sample`` blocks, so the model
sees exactly the no-spaces text and whole-word masking still covers whole words.

How, in fairseq's own datasets: every word-start id is shifted by ``len(dictionary)`` before packing; the word-begin
mask given to ``MaskTokensDataset`` reads that shift (or a special symbol) as "word starts here", and the ids are
shifted back after masking.  ``--mask-whole-words`` needs the scheme's ``--bpe``/``--tokenizer`` options (recorded
by ``binarize --lm`` and passed by ``pretrain_roberta.sh``); without them it refuses to start instead of silently
masking single pieces (fairseq's own ``masked_lm`` task reads them from ``self.args``, which fairseq's hydra
entry points no longer set).
"""
import logging
import os
from dataclasses import dataclass, field

import numpy as np
import torch
from fairseq import utils
from fairseq.data import (
    BaseWrapperDataset,
    MaskTokensDataset,
    PrependTokenDataset,
    RightPadDataset,
    SortDataset,
    TokenBlockDataset,
    data_utils,
)
from fairseq.data.encoders.utils import get_whole_word_mask
from fairseq.data.shorten_dataset import maybe_shorten_dataset
from fairseq.tasks import register_task
from fairseq.tasks.masked_lm import MaskedLMConfig, MaskedLMTask

from preprocess.models.spm_model import SPACE_SYMBOL

logger = logging.getLogger(__name__)


@dataclass
class MaskedLMWordsConfig(MaskedLMConfig):
    drop_space_tokens: bool = field(default=False, metadata={
        "help": "remove the standalone ▁ tokens after word boundaries are taken (the 'no spaces' variant trained "
                "from data binarised with spaces kept)"})


class WordStartsDataset(BaseWrapperDataset):
    """Sentences with word-start ids shifted by ``offset`` (0: no marking) and, with ``drop``, no ``space`` ids."""

    def __init__(self, dataset, space: int, nspecial: int, vocab_starts, offset: int, drop: bool):
        super().__init__(dataset)
        self.space, self.nspecial, self.offset, self.drop = space, nspecial, offset, drop
        self.vocab_starts = None if vocab_starts is None else np.asarray(vocab_starts, dtype=bool)
        self._sizes = np.asarray(dataset.sizes) - (_space_counts(dataset, space) if drop else 0)

    def transform(self, tokens: np.ndarray) -> np.ndarray:
        tokens = np.asarray(tokens, dtype=np.int64)
        is_space, special = tokens == self.space, tokens < self.nspecial
        starts = np.concatenate([[True], is_space[:-1] | special[:-1]]) | is_space | special
        if self.vocab_starts is not None:
            starts |= self.vocab_starts[tokens]
        out = tokens + self.offset * starts
        return out[~is_space] if self.drop else out

    def __getitem__(self, index):
        return torch.from_numpy(self.transform(self.dataset[index].numpy()))

    @property
    def sizes(self):
        return self._sizes

    def size(self, index):
        return self._sizes[index]

    def num_tokens(self, index):
        return self._sizes[index]


def _space_counts(dataset, space: int, chunk: int = 1 << 20) -> np.ndarray:
    """Standalone ``▁`` per sentence: vectorised over fairseq's mmap ``.bin`` (sentences stored back to back),
    a loop for other datasets."""
    index, buffer = getattr(dataset, "_index", None), getattr(dataset, "_bin_buffer", None)
    if index is None or buffer is None:
        return np.array([int((dataset[i] == space).sum()) for i in range(len(dataset))], dtype=np.int64)
    flat = np.frombuffer(buffer, dtype=index.dtype)
    starts = np.asarray(index._pointers, dtype=np.int64) // np.dtype(index.dtype).itemsize
    sizes = np.asarray(index.sizes, dtype=np.int64)
    counts = np.zeros(len(sizes), dtype=np.int64)
    for a in range(0, len(sizes), chunk):
        b = min(len(sizes), a + chunk)
        lo, hi = starts[a], starts[b - 1] + sizes[b - 1]
        hits = np.append((flat[lo:hi] == space).astype(np.int64), 0)
        counts[a:b] = np.where(sizes[a:b] > 0, np.add.reduceat(hits, starts[a:b] - lo), 0)
    return counts


class _ShiftedStarts:
    """Stands in for fairseq's vocabulary word-begin mask: ``gather(0, item)`` reads the shift (or a special)."""

    def __init__(self, offset: int, nspecial: int):
        self.offset, self.nspecial = offset, nspecial

    def gather(self, dim, item):
        item = np.asarray(item)
        return torch.from_numpy(((item >= self.offset) | (item < self.nspecial)).astype(np.uint8))


class UnshiftDataset(BaseWrapperDataset):
    def __init__(self, dataset, offset: int):
        super().__init__(dataset)
        self.offset = offset

    def __getitem__(self, index):
        item = self.dataset[index]
        # a copy, in torch (np.array of a tensor warns under numpy 2: torch's __array__ takes no copy keyword)
        item = item.clone() if torch.is_tensor(item) else torch.from_numpy(np.array(item))
        item[item >= self.offset] -= self.offset
        return item


@register_task("masked_lm_words", dataclass=MaskedLMWordsConfig)
class MaskedLMWordsTask(MaskedLMTask):
    def _vocab_starts(self):
        root = self.cfg._get_parent() if hasattr(self.cfg, "_get_parent") else None
        bpe_cfg = root.get("bpe") if root is not None else None
        starts = get_whole_word_mask(bpe_cfg, self.dictionary) if bpe_cfg is not None else None
        if starts is None:
            raise ValueError("--mask-whole-words needs the scheme's --bpe options (binarize.json 'fairseq_args'; "
                             "pretrain_roberta.sh passes them): without them no word boundaries are known")
        return starts.numpy()

    def _load_dataset_split(self, split, epoch, combine):
        whole, drop = self.cfg.mask_whole_words, self.cfg.drop_space_tokens
        if not (whole or drop):
            return super()._load_dataset_split(split, epoch, combine)
        space = self.dictionary.index(SPACE_SYMBOL)
        if drop and space == self.dictionary.unk():
            raise ValueError(f"--drop-space-tokens: the dictionary has no {SPACE_SYMBOL} token")
        paths = utils.split_paths(self.cfg.data)
        path = os.path.join(paths[(epoch - 1) % len(paths)], split)
        dataset = data_utils.load_indexed_dataset(path, self.dictionary, combine=combine)
        if dataset is None:
            raise FileNotFoundError(f"Dataset not found: {split} ({path})")
        dataset = WordStartsDataset(dataset, space, self.dictionary.nspecial,
                                    self._vocab_starts() if whole else None, len(self.dictionary) if whole else 0, drop)
        # from here on as fairseq's masked_lm: shorten, pack into blocks, prepend <s>
        dataset = maybe_shorten_dataset(dataset, split, self.cfg.shorten_data_split_list, self.cfg.shorten_method,
                                        self.cfg.tokens_per_sample, self.cfg.seed)
        dataset = TokenBlockDataset(dataset, dataset.sizes, self.cfg.tokens_per_sample - 1, pad=self.dictionary.pad(),
                                    eos=self.dictionary.eos(), break_mode=self.cfg.sample_break_mode)
        logger.info(f"loaded {len(dataset)} blocks from: {path} (word starts marked: {whole}, spaces dropped: {drop})")
        return PrependTokenDataset(dataset, self.dictionary.bos())

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        if not self.cfg.mask_whole_words:
            return super().load_dataset(split, epoch, combine, **kwargs)
        offset = len(self.dictionary)
        src, tgt = MaskTokensDataset.apply_mask(
            self._load_dataset_split(split, epoch, combine), self.dictionary, pad_idx=self.dictionary.pad(),
            mask_idx=self.mask_idx, seed=self.cfg.seed, mask_prob=self.cfg.mask_prob,
            leave_unmasked_prob=self.cfg.leave_unmasked_prob, random_token_prob=self.cfg.random_token_prob,
            freq_weighted_replacement=self.cfg.freq_weighted_replacement,
            mask_whole_words=_ShiftedStarts(offset, self.dictionary.nspecial),
            mask_multiple_length=self.cfg.mask_multiple_length, mask_stdev=self.cfg.mask_stdev)
        src, tgt = UnshiftDataset(src, offset), UnshiftDataset(tgt, offset)
        with data_utils.numpy_seed(self.cfg.seed):
            shuffle = np.random.permutation(len(src))
        self.datasets[split] = SortDataset(
            self._regular_dataset(src, RightPadDataset(tgt, pad_idx=self.dictionary.pad())),
            sort_order=[shuffle, src.sizes])
