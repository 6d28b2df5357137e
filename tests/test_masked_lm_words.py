"""Whole-word masking with every space variant (fairseq_plugins/masked_lm_words.py): the spans the masking would
mask are the words of the text for BPE, BPE', Unigram' with spaces kept and dropped; tiny RoBERTa pretraining
with --mask-whole-words on the four space-as-token variants; a two-shard LM data-bin trains round-robin."""
import json

import pytest
import torch

from preprocess.models.spm import SPACE_SYMBOL
from tests.conftest import REPO, multi30k_slice

# (SentencePiece algorithm, variant, spaces): BPE, BPE', BPE' no spaces, Unigram', Unigram' no spaces
VARIANTS = [("bpe", "default", "keep"), ("bpe", "prime", "keep"), ("bpe", "prime", "drop"),
            ("unigram", "prime", "keep"), ("unigram", "prime", "drop")]
N_VALID = 25


@pytest.fixture(scope="module")
def lm_data(tmp_path_factory):
    """``binarize --lm`` for every variant; valid.en = training sentences, so every character is known."""
    from tests.conftest import run_command

    root = tmp_path_factory.mktemp("wwm")
    raw = multi30k_slice(root / "mt", 300, 1, 1)
    text = root / "text"
    text.mkdir()
    train = (raw / "train.en").read_text()
    (text / "train.en").write_text(train)
    (text / "valid.en").write_text("".join(train.splitlines(keepends=True)[:N_VALID]))
    out = {}
    for model_type, variant, spaces in VARIANTS:
        d = root / f"{model_type}-{variant}-{spaces}"
        run_command(["python", "-m", "train_scripts.binarize", "--lm", "--scheme", "spaces", "--data", text,
                  "--src", "en", "--out", d, "--vocab-size", "300", "--model-type", model_type, "--variant", variant,
                  "--spaces", spaces])
        out[(model_type, variant, spaces)] = d
    return root, text, out


def _task(info, *extra):
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    drop = ["--drop-space-tokens"] if info.get("spaces") == "drop" else []
    args = options.parse_args_and_arch(options.get_training_parser(), [
        info["data"], "--user-dir", str(REPO / "fairseq_plugins"), "--task", "masked_lm_words", "--arch",
        # complete mode with blocks of one token: every sentence is a block of its own (fairseq-fixed's "eos"
        # mode fails on numpy 2: np.compat)
        "roberta_base", "--sample-break-mode", "complete", "--tokens-per-sample", "2", "--mask-prob", "0.3",
        "--seed", "3", *info["fairseq_args"], *drop, *extra])
    return tasks.setup_task(convert_namespace_to_omegaconf(args).task)


@pytest.mark.parametrize("variant", VARIANTS, ids=["-".join(v) for v in VARIANTS])
def test_masked_spans_are_the_words(lm_data, variant):
    root, text, out = lm_data
    info = json.loads((out[variant] / "binarize.json").read_text())
    assert info["fairseq_args"][:2] == ["--bpe", "spaces"] and info.get("spaces", "keep") == variant[2]
    task = _task(info, "--mask-whole-words")
    task.load_dataset("valid")
    d = task.source_dictionary
    offset, space = len(d), d.index(SPACE_SYMBOL)
    blocks = task._load_dataset_split("valid", 1, False)  # the sentences as packed, word starts still marked
    sentences = (text / "valid.en").read_text().splitlines()
    masked_words = 0
    for i, sentence in enumerate(sentences):
        marked = blocks[i]
        starts = ((marked >= offset) | (marked < d.nspecial)).tolist()
        ids = torch.where(marked >= offset, marked - offset, marked)
        item = task.datasets["valid"][i]
        target, source = item["target"], item["net_input.src_tokens"]
        assert len(target) == len(source) == len(ids)
        masked = (target != d.pad()).tolist()
        assert torch.equal(target[target != d.pad()], ids[target != d.pad()])  # targets are the original ids
        # units as fairseq's MaskTokensDataset forms them: from one start to the next (<s> and </s> alone)
        bounds = [k for k, s in enumerate(starts) if s] + [len(ids)]
        units = [range(a, b) for a, b in zip(bounds, bounds[1:])]
        words = []
        for unit in units:
            assert len({masked[k] for k in unit}) == 1, f"sentence {i}: a unit is masked in part"
            pieces = [d[int(ids[k])] for k in unit]
            if pieces in (["<s>"], ["</s>"]):
                continue
            if pieces == [SPACE_SYMBOL]:  # spaces kept: a space is a unit of its own, never part of a word
                assert variant[2] == "keep"
                continue
            word = "".join(pieces).replace(SPACE_SYMBOL, " ")
            assert word == word.strip() or variant[1] == "default", f"space inside a masked word: {pieces}"
            words.append(word.strip())
            masked_words += masked[unit[0]]
        assert words == sentence.split(), f"sentence {i}"
        if variant[2] == "drop":
            assert space not in ids.tolist() and space not in source.tolist()
        elif variant[1] == "prime":
            assert ids.tolist().count(space) == len(sentence.split()) - 1
    assert masked_words > 0.15 * sum(len(s.split()) for s in sentences)


