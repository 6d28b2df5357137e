"""Pseudo-perplexity per word (train_scripts/pseudo_perplexity.py, BITE paper section 4.3) over a tiny RoBERTa
pretrained by the recipes (binarize --lm spaces, pretrain_roberta.sh --tiny): the pieces are those of the
pretraining data, every position is masked alone (against a slow one-call-per-position loop), the per-word
number is exp(NLL / raw words), a damaged model scores worse, runs repeat exactly, and the command line."""
import gzip
import json
import math

import pytest
import torch

from tests.conftest import multi30k_slice, run_command
from train_scripts import pseudo_perplexity as pp


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """(binarize --lm folder, checkpoint, raw folder): 400 Multi30k lines, vocabulary 500, 30 tiny updates."""
    from train_scripts.binarize import binarize

    root = tmp_path_factory.mktemp("pppl")
    raw = multi30k_slice(root / "raw", 400, 20, 10)
    lm, save = root / "lm", root / "ckpt"
    binarize({"scheme": "spaces", "vocab_size": 500}, str(raw), str(lm), "en", None, lm=True)
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", save, "--tiny",
                 "--max-update", "30", "--validate-interval-updates", "30", "--no-epoch-checkpoints"])
    return lm, save / "checkpoint_last.pt", raw


@pytest.fixture(scope="module")
def loaded(lm):
    lm_dir, checkpoint, _ = lm
    return pp.load_model(str(lm_dir), str(checkpoint))


def _lines(path, n=None):
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    return lines[:n] if n else lines


def _slow_pll(model, ids, mask_idx):
    """One forward pass per position, the whole vocabulary projected, no batching."""
    total = 0.0
    for pos in range(1, len(ids) - 1):
        masked = ids.clone()
        masked[pos] = mask_idx
        with torch.no_grad():
            logits = model(masked.unsqueeze(0), features_only=False, return_all_hiddens=False)[0]
        total += torch.log_softmax(logits[0, pos].double(), dim=-1)[ids[pos]].item()
    return total


@pytest.mark.slow
def test_pieces_are_the_pretraining_data_and_no_spaces_drops_them(lm):
    lm_dir, _, raw = lm
    info = json.loads((lm_dir / "binarize.json").read_text())
    row = pp.RowEncoder(info)
    valid = _lines(raw / "valid.en")
    assert [" ".join(p) for p in row.encode(valid)] == _lines(lm_dir / "tok" / "valid.en")
    assert any("▁" in p for p in row.encode(valid))
    no_spaces = pp.RowEncoder({**info, "spaces": "drop"})
    assert no_spaces.encode(valid) == [[t for t in p if t != "▁"] for p in row.encode(valid)]


@pytest.mark.slow
def test_bite_pieces_carry_the_inflection_symbols(lm, tmp_path):
    """A BITE row (learned only: no model is needed) encodes as its training data was, symbols included, and the
    paper's denominator counts the symbols as words."""
    from preprocess.schemes.bite import INFLECTION_SYMBOLS, BiteTokenizer
    from train_scripts.binarize import binarize

    _, _, raw = lm
    info = binarize({"scheme": "bite", "vocab_size": 500}, str(raw), str(tmp_path / "bite"), "en", None, lm=True,
                    learn_only=True)
    row = pp.RowEncoder(info)
    train = _lines(raw / "train.en", 50)
    encoded = row.encode(train)
    assert [" ".join(p) for p in encoded] == _lines(tmp_path / "bite" / "models" / "train.encoded.en", 50)
    symbols = sum(row.inflection_symbols(p) for p in encoded)
    assert symbols == sum(t in INFLECTION_SYMBOLS for p in encoded for t in p) > 10
    words = BiteTokenizer("moses", tagger="nltk").tokenize_batch(train)   # BITE's word form: words and symbols
    assert sum(row.pretokenized_words(x) + row.inflection_symbols(p) for x, p in zip(train, encoded)) == \
        sum(map(len, words))


