"""RoBERTa recipes end to end on CPU: binarize --lm, pretrain_roberta.sh --tiny, finetune_classification.sh
--tiny on a Superbizarre slice (best dev epoch, test scores), and FLOTA fine-tuning data with evaluation-time
noise.  Asserts consistency, never a quality level."""
import json

import pytest
import torch

from tests.conftest import multi30k_slice


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    from tests.conftest import run_command

    root = tmp_path_factory.mktemp("roberta")
    raw = multi30k_slice(root / "mt", 400, 40, 1)
    text = root / "text"
    text.mkdir()
    (text / "train.en").write_text((raw / "train.en").read_text())
    (text / "valid.en").write_text((raw / "valid.en").read_text())
    lm = root / "lm"
    run_command(["python", "-m", "train_scripts.binarize", "--lm", "--scheme", "spaces", "--data", text, "--src", "en",
              "--out", lm, "--vocab-size", "600"])
    ckpt = root / "lm-ckpt"
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", ckpt, "--tiny"])
    return root, lm, ckpt


def test_pretrain_tiny(pretrained):
    from fairseq.data import Dictionary

    root, lm, ckpt = pretrained
    info = json.loads((lm / "binarize.json").read_text())
    assert info["lm"] and info["fairseq_args"][:2] == ["--bpe", "spaces"] and info["spaces"] == "keep"
    assert (lm / "data-bin" / "dict.txt").read_text() == (lm / "models" / "spm.dict.txt").read_text()
    state = torch.load(ckpt / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert state["cfg"]["task"]["_name"] == "masked_lm_words" and state["optimizer_history"][-1]["num_updates"] == 10
    emb = state["model"]["encoder.sentence_encoder.embed_tokens.weight"]
    assert emb.shape[0] == len(Dictionary.load(str(lm / "data-bin" / "dict.txt"))) + 1  # + <mask>
    curve = [json.loads(x) for x in (ckpt / "valid_log.jsonl").read_text().splitlines()]
    assert [r["update"] for r in curve] == [5, 10]


def test_finetune_superbizarre_tiny(run_cli, pretrained, shared_path):
    root, lm, ckpt = pretrained
    prefix = str(shared_path("superbizarre/arxiv_train.csv"))[: -len("_train.csv")]
    save, work = root / "cls-ckpt", root / "cls"
    run_cli(["bash", "train_scripts/finetune_classification.sh", "--pretrained", ckpt / "checkpoint_best.pt",
             "--lm-data", lm, "--csv-prefix", prefix, "--work", work, "--save-dir", save, "--tiny",
             "--max-rows", "60"])
    info = json.loads((work / "classification.json").read_text())
    assert info["num_classes"] == 2 and info["rows"] == {"train": 60, "valid": 60, "test": 60}
    # the text is encoded like the pretraining data and binarised with its dictionary
    assert (work / "data-bin" / "input0" / "dict.txt").read_text() == (lm / "data-bin" / "dict.txt").read_text()
    tuned = torch.load(save / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    pre = torch.load(ckpt / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    assert "classification_heads.sentence_classification_head.out_proj.weight" in tuned["model"]
    assert tuned["model"]["classification_heads.sentence_classification_head.out_proj.weight"].shape[0] == 2
    key = "encoder.sentence_encoder.embed_tokens.weight"
    assert tuned["model"][key].shape == pre["model"][key].shape
    dev, test = (json.loads((save / f"{s}_scores.json").read_text()) for s in ("dev", "test"))
    assert dev["examples"] == test["examples"] == 60 and len(test["predictions"]) == 60
    assert set(test["predictions"]) <= {"0", "1"} and 0.0 <= test["macro_f1"] <= 1.0
    # the best checkpoint is the best dev epoch, and our dev accuracy is the one fairseq selected it by
    curve = [json.loads(x) for x in (save / "valid_log.jsonl").read_text().splitlines()]
    best = max(r["valid_accuracy"] for r in curve)
    assert dev["accuracy"] * 100 == pytest.approx(best, abs=0.05)  # fairseq logs 3 significant digits


def test_finetuning_data_noise_only_in_a_test_copy(run_cli, pretrained, shared_path, tmp_path):
    """--noise-p adds a noisy copy of the test split (subset test1) for FLOTA and for the model's own
    segmentation alike, from the same noisy text; train, valid and the clean test stay as they are."""
    root, lm, _ = pretrained
    prefix = str(shared_path("flota_arxiv/arxiv_cs_1e+02_train.csv"))[: -len("_train.csv")]
    common = ["python", "-m", "train_scripts.classification_data", "prepare", "--lm-data", lm, "--csv-prefix",
              prefix, "--max-rows", "40"]
    flota = ["--encode", "flota", "--flota-k", "2"]
    run_cli([*common, *flota, "--out", tmp_path / "clean"])
    run_cli([*common, *flota, "--out", tmp_path / "noisy", "--noise-p", "0.5", "--noise-seed", "3"])
    run_cli([*common, "--out", tmp_path / "model-noisy", "--noise-p", "0.5", "--noise-seed", "3"])
    info = json.loads((tmp_path / "noisy" / "classification.json").read_text())
    assert info["encoding"]["scheme"] == "flota" and info["encoding"]["flota_k"] == 2
    assert info["test_subsets"] == {"clean": "test", "noisy": "test1"} and info["noise_splits"] == []
    read = lambda d, s, kind="tok": (tmp_path / d / kind / f"{s}.input0").read_text()  # noqa: E731
    for split in ("train", "valid", "test"):
        assert read("clean", split) == read("noisy", split)
    assert read("noisy", "test1") != read("noisy", "test") and len(read("noisy", "test1").splitlines()) == 40
    assert read("noisy", "test1", "raw") == read("model-noisy", "test1", "raw")   # the same noisy text
    assert read("model-noisy", "test1") != read("model-noisy", "test")
    assert (tmp_path / "model-noisy" / "data-bin" / "input0" / "test1.bin").exists()
    # a second prepare with the same options reuses the folder; different options rebuild it
    again = run_cli([*common, "--out", tmp_path / "model-noisy", "--noise-p", "0.5", "--noise-seed", "3"])
    assert '"reused": true' in again.stdout
    other = run_cli([*common, "--out", tmp_path / "model-noisy", "--noise-p", "0.4", "--noise-seed", "3"])
    assert '"reused": null' in other.stdout