def test_drop_without_whole_words_and_sizes(lm_data):
    """--drop-space-tokens alone (no whole-word masking) removes the ▁ and the dataset sizes say so."""
    root, text, out = lm_data
    keep = json.loads((out[("unigram", "prime", "keep")] / "binarize.json").read_text())
    drop = json.loads((out[("unigram", "prime", "drop")] / "binarize.json").read_text())
    sentences = (text / "valid.en").read_text().splitlines()
    a, b = _task(keep), _task(drop)
    a.load_dataset("valid")
    b.load_dataset("valid")
    d = b.source_dictionary
    for i, sentence in enumerate(sentences):
        kept, dropped = a.datasets["valid"][i]["net_input.src_tokens"], b.datasets["valid"][i]["net_input.src_tokens"]
        assert len(kept) - len(dropped) == len(sentence.split()) - 1 and d.index(SPACE_SYMBOL) not in dropped
    assert [int(n) for n in b.datasets["valid"].sizes[0]] == [len(b.datasets["valid"][i]["net_input.src_tokens"])
                                               for i in range(len(sentences))]


def test_whole_words_needs_the_scheme_options(lm_data):
    root, text, out = lm_data
    info = json.loads((out[("bpe", "prime", "keep")] / "binarize.json").read_text())
    task = _task(dict(info, fairseq_args=[]), "--mask-whole-words")
    with pytest.raises(ValueError, match="needs the scheme's --bpe"):
        task.load_dataset("valid")


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v[1] == "prime"], ids=lambda v: "-".join(v))
def test_tiny_pretraining_with_whole_word_masking(run_cli, lm_data, variant):
    root, text, out = lm_data
    save = root / ("ckpt-" + "-".join(variant))
    run_cli(["bash", "train_scripts/pretrain_roberta.sh", "--data", out[variant], "--save-dir", save, "--tiny",
             "--mask-whole-words", "--max-update", "4", "--validate-interval-updates", "2"])
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    cfg = state["cfg"]
    assert cfg["task"]["_name"] == "masked_lm_words" and cfg["task"]["mask_whole_words"]
    assert cfg["task"]["drop_space_tokens"] == (variant[2] == "drop")
    assert cfg["bpe"]["_name"] == "spaces" and cfg["bpe"]["spaces_model"].endswith(".model")
    assert state["optimizer_history"][-1]["num_updates"] == 4
    curve = [json.loads(x) for x in (save / "valid_log.jsonl").read_text().splitlines()]
    assert [r["update"] for r in curve] == [2, 4] and all(r["valid_loss"] > 0 for r in curve)


def test_two_shard_lm_data_trains_round_robin(run_cli, lm_data, tmp_path):
    root, text, _ = lm_data
    out = tmp_path / "sharded"
    run_cli(["python", "-m", "train_scripts.binarize", "--lm", "--scheme", "spaces", "--data", text, "--src", "en",
             "--out", out, "--vocab-size", "300", "--shards", "2"])
    info = json.loads((out / "binarize.json").read_text())
    shards = [out / "data-bin" / "shard0", out / "data-bin" / "shard1"]
    assert info["data"] == ":".join(map(str, shards))
    assert all((s / "dict.txt").exists() and (s / "train.bin").exists() for s in shards)
    assert (shards[0] / "valid.bin").exists()
    save = tmp_path / "ckpt"
    proc = run_cli(["bash", "train_scripts/pretrain_roberta.sh", "--data", out, "--save-dir", save, "--tiny",
                    "--max-update", "1000", "--max-epoch", "3", "--validate-interval-updates", "0"])
    log = proc.stdout + proc.stderr
    # epoch e trains on shard (e-1) mod 2: shard0, shard1, shard0 (fairseq then already loads epoch 4's shard1)
    loads = [line.split("loaded", 1)[1] for line in log.splitlines() if "blocks from:" in line and "/train" in line]
    assert [("shard1" in x) for x in loads][:3] == [False, True, False] and len(loads) in (3, 4), loads
    assert all(("shard0" in x) != ("shard1" in x) for x in loads)
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["extra_state"]["train_iterator"]["epoch"] == 4  # three epochs finished