@pytest.mark.slow
def test_every_position_is_masked_alone(loaded, lm):
    hub, info = loaded
    lines = ["A man rides a bike .", "", "Two dogs play in the snow ."]
    result = pp.score_lines(hub, info, lines, batch_size=5)   # copies of the two sentences mixed across batches
    d = hub.task.source_dictionary
    row = pp.RowEncoder(info)
    for line, got in zip(lines, result["sentence_pll"]):
        if not line:
            assert got is None
            continue
        ids = torch.tensor([d.bos(), *[d.index(p) for p in row.encode([line])[0]], d.eos()])
        assert got == pytest.approx(_slow_pll(hub.model, ids, hub.task.mask_idx), rel=1e-5)
    assert result["scored_lines"] == 2 and result["empty_lines"] == 1 and result["words"] == 13
    assert result["space_tokens_dropped"] is False
    # a checkpoint whose task dropped the ▁ tokens (a "no spaces" row) is given none, whatever the record says
    hub.task.cfg.drop_space_tokens = True
    try:
        dropped = pp.score_lines(hub, info, lines[:1])
    finally:
        hub.task.cfg.drop_space_tokens = False
    assert dropped["space_tokens_dropped"] is True
    assert dropped["tokens"] == len([t for t in row.encode(lines[:1])[0] if t != "▁"]) < result["tokens"] / 2


@pytest.mark.slow
def test_per_word_number_deterministic_and_a_damaged_model_is_worse(loaded, lm):
    hub, info = loaded
    _, _, raw = lm
    lines = _lines(raw / "train.en", 20)
    first = pp.score_lines(hub, info, lines)
    words = sum(len(line.split()) for line in lines)
    nll = -sum(first["sentence_pll"])
    assert first["words"] == words and first["nll"] == pytest.approx(nll)
    assert 1 < first["pppl_per_word"] < math.inf
    assert first["pppl_per_word"] == pytest.approx(math.exp(nll / words))
    assert first["bits_per_word"] == pytest.approx(nll / words / math.log(2))
    assert first["pppl_per_token"] == pytest.approx(math.exp(nll / first["tokens"]))
    assert first["tokens"] > words   # space tokens and subwords: more pieces than words
    again = pp.score_lines(hub, info, lines, batch_size=7)
    assert again["pppl_per_word"] == pytest.approx(first["pppl_per_word"], rel=1e-6)
    assert pp.score_lines(hub, info, lines)["sentence_pll"] == first["sentence_pll"]   # bit for bit
    # the same model with its weights randomised
    saved = {k: v.clone() for k, v in hub.model.state_dict().items()}
    try:
        generator = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for p in hub.model.parameters():
                p.copy_(torch.randn(p.shape, generator=generator) * 0.5)
        worse = pp.score_lines(hub, info, lines)
    finally:
        hub.model.load_state_dict(saved)
    assert worse["pppl_per_word"] > first["pppl_per_word"] * 2
    # and the trained model is better than uniform over its vocabulary
    assert first["pppl_per_token"] < len(hub.task.source_dictionary)


@pytest.mark.slow
def test_long_lines_are_cut_after_a_whole_word(loaded):
    hub, info = loaded
    line = " ".join(["A man rides a red bike down the street ."] * 12)   # far over the tiny model's 64 positions
    result = pp.score_lines(hub, info, [line, "A dog ."])
    assert result["max_positions"] == 64 and result["truncated_lines"] == 1
    assert result["truncated_words"] > 0 and result["words"] + result["truncated_words"] == 120 + 3
    kept = result["words"] - 3
    cut = " ".join(line.split()[:kept])
    row = pp.RowEncoder(info)
    assert len(row.encode([cut])[0]) <= 62 < len(row.encode([" ".join(line.split()[:kept + 1])])[0])


