"""Translation recipes end to end on a Multi30k slice through the real CLIs: binarize (joined dictionary,
shards), train_transformer_big.sh --tiny, checkpoint averaging, evaluate, and two-process gloo training.
Asserts consistency (line counts, reloads, identical ranks), never a quality level."""
import json

import pytest
import sacrebleu
import torch

from preprocess.models.spm import SPACE_SYMBOL as SPACE
from tests.conftest import multi30k_slice

N_TRAIN, N_VALID, N_TEST = 600, 40, 27  # 27: not a multiple of 8, so a dropped last batch would show


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from tests.conftest import run_command

    root = tmp_path_factory.mktemp("translation")
    raw = multi30k_slice(root / "raw", N_TRAIN, N_VALID, N_TEST)
    out = root / "spaces"
    run_command(["python", "-m", "train_scripts.binarize", "--scheme", "spaces", "--data", raw, "--src", "en",
              "--tgt", "de", "--out", out, "--vocab-size", "800", "--workers", "2"])
    return root, raw, out


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def test_transformer_big_defaults_dry_run(run_cli, corpus):
    _, _, out = corpus
    cmd = run_cli(["bash", "train_scripts/train_transformer_big.sh", "--data", out, "--save-dir", "/nonexistent/x",
                   "--dry-run", "--gpus", "8", "--lr", "0.0007"]).stdout
    for expected in ("transformer_vaswani_wmt_en_de_big", "--share-all-embeddings", "--warmup-updates 4000",
                     "--max-tokens 3584", "--update-freq 16", "--dropout 0.3", "--label-smoothing 0.1",
                     "--patience 5", "inverse_sqrt", str(out / "data-bin")):
        assert expected in cmd.replace("\\ ", " "), expected
    assert cmd.rindex("--lr 0.0007") > cmd.rindex("--lr 0.001")  # user options come last and win


def test_tiny_train_average_evaluate(run_cli, corpus):
    root, raw, out = corpus
    ckpt = root / "ckpt"
    run_cli(["bash", "train_scripts/train_transformer_big.sh", "--data", out, "--save-dir", ckpt, "--tiny",
             "--max-update", "24", "--save-interval-updates", "8", "--validate-interval-updates", "8"])
    assert (ckpt / "checkpoint_last.pt").exists() and (ckpt / "checkpoint_best.pt").exists()
    curve = [json.loads(line) for line in (ckpt / "valid_log.jsonl").read_text().splitlines()]
    updates = [r["update"] for r in curve]
    assert updates == sorted(updates) and updates[0] == 8 and updates[-1] == 24
    assert all(isinstance(r["valid_loss"], float) for r in curve)
    best = min(r["valid_loss"] for r in curve)
    state = torch.load(ckpt / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    assert state["extra_state"]["best"] == pytest.approx(best, abs=1e-3)  # early stopping tracks this loss

    avg = root / "avg.pt"
    run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", ckpt, "--num-update-checkpoints",
             "2", "--output", avg])
    ev = root / "eval"
    run_cli(["python", "-m", "train_scripts.evaluate", "--data", out, "--checkpoint", avg, "--cpu", "--out", ev,
             "--max-len-a", "1", "--max-len-b", "5"])
    scores = json.loads((ev / "scores.json").read_text())
    hyps = _lines(ev / "hyp.txt")
    refs = _lines(raw / "test.de")
    assert len(hyps) == scores["sentences"] == N_TEST  # every test sentence, in order
    assert not any(SPACE in h for h in hyps)  # decoded by the scheme's decoder
    # the reported scores are sacreBLEU's on exactly these files, with their signatures
    assert scores["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert scores["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score)
    assert scores["bleu_signature"].startswith("nrefs:1|case:mixed") and "tok:13a" in scores["bleu_signature"]
    assert "nc:6" in scores["chrf_signature"] and 0 <= scores["tok_bleu"] <= 100
    gen_hyps = [line for line in (ev / "generate.txt").read_text().splitlines() if line.startswith("D-")]
    assert len(gen_hyps) == N_TEST


@pytest.mark.slow
def test_tiny_preset_alone_saves_what_averaging_needs(run_cli, corpus):
    """--tiny with no other option writes an update checkpoint every 10 updates (all kept), so averaging the last
    three update checkpoints works right after it (before, only checkpoint_best/last existed)."""
    root, _, out = corpus
    ckpt = root / "tiny-only"
    run_cli(["bash", "train_scripts/train_transformer_big.sh", "--data", out, "--save-dir", ckpt, "--tiny"])
    updates = sorted(int(p.stem.rsplit("_", 1)[1]) for p in ckpt.glob("checkpoint_*_*.pt"))
    assert updates == [10, 20, 30]
    avg = root / "tiny-avg.pt"
    run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", ckpt, "--num-update-checkpoints", "3",
             "--output", avg])
    state = torch.load(avg, map_location="cpu", weights_only=False)
    last = torch.load(ckpt / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["model"].keys() == last["model"].keys()
    assert any(not torch.equal(state["model"][k], last["model"][k]) for k in last["model"])  # a real average


def test_compound_split_and_tokenized_bleu():
    from train_scripts.evaluate import compound_split, parse_generate_output, tokenized_bleu

    assert compound_split("ein Hals-Nasen-Ohren-Arzt , 3-4 - x") == \
        "ein Hals ##AT##-##AT## Nasen ##AT##-##AT## Ohren ##AT##-##AT## Arzt , 3 ##AT##-##AT## 4 - x"
    # like perl's s{(\S)-(\S)}{...}g, matches do not overlap: a one-letter part keeps its second hyphen
    assert compound_split("a-b-c") == "a ##AT##-##AT## b-c"
    assert tokenized_bleu(["Ein Hals-Arzt."], ["Ein Hals-Arzt."], "de").score == pytest.approx(100.0)
    parsed = parse_generate_output("S-1\tx\nH-1\t-0.5\t▁a ▁b\nD-1\t-0.5\ta b\nH-0\t-1\t\nD-0\t-1\t\n")
    assert parsed["hyp"] == {0: "", 1: "a b"} and parsed["hyp_tok"][1] == "▁a ▁b"


def test_two_process_gloo_training_keeps_ranks_identical(run_cli, corpus, tmp_path, monkeypatch):
    """torchrun launches two CPU ranks (gloo); after a few updates both hold the same parameters, and they are
    the ones rank 0 saved."""
    _, _, out = corpus
    ckpt, dumps = tmp_path / "ckpt", tmp_path / "ranks"
    monkeypatch.setenv("FAIRSEQ_LAUNCH_RANK_STATE_DIR", str(dumps))  # run_cli's environment copies ours
    proc = run_cli(["bash", "train_scripts/train_transformer_big.sh", "--data", out, "--save-dir", ckpt, "--tiny",
                    "--cpu", "--gpus", "2", "--max-update", "4", "--validate-interval-updates", "0"])
    assert "distributed init (rank 1)" in proc.stderr + proc.stdout
    r0, r1 = (torch.load(dumps / f"rank{r}.pt", map_location="cpu", weights_only=False) for r in (0, 1))
    assert r0["rank"] == 0 and r1["rank"] == 1 and r0["num_updates"] == r1["num_updates"] == 4
    saved = torch.load(ckpt / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert saved["cfg"]["distributed_training"]["distributed_world_size"] == 2
    assert r0["model"].keys() == r1["model"].keys() == saved["model"].keys()
    for key in r0["model"]:
        assert torch.equal(r0["model"][key], r1["model"][key]), key
        assert torch.equal(r0["model"][key], saved["model"][key]), key
