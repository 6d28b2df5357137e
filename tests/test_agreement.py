"""Whole-word pseudo-log-likelihood (pseudo_perplexity --whole-words, PLL-word-l2r), the character floor
(preprocess/evaluate/char_lm.py) against hand computations, the paired tests (preprocess/evaluate/paired.py),
and the zero-shot agreement command (train_scripts/agreement.py) on a tiny German RoBERTa."""
import json
import math

import pytest
import torch

from preprocess.evaluate import paired
from preprocess.evaluate.char_lm import END, START, CharLM, word_floor
from tests.conftest import multi30k_slice, run_command
from train_scripts import agreement as ag
from train_scripts import pseudo_perplexity as pp

# --- the character floor ---------------------------------------------------------------------------------------------

def test_char_lm_matches_a_hand_computation():
    # order 2 on "ab": unigrams a, b, END once each (N 3, V 3 + 1); each bigram history seen once, one type
    lm = CharLM(["ab"], order=2)
    p0 = {"a": 2 / 7, "b": 2 / 7, END: 2 / 7, "z": 1 / 7, " ": 1 / 7}
    assert lm.prob("a", START) == pytest.approx((1 + p0["a"]) / 2) == pytest.approx(9 / 14)
    assert lm.prob("b", "a") == pytest.approx(9 / 14) and lm.prob(END, "b") == pytest.approx(9 / 14)
    assert lm.prob("z", "a") == pytest.approx((0 + 1 * p0["z"]) / 2)   # unseen after a seen history
    assert lm.prob("z", "q") == pytest.approx(p0["z"])                 # unseen history: the base alone
    assert lm.word_log_probs("ab") == pytest.approx([3 * math.log(9 / 14)])
    # "a z": a | START, ' ' | a, z | ' ' (unseen history), END | z (unseen history); a word owns its separator
    assert lm.word_log_probs(" a   z ") == pytest.approx([math.log(9 / 14) + math.log(1 / 14),
                                                         math.log(1 / 7) + math.log(2 / 7)])
    assert sum(lm.word_log_probs("a z")) == pytest.approx(sum(lm.line_log_probs("a z")))
    # order 3 on "aa": the interpolation goes up the histories, each with its own type count
    lm3 = CharLM(["aa"], order=3)
    base = (2 + 1) / (3 + 3)                         # a: 2 of N 3, V = {a, END} + 1
    after_a = (1 + 2 * base) / (2 + 2)               # 'a' followed by a and END once each
    assert lm3.prob("a", START + "a") == pytest.approx((1 + 1 * after_a) / (1 + 1)) == pytest.approx(0.75)
    floor = word_floor(lm, ["ab", "a z"], [[1], [0, 1]])
    assert floor["words"] == 2
    assert floor["bits_per_word"] == pytest.approx(-(3 * math.log(9 / 14) + math.log(2 / 49)) / 2 / math.log(2))


# --- the paired tests ------------------------------------------------------------------------------------------------

def test_paired_bootstrap_bits():
    a = [[-1.0, -2.0, -0.5], [-3.0], [-0.1, -0.2]]
    same = paired.paired_bootstrap_bits(a, [list(x) for x in a])
    assert (same["difference"], same["low"], same["high"]) == (0.0, 0.0, 0.0) and not same["excludes_zero"]
    # B one bit worse on every word: exactly +1 on every resample
    b = [[s - math.log(2) for s in x] for x in a]
    worse = paired.paired_bootstrap_bits(a, b, resamples=200)
    assert worse["difference"] == pytest.approx(1.0) and worse["low"] == pytest.approx(1.0)
    assert worse["high"] == pytest.approx(1.0) and worse["words"] == 6 and worse["sentences"] == 3
    # marks: only the marked words; a worse marked word alone
    c = [list(x) for x in a]
    c[0][1] -= 4 * math.log(2)
    marked = paired.paired_bootstrap_bits(a, c, marks=[[0, 1, 0], [0], [0, 0]])
    assert marked["difference"] == pytest.approx(4.0) and marked["words"] == 1
    assert paired.paired_bootstrap_bits(a, c, seed=3) == paired.paired_bootstrap_bits(a, c, seed=3)
    with pytest.raises(paired.UserError, match="sentence 2"):
        paired.paired_bootstrap_bits(a, [a[0], [], a[2]])
    # a row that kept fewer words of a long line (cut at the model's length): compared on the words both scored
    cut, full = paired.shared_words(a, [a[0][:2], a[1], None])
    assert cut == [a[0][:2], a[1], None] and full == [a[0][:2], a[1], None]
    assert paired.paired_bootstrap_bits(cut, full)["words"] == 3