@pytest.mark.slow
def test_command_line_noise_and_errors(lm, tmp_path, capsys):
    from preprocess.cli import run_main

    lm_dir, checkpoint, raw = lm
    heldout = tmp_path / "heldout.en.gz"
    with gzip.open(heldout, "wt", encoding="utf-8") as fh:
        fh.write((raw / "test.en").read_text())
    out = tmp_path / "pppl.json"
    args = ["--lm-data", str(lm_dir), "--checkpoint", str(checkpoint), "--input", str(heldout), "--max-lines", "6"]
    assert run_main(pp.main, [*args, "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    words = sum(len(x.split()) for x in _lines(raw / "test.en", 6))
    assert record["lines"] == 6 and record["words"] + record["truncated_words"] == words
    assert "sentence_pll" not in record and record["scheme"] == "spaces"
    # the demo's inflection noise: the helper's file and the in-memory copy give the same text and number
    noisy = tmp_path / "heldout.infl.en"
    stats = pp.write_inflection_noise(str(raw / "test.en"), str(noisy))
    assert stats["kind"] == "infl" and stats["changed"] > 0
    assert run_main(pp.main, [*args, "--infl-noise", "0.3", "--output", str(out)]) == 0
    in_memory = json.loads(out.read_text())
    from_file = pp.pseudo_perplexity(str(lm_dir), str(checkpoint), str(noisy), max_lines=6)
    assert in_memory["noise"]["changed"] > 0
    assert in_memory["pppl_per_word"] == pytest.approx(from_file["pppl_per_word"], rel=1e-9)
    assert in_memory["pppl_per_word"] != pytest.approx(record["pppl_per_word"], rel=1e-9)
    capsys.readouterr()
    # one-line errors, no output written
    empty = tmp_path / "empty.en"
    empty.write_text("\n  \n")
    bad = tmp_path / "bad.json"
    for wrong, message in (([*args[:4], "--input", str(tmp_path / "none.en")], "not found"),
                           ([*args[:4], "--input", str(empty)], "no text"),
                           (["--lm-data", str(lm_dir), "--checkpoint", str(tmp_path / "none.pt"), *args[4:]],
                            "not found")):
        assert run_main(pp.main, [*wrong, "--output", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not bad.exists()


# --- fast: no model trained ----------------------------------------------------------------------------------------

class _Recorder(torch.nn.Module):
    """Stands in for RoBERTa: records every masked copy and gives log-probability -(position) to each true token
    (uniform otherwise), so a sentence's PLL is known in closed form."""

    def __init__(self, vocab=20):
        super().__init__()
        self.vocab, self.rows = vocab, []

    def forward(self, tokens, features_only=False, return_all_hiddens=False, masked_tokens=None):
        self.rows += [(row.clone(), m.clone()) for row, m in zip(tokens, masked_tokens)]
        logits = torch.full((int(masked_tokens.sum()), self.vocab), -1e9)
        pos = masked_tokens.nonzero()[:, 1]
        original = self.truth[masked_tokens.nonzero()[:, 0], pos]
        logits[torch.arange(len(pos)), original] = -pos.float()   # log_softmax of a one-hot-ish row: 0 ...
        logits[torch.arange(len(pos)), (original + 1) % self.vocab] = 0.0   # ... with a rival at 0
        return logits, {}


def test_batched_copies_mask_one_position_each():
    seqs = [torch.tensor([0, 5, 6, 7, 2]), torch.tensor([0, 8, 2]), torch.tensor([0, 9, 10, 11, 12, 13, 2])]
    model = _Recorder()
    # the stand-in reads each row's true tokens from the unmasked copies it is given in the same order
    jobs = [(i, p) for i in sorted(range(3), key=lambda i: -len(seqs[i])) for p in range(1, len(seqs[i]) - 1)]
    width = max(map(len, seqs))
    model.truth = torch.stack([torch.nn.functional.pad(seqs[i], (0, width - len(seqs[i])), value=1)
                               for i, _ in jobs])
    plls = pp.sentence_plls(model, seqs, mask_idx=4, pad_idx=1, batch_size=len(jobs))
    for (i, p), (row, masked) in zip(jobs, model.rows):
        assert masked.sum() == 1 and masked[p] and row[p] == 4
        assert torch.equal(row[:len(seqs[i])][torch.arange(len(seqs[i])) != p], seqs[i][torch.arange(len(seqs[i])) != p])
        assert (row[len(seqs[i]):] == 1).all()   # padding
    expected = [sum(math.log(math.exp(-p) / (math.exp(-p) + 1)) for p in range(1, len(s) - 1)) for s in seqs]
    assert plls == pytest.approx(expected)


def test_missing_files_are_one_line(tmp_path, capsys):
    from preprocess.cli import run_main

    text = tmp_path / "t.en"
    text.write_text("A dog .\n")
    for args, message in ((["--lm-data", str(tmp_path / "none"), "--checkpoint", str(text), "--input", str(text)],
                           "--lm-data not found"),
                          (["--lm-data", str(tmp_path), "--checkpoint", str(tmp_path / "c.pt"), "--input", str(text)],
                           "--checkpoint not found")):
        assert run_main(pp.main, args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


# --- marked words (--word-marks) -------------------------------------------------------------------------------------

def test_piece_words_follow_the_word_start_marks():
    # a "spaces" row: standalone ▁ between words (none before the first), punctuation glued to its word
    assert pp.piece_words(["E", "r", "▁", "g", "in", "g", "▁", "1997!"]) == [0, 0, 1, 1, 1, 1, 2, 2]
    # SentencePiece / Wordmap: ▁-prefixed pieces, a standalone ▁ belongs to the word after it
    assert pp.piece_words(["▁", "E", "r", "▁nach", "▁spielt", "en", ",", "▁", "„", "K"]) == [0, 0, 0, 1, 2, 2, 2, 3, 3, 3]
    # BITE's inflection symbols stay with their word; a trailing ▁ is the last word's
    assert pp.piece_words(["▁", "H", "e", "▁", "run", "[VBD]", "▁h", "ome", "."]) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert pp.piece_words(["▁a", "b", "▁"]) == [0, 0, 0] and pp.piece_words([]) == []
    assert pp.words_align(pp.piece_words(["▁a", "▁b"]), 2) and not pp.words_align([0, 0], 2)


@pytest.mark.slow
def test_marked_words_sum_their_pieces(loaded):
    """All words marked: the all-words figure; none: no figure; some: the sum of their pieces' PLLs, counted by
    hand from the pieces' own PLLs; a "no spaces" row attributes pieces the same way."""
    hub, info = loaded
    lines = ["A man rides a bike .", "", "Two dogs play in the snow ."]
    n = [len(line.split()) for line in lines]
    plain = pp.score_lines(hub, info, lines)
    every = pp.score_lines(hub, info, lines, word_marks=[[1] * k for k in n])
    assert every["marked"]["words"] == every["words"] == 13 and every["marked"]["tokens"] == every["tokens"]
    assert every["marked"]["pppl_per_word"] == pytest.approx(plain["pppl_per_word"], rel=1e-9)
    assert every["marked"]["bits_per_word"] == pytest.approx(plain["bits_per_word"], rel=1e-9)
    assert every["sentence_pll"][0] == pytest.approx(plain["sentence_pll"][0], rel=1e-9)
    none = pp.score_lines(hub, info, lines, word_marks=[[0] * k for k in n])["marked"]
    assert none["words"] == none["marks"] == 0 and none["pppl_per_word"] is None and none["nll"] is None
    # "rides" and "play": their pieces' PLLs (space tokens included: each is the next word's)
    marks = [[0, 0, 1, 0, 0, 0], [], [0, 0, 1, 0, 0, 0, 0]]
    some = pp.score_lines(hub, info, lines, word_marks=marks)["marked"]
    row = pp.RowEncoder(info)
    d = hub.task.source_dictionary
    expected = 0.0
    for line, line_marks in zip(lines, marks):
        if not line:
            continue
        pieces, words = row.encode_words([line])[0]
        assert pieces == row.encode([line])[0] and pp.words_align(words, len(line.split()))
        ids = [d.bos(), *[d.index(p) for p in pieces], d.eos()]
        logps = pp.token_plls(hub.model, [ids], hub.task.mask_idx, d.pad())[0]
        assert math.fsum(logps) == pytest.approx(_slow_pll(hub.model, torch.tensor(ids), hub.task.mask_idx))
        expected += sum(lp for lp, w in zip(logps, words) if line_marks[w])
    assert some["words"] == some["marks"] == 2 and some["nll"] == pytest.approx(-expected)
    assert some["pppl_per_word"] == pytest.approx(math.exp(-expected / 2))
    assert some["unaligned_lines"] == some["truncated_words"] == 0
    # no spaces: the ▁ dropped after the words are taken, every word still found
    hub.task.cfg.drop_space_tokens = True
    try:
        dropped = pp.score_lines(hub, info, lines, word_marks=[[1] * k for k in n])
    finally:
        hub.task.cfg.drop_space_tokens = False
    assert dropped["marked"]["words"] == 13 and dropped["marked"]["unaligned_lines"] == 0
    assert dropped["marked"]["pppl_per_word"] == pytest.approx(dropped["pppl_per_word"], rel=1e-9)
    with pytest.raises(pp.UserError, match="word marks:3: 2 marks for the 7 words of line 3"):
        pp.score_lines(hub, info, lines, word_marks=[[1] * 6, [], [1, 1]])


@pytest.mark.slow
def test_command_line_word_marks(lm, tmp_path, capsys):
    from preprocess.cli import run_main

    lm_dir, checkpoint, raw = lm
    lines = _lines(raw / "test.en", 4)
    marks = tmp_path / "marks.txt"
    marks.write_text("".join(" ".join("1" if k == 1 else "0" for k in range(len(x.split()))) + "\n" for x in lines))
    out = tmp_path / "pppl.json"
    args = ["--lm-data", str(lm_dir), "--checkpoint", str(checkpoint), "--input", str(raw / "test.en"),
            "--max-lines", "4"]
    assert run_main(pp.main, [*args, "--word-marks", str(marks), "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["marked"]["words"] == record["marked"]["marks"] == 4 and record["marked"]["file"] == str(marks)
    assert record["marked"]["pppl_per_word"] > 1 and "pppl_per_word" in record
    capsys.readouterr()
    out.unlink()
    wrong = tmp_path / "wrong.txt"
    for text, message in (("1 0\n", f"{wrong}:1: 2 marks for the {len(lines[0].split())} words of line 1"),
                          ("0 x\n", f"{wrong}:1: 'x' is no word mark"),
                          ("".join(" ".join("0" * len(x.split())) + "\n" for x in lines[:2]), "has 2 lines")):
        wrong.write_text(text)
        assert run_main(pp.main, [*args, "--word-marks", str(wrong), "--output", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()


@pytest.mark.slow
def test_the_unigram_floor_is_the_pieces_training_frequency(loaded, lm):
    """unigram_bits_per_word, the trivial floor beside bits_per_word: the scored pieces' add-one frequencies in
    the pretraining text, counted here by hand from its tokenised copy (tok/train.en); the 30-update model, which
    has barely learned, is still worse than it (the floor is one a model can fail to clear)."""
    from collections import Counter

    hub, info = loaded
    lm_dir, _, raw = lm
    d = hub.task.source_dictionary
    tok = _lines(lm_dir / "tok" / "train.en")
    train = Counter(d.index(p) for line in tok for p in line.split())
    counts = pp.train_counts(hub)
    for i, n in train.items():
        assert counts[i] == n, d[i]
    assert counts[d.eos()] == len(tok) and counts.sum() == sum(train.values()) + len(tok)   # + one </s> per line
    row = pp.RowEncoder(info)
    limit = hub.model.max_positions() - 2
    lines = [x for x in _lines(raw / "valid.en") if len(row.encode([x])[0]) <= limit][:10]   # none truncated
    result = pp.score_lines(hub, info, lines)
    assert len(lines) == 10 and result["truncated_lines"] == 0
    total = counts.sum() + len(counts)
    expected = -sum(math.log((counts[d.index(p)] + 1) / total) for p in sum(row.encode(lines), []))
    words = sum(len(x.split()) for x in lines)
    assert result["unigram_bits_per_word"] == pytest.approx(expected / words / math.log(2))
    assert result["bits_per_word"] > result["unigram_bits_per_word"] + 3   # 30 updates: worse than frequencies