def test_mcnemar():
    assert paired.mcnemar([1, 0, 1], [1, 0, 1]) == {"b01": 0, "b10": 0, "p": 1.0}
    result = paired.mcnemar([1, 1, 1, 0, 1], [0, 0, 0, 0, 1])
    assert result["b01"] == 0 and result["b10"] == 3 and result["p"] == pytest.approx(0.25)   # 2 * 0.5 ** 3
    assert paired.mcnemar([0] * 10 + [1], [1] * 10 + [0])["p"] == pytest.approx(2 * (1 + 11) / 2 ** 11)   # P(X <= 1), both tails
    assert ag.mcnemar is paired.mcnemar
    with pytest.raises(paired.UserError):
        paired.mcnemar([1], [1, 0])


# --- the whole-word masking ------------------------------------------------------------------------------------------

def test_l2r_spans_cover_the_rest_of_the_word():
    # pieces of words 0 0 0 1 1 2 at positions 1..6
    assert pp.l2r_spans([0, 0, 0, 1, 1, 2]) == [4, 4, 4, 6, 6, 7]
    assert pp.l2r_spans([0]) == [2] and pp.l2r_spans([]) == []
    assert pp.word_sums([-1.0, -2.0, -4.0], [0, 0, 1], 2) == [-3.0, -4.0]


class _Copier(torch.nn.Module):
    """Predicts the token just right of the masked position when it can see one (all the mass on it), else
    uniform: a model that gains exactly from seeing a word's later pieces."""

    def __init__(self, vocab=20, mask=4, eos=2):
        super().__init__()
        self.vocab, self.mask, self.eos, self.rows = vocab, mask, eos, []

    def forward(self, tokens, features_only=False, return_all_hiddens=False, masked_tokens=None):
        self.rows += [row.clone() for row in tokens]
        out = []
        for r, p in masked_tokens.nonzero().tolist():
            logits = torch.zeros(self.vocab)
            right = int(tokens[r, p + 1])
            if right not in (self.mask, self.eos, 1):
                logits[right] = 100.0
            out.append(logits)
        return torch.stack(out), {}


def test_whole_words_never_show_a_words_later_pieces():
    # a one-piece word, then a word of three identical pieces: <s> 9 7 7 7 </s>
    seq = torch.tensor([0, 9, 7, 7, 7, 2])
    words = [0, 1, 1, 1]
    model = _Copier()
    piece = pp.token_plls(model, [seq], mask_idx=4, pad_idx=1)[0]
    uniform = -math.log(20)
    assert piece[1:] == pytest.approx([0.0, 0.0, uniform], abs=1e-6)   # piece-level: copied from the right
    model = _Copier()
    whole = pp.whole_word_token_plls(model, [seq], [words], mask_idx=4, pad_idx=1)[0]
    assert whole[1:] == pytest.approx([uniform] * 3)                   # nothing to copy inside the word
    assert whole[0] == piece[0] == pytest.approx(-100.0, abs=1e-3)     # the next word stays visible
    # the masked copies: the target and its word's later pieces masked, everything else as it was
    assert len(model.rows) == 4
    for row, p in zip(model.rows, range(1, 5)):
        end = pp.l2r_spans(words)[p - 1]
        assert (row[p:end] == 4).all()
        keep = [k for k in range(len(seq)) if not p <= k < end]
        assert torch.equal(row[keep], seq[keep])
    assert model.rows[1].tolist() == [0, 9, 4, 4, 4, 2] and model.rows[3].tolist() == [0, 9, 7, 7, 4, 2]


# --- the pairs and their form ----------------------------------------------------------------------------------------

def test_pretraining_form():
    assert ag.pretraining_form("die schriftsteller sind alt") == "Die schriftsteller sind alt."
    assert ag.pretraining_form("der mann lacht .") == "Der mann lacht."
    assert ag.pretraining_form("er lacht.") == "Er lacht."
    assert ag.in_form("die  kinder lachen", "clams") == "die kinder lachen"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_pairs_and_one_line_errors(tmp_path, capsys):
    from preprocess.cli import run_main

    good = tmp_path / "good"
    good.mkdir()
    _write(good / "simple.txt", "True\tdie kinder lachen\nFalse\tdie kinder lacht\n"
                                "True\tdas kind lacht\nFalse\tdas kind lachen\n")
    _write(good / "notes.md", "not a construction\n")
    pairs = ag.read_pairs(str(good))
    assert pairs == {"simple": [("die kinder lachen", "die kinder lacht"), ("das kind lacht", "das kind lachen")]}
    assert ag.read_pairs(str(good), max_pairs=1) == {"simple": pairs["simple"][:1]}
    assert ag.subsample(list(range(10)), 4) == [0, 2, 5, 7] and ag.subsample([1, 2], 5) == [1, 2]
    assert ag.subsample([1, 2], 0) == [1, 2]
    bad_dirs = {"no tab": "True die kinder lachen\nFalse\tdie kinder lacht\n",
                "odd number": "True\ta\nFalse\tb\nTrue\tc\n",
                "a True line followed by a False line": "True\ta\nTrue\tb\n",
                "not True or False": "Yes\ta\nFalse\tb\n"}
    fake = _write(tmp_path / "fake.pt", "x")
    out = tmp_path / "out.json"
    args = ["--lm-data", str(tmp_path), "--checkpoint", str(fake), "--output", str(out)]
    for k, (message, text) in enumerate(bad_dirs.items()):
        folder = tmp_path / f"bad{k}"
        folder.mkdir()
        _write(folder / "c.txt", text)
        assert run_main(ag.main, [*args, "--pairs", str(folder)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()
    assert run_main(ag.main, [*args, "--pairs", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_main(ag.main, [*args, "--pairs", str(empty)]) == 2
    assert "no *.txt" in capsys.readouterr().err and not out.exists()


# --- a tiny German model ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """(binarize --lm folder, checkpoint, raw folder): 400 Multi30k German lines, Unigram 500, 20 tiny updates."""
    from train_scripts.binarize import binarize

    root = tmp_path_factory.mktemp("agree")
    raw = multi30k_slice(root / "raw", 400, 20, 10)
    lm, save = root / "lm", root / "ckpt"
    binarize({"scheme": "sentencepiece", "model_type": "unigram", "vocab_size": 500}, str(raw), str(lm), "de", None,
             lm=True)
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", save, "--tiny",
                 "--max-update", "20", "--validate-interval-updates", "20", "--no-epoch-checkpoints"])
    return lm, save / "checkpoint_last.pt", raw


@pytest.mark.slow
def test_whole_word_record(lm, tmp_path):
    lm_dir, checkpoint, raw = lm
    hub, info = pp.load_model(str(lm_dir), str(checkpoint))
    lines = ["Ein Hund rennt durch den Schnee.", "", "Zwei Kinder spielen Fußball auf der Wiese."]
    plain = pp.score_lines(hub, info, lines)
    whole = pp.score_lines(hub, info, lines, whole_words=True, word_marks=[[0, 0, 1, 0, 0, 0], [],
                                                                          [0, 0, 1, 0, 0, 0, 0]])
    assert "word_scores" not in plain and "char_floor_bits_per_word" not in plain
    assert whole["scoring"] == "PLL-word-l2r" and whole["word_scores_unit"] == "nats"
    assert [len(s) for s in whole["word_scores"]] == [6, 0, 7] and whole["word_scores_unaligned_lines"] == 0
    assert [sum(s) for s in whole["word_scores"] if s] == \
        pytest.approx([x for x in whole["sentence_pll"] if x is not None])
    # the report's comparison of two rows (here the row with itself, and one line's marks)
    same = pp.paired_bootstrap_bits(whole["word_scores"], whole["word_scores"],
                                    marks=[[0, 0, 1, 0, 0, 0], [], [0, 0, 1, 0, 0, 0, 0]])
    assert (same["difference"], same["low"], same["high"], same["words"]) == (0.0, 0.0, 0.0, 2)
    assert whole["words"] == plain["words"] == 13
    assert whole["bits_per_word"] == pytest.approx(-sum(map(sum, whole["word_scores"])) / 13 / math.log(2))
    verbs = whole["word_scores"][0][2] + whole["word_scores"][2][2]
    assert whole["marked"]["bits_per_word"] == pytest.approx(-verbs / 2 / math.log(2))
    # a one-piece word scores as before (nothing of its own to hide); a longer word differs
    row = pp.RowEncoder(info)
    pieces, of_piece = row.encode_words([lines[0]])[0]
    d = hub.task.source_dictionary
    ids = torch.tensor([d.bos(), *[d.index(p) for p in pieces], d.eos()])
    by_piece = pp.token_plls(hub.model, [ids], hub.task.mask_idx, d.pad())[0]
    by_word = pp.whole_word_token_plls(hub.model, [ids], [of_piece], hub.task.mask_idx, d.pad())[0]
    last = [j for j in range(len(of_piece)) if j + 1 == len(of_piece) or of_piece[j + 1] != of_piece[j]]
    for j in last:
        if of_piece.count(of_piece[j]) == 1:
            assert by_word[j] == pytest.approx(by_piece[j], abs=1e-6)
    # the character floor: the words kept, under the character model of raw/train.de
    floor_model = pp.char_floor_model(info)
    kept = [x for x in lines if x]
    assert whole["char_floor_bits_per_word"] == pytest.approx(word_floor(floor_model, kept)["bits_per_word"])
    assert 0 < whole["marked"]["char_floor_bits_per_word"] and whole["char_floor"]["order"] == 5
    assert whole["char_floor"]["train"].endswith("train.de")


@pytest.mark.slow
def test_whole_words_command_line(lm, tmp_path):
    from preprocess.cli import run_main

    lm_dir, checkpoint, raw = lm
    args = ["--lm-data", str(lm_dir), "--checkpoint", str(checkpoint), "--input", str(raw / "test.de"),
            "--max-lines", "4"]
    out = tmp_path / "w.json"
    assert run_main(pp.main, [*args, "--whole-words", "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert len(record["word_scores"]) == 4 and record["whole_words"] is True
    assert record["char_floor_bits_per_word"] > 0 and record["pppl_per_word"] > 1


@pytest.mark.slow
def test_agreement_command(lm, tmp_path, capsys):
    from preprocess.cli import run_main

    lm_dir, checkpoint, _ = lm
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    _write(pairs / "simple.txt", "True\tdie kinder lachen\nFalse\tdie kinder lacht\n"
                                 "True\tdas kind lacht\nFalse\tdas kind lachen\n"
                                 "True\tdie frau geht\nFalse\tdie frau gehen\n")
    _write(pairs / "same.txt", "True\tder hund bellt\nFalse\tder hund bellt\n")   # a tie: wrong
    out = tmp_path / "agree.json"
    base = ["--lm-data", str(lm_dir), "--checkpoint", str(checkpoint), "--pairs", str(pairs)]
    assert run_main(ag.main, [*base, "--random-seeds", "2", "--max-pairs", "2", "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["form"] == "pretraining" and set(record["constructions"]) == {"simple", "same"}
    simple, same = record["constructions"]["simple"], record["constructions"]["same"]
    assert set(simple) == {"pairs", "accuracy", "correct", "random", "chance"}
    assert simple["pairs"] == 2 and len(simple["correct"]) == 2 and len(simple["random"]) == 2
    assert simple["accuracy"] == 100.0 * sum(simple["correct"]) / 2 and simple["chance"] == 50.0
    assert same["correct"] == [0] and same["random"] == [0.0, 0.0] and record["ties"]["same"] == 1
    assert record["overall"]["pairs"] == 3 and len(record["overall"]["random"]) == 2
    assert set(record) >= {"form", "constructions", "overall", "seconds"}
    # the scores are the whole-word PLLs of the sentences in the pretraining form
    hub, info = pp.load_model(str(lm_dir), str(checkpoint))
    good, bad = (pp.score_lines(hub, info, [ag.pretraining_form(s)], whole_words=True)["sentence_pll"][0]
                 for s in ("die kinder lachen", "die kinder lacht"))
    assert simple["correct"][0] == int(good > bad)
    assert run_main(ag.main, [*base, "--form", "clams", "--output", str(out)]) == 0
    clams = json.loads(out.read_text())
    assert clams["form"] == "clams" and clams["constructions"]["simple"]["pairs"] == 3
    assert clams["overall"]["random"] == []
    # deterministic
    assert run_main(ag.main, [*base, "--form", "clams", "--output", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["constructions"] == clams["constructions"]
