"""fairseq's hub interface over tiny CPU models trained by the recipes: ``TransformerModel.from_pretrained`` with
each scheme's options translates (spaces, BITE, Wordmap), ``RobertaModel.from_pretrained`` fills masks and runs
classification heads (spaces, and FLOTA over the pretrained vocabulary).  Checks that the hub encodes exactly as
the recipes' data was encoded and decodes with the scheme's decoder; never a quality level."""
import json
from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from tests.conftest import TINY_TRANSFORMER_ARGS, multi30k_slice, run_command
from train_scripts.hub import hub_kwargs, load_translation
from train_scripts.tools import plugins_dir


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    return multi30k_slice(tmp_path_factory.mktemp("hub") / "raw", 400, 20, 6)


def _translation_model(raw, out, scheme_config, src="en", tgt="de"):
    """binarize (in process) and a few updates of a tiny transformer (fairseq-train)."""
    from train_scripts.binarize import binarize

    info = binarize(scheme_config, str(raw), str(out), src, tgt)
    run_command(["fairseq-train", info["data"], "--user-dir", plugins_dir(), "--task", "translation", *info["train_args"],
              *TINY_TRANSFORMER_ARGS, "--max-update", "4", "--save-dir", out / "ckpt", "--no-epoch-checkpoints",
              "--num-workers", "0"])
    return out, out / "ckpt" / "checkpoint_last.pt"


SCHEMES = {  # scheme -> binarize configuration and direction (Wordmap segments the German source, BITE the English)
    "spaces": ({"scheme": "spaces", "vocab_size": 500}, "en", "de"),
    "bite": ({"scheme": "bite", "vocab_size": 500}, "en", "de"),
    "wordmap": ({"scheme": "wordmap", "vocab_size": 400, "wordmap_max_lines": 200}, "de", "en"),
}


@pytest.fixture(scope="module", params=list(SCHEMES))
def translation(request, raw, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    return request.param, *_translation_model(raw, out / "work", *SCHEMES[request.param])


def _decoder(scheme, info):
    """The scheme's own decoder for target pieces, independent of fairseq's hub plumbing."""
    if scheme == "spaces":
        from preprocess.schemes.spaces import SpacesEncoder

        return SpacesEncoder(hub_kwargs(info["source_args"])["spaces_model"], "keep").decode
    if scheme == "bite":
        from preprocess.schemes.bite import BiteTokenizer

        sp = spm.SentencePieceProcessor(model_file=hub_kwargs(info["source_args"])["sentencepiece_model"])
        bite = BiteTokenizer("moses")
        return lambda pieces: bite.detokenize(sp.decode(pieces.split()).split())
    from preprocess.schemes.wordmap import decode_line

    return decode_line


def test_translate(translation):
    scheme, out, ckpt = translation
    info = json.loads((out / "binarize.json").read_text())
    src = info["src"]
    model = load_translation(out, ckpt)
    assert model.cfg.bpe._name == hub_kwargs(info["source_args"])["bpe"]
    raw_src = _lines(Path(info["raw_dir"]) / f"test.{src}")[:4]
    tok_src = _lines(out / "tok" / f"test.{src}")[:4]
    decode = _decoder(scheme, info)
    for line, tok in zip(raw_src, tok_src):
        # the hub's encoding of raw text is the recipe's encoding of the test set
        expected = " ".join(t if model.src_dict.index(t) != model.src_dict.unk() else "<unk>" for t in tok.split())
        assert model.src_dict.string(model.encode(line)) == expected
        hyp = model.generate(model.encode(line), beam=2, max_len_a=1, max_len_b=5)[0]["tokens"]
        assert model.translate(line, beam=2, max_len_a=1, max_len_b=5) == decode(model.tgt_dict.string(hyp))
    assert len(model.translate(raw_src[:2], beam=2, max_len_a=1, max_len_b=5)) == 2


# --- RoBERTa ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def roberta(raw, tmp_path_factory):
    """A tiny RoBERTa (binarize --lm spaces, pretrain_roberta.sh --tiny) and two fine-tuned classifiers on a
    Superbizarre slice: one on its own encoding, one on FLOTA over its vocabulary; each with the predictions of
    classification_data.score on the binarised test set."""
    from preprocess.schemes.flota import FlotaOptions
    from tests.conftest import require_shared
    from train_scripts.binarize import binarize
    from train_scripts.classification_data import arch_args, prepare, score

    prefix = str(require_shared("superbizarre/arxiv_train.csv"))[: -len("_train.csv")]
    root = tmp_path_factory.mktemp("roberta")
    text = root / "text"
    text.mkdir()
    for split in ("train", "valid"):
        (text / f"{split}.en").write_text((raw / f"{split}.en").read_text())
    lm, pre = root / "lm", root / "lm-ckpt"
    binarize({"scheme": "spaces", "vocab_size": 500}, str(text), str(lm), "en", None, lm=True)
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", pre, "--tiny"])
    tuned = {}
    for name, encoding in (("spaces", {}), ("flota", {"encode": "flota", "encode_options": FlotaOptions(flota_k=2)})):
        work, save = root / f"cls-{name}", root / f"cls-{name}-ckpt"
        info = prepare(str(lm), prefix, str(work), max_rows=30, **encoding)
        run_command(["fairseq-train", work / "data-bin", "--user-dir", plugins_dir(), "--restore-file",
                  pre / "checkpoint_best.pt", "--reset-optimizer", "--reset-dataloader", "--reset-meters",
                  *arch_args(str(pre / "checkpoint_best.pt")), "--task", "sentence_prediction",
                  "--criterion", "sentence_prediction", "--num-classes", str(info["num_classes"]),
                  "--init-token", "0", "--separator-token", "2", "--optimizer", "adam", "--lr", "0.001",
                  "--batch-size", "8", "--max-update", "4", "--required-batch-size-multiple", "1", "--cpu",
                  "--num-workers", "0", "--seed", "1", "--no-epoch-checkpoints", "--save-dir", save])
        tuned[name] = (work, save, score(str(save / "checkpoint_last.pt"), str(work))["predictions"])
    return lm, pre, tuned, prefix


def _roberta_kwargs(lm, work=None):
    """The hub's --bpe options: the pretraining data's (binarize.json's fairseq_args), or FLOTA's at fine-tuning."""
    encoding = json.loads((work / "classification.json").read_text())["encoding"] if work else {"scheme": "model"}
    if encoding["scheme"] == "flota":
        return {"bpe": "flota", **{k: v for k, v in encoding.items() if k != "scheme"}}
    return hub_kwargs(json.loads((lm / "binarize.json").read_text())["fairseq_args"])


def test_fill_mask_spaces(roberta):
    from fairseq.models.roberta import RobertaModel

    from preprocess.schemes.spaces import SpacesEncoder

    lm, pre, _, _ = roberta
    info = json.loads((lm / "binarize.json").read_text())
    hub = RobertaModel.from_pretrained(str(pre), "checkpoint_best.pt", str(lm / "data-bin"), user_dir=plugins_dir(),
                                       **_roberta_kwargs(lm))
    hub.eval()  # as fill_mask does: no dropout
    assert hub.cfg.bpe._name == "spaces"
    enc = SpacesEncoder(info["subword_model"], "keep")
    sentence = "A man rides a bike ."
    assert hub.task.source_dictionary.string(hub.encode(sentence)[1:-1]) == enc.encode(sentence)
    masked = "A man <mask> a bike ."
    filled = hub.fill_mask(masked, topk=3)
    assert len(filled) == 3 and [s for _, s, _ in filled] == sorted((s for _, s, _ in filled), reverse=True)
    # the model's own top-3 at the mask, over the spaces-encoded context with the space tokens around the mask
    # (fairseq's own fill_mask strips them: fairseq_plugins/spaces.py)
    d = hub.task.source_dictionary
    left, right = enc.encode("A man"), enc.encode("a bike .")
    tokens = d.encode_line(f"<s> {left} ▁ <mask> ▁ {right} </s>", append_eos=False, add_if_not_exist=False).long()
    with torch.no_grad():
        logits = hub.model(tokens.unsqueeze(0), features_only=False, return_all_hiddens=False)[0]
    at = (tokens == d.index("<mask>")).nonzero().item()
    top = logits[0, at].softmax(-1).topk(3)
    assert [s for _, s, _ in filled] == pytest.approx(top.values.tolist(), rel=1e-5)
    for (sentence_out, _, token), idx in zip(filled, top.indices.tolist()):
        assert token.strip() == enc.decode(d[idx]).strip()
        assert sentence_out.startswith("A man") and sentence_out.endswith("a bike .")


# --- every kind of pretrained checkpoint through fairseq's hub --------------------------------------------------

#: binarize --lm options of the pretraining data kinds besides the spaces one of the ``roberta`` fixture
LM_KINDS = {"sentencepiece-unigram": ["--scheme", "sentencepiece", "--model-type", "unigram"],
            "spaces-drop": ["--scheme", "spaces", "--spaces", "drop"]}


@pytest.fixture(scope="module", params=["sentencepiece-unigram", "spaces", "spaces-drop"])
def pretrained_lm(request, raw, tmp_path_factory):
    """(kind, binarize --lm folder, checkpoint folder): a tiny RoBERTa pretrained by the recipes on each kind of
    data (the spaces one is the ``roberta`` fixture's)."""
    if request.param == "spaces":
        lm, pre, _, _ = request.getfixturevalue("roberta")
        return request.param, lm, pre
    root = tmp_path_factory.mktemp(request.param)
    text = root / "text"
    text.mkdir()
    for split in ("train", "valid"):
        (text / f"{split}.en").write_text((raw / f"{split}.en").read_text())
    lm, pre = root / "lm", root / "lm-ckpt"
    run_command(["python", "-m", "train_scripts.binarize", "--lm", *LM_KINDS[request.param], "--data", text,
                 "--src", "en", "--out", lm, "--vocab-size", "500"])
    run_command(["bash", "train_scripts/pretrain_roberta.sh", "--data", lm, "--save-dir", pre, "--tiny"])
    return request.param, lm, pre


@pytest.mark.slow
def test_every_pretrained_checkpoint_fills_masks_through_the_hub(pretrained_lm, tmp_path, monkeypatch):
    """``RobertaModel.from_pretrained(..., user_dir=<absolute path>)`` with only ``bpe`` named (the checkpoint
    records the model file) loads checkpoint_best.pt and checkpoint_last.pt from any working directory, and
    ``fill_mask`` gives 3 answers, each the input with the mask filled; the "no spaces" model reads no ``▁``."""
    from fairseq.models.roberta import RobertaModel

    from train_scripts.hub import load_roberta

    kind, lm, pre = pretrained_lm
    info = json.loads((lm / "binarize.json").read_text())
    bpe = hub_kwargs(info["fairseq_args"])["bpe"]
    assert bpe == ("sentencepiece" if kind == "sentencepiece-unigram" else "spaces")
    monkeypatch.chdir(tmp_path)   # not the repository root: user_dir must be absolute
    masked = "The <mask> is here."
    for checkpoint in ("checkpoint_best.pt", "checkpoint_last.pt"):
        hub = RobertaModel.from_pretrained(str(pre), checkpoint, data_name_or_path=str(lm / "data-bin"),
                                           user_dir=str(Path(plugins_dir()).resolve()), bpe=bpe)
        hub.eval()
        filled = hub.fill_mask(masked, topk=3)
        assert len(filled) == 3, filled
        probs = [p for _, p, _ in filled]
        assert probs == sorted(probs, reverse=True) and all(0 < p <= 1 for p in probs)
        for sentence, _, token in filled:
            assert "<mask>" not in sentence and sentence.startswith("The") and sentence.endswith(" is here.")
            assert sentence == masked.replace(" <mask>" if kind == "sentencepiece-unigram" else "<mask>", token)
        if kind != "sentencepiece-unigram":   # standalone ▁ tokens: kept by Unigram', never given to no spaces
            d = hub.task.source_dictionary
            pieces = d.string(hub.encode("The dog is here.")).split()
            assert ("▁" in pieces) == (kind == "spaces") and pieces[0] == "The", pieces
    # the same through train_scripts.hub.load_roberta (binarize.json's options)
    hub = load_roberta(str(lm), str(pre / "checkpoint_best.pt"))
    hub.eval()
    assert [s for s, _, _ in hub.fill_mask(masked, topk=3)] == [s for s, _, _ in filled]


@pytest.mark.parametrize("name", ["spaces", "flota"])
def test_classification_head(roberta, name):
    """The hub's prediction for every test sentence is classification_data.score's on the binarised test set."""
    from fairseq.models.roberta import RobertaModel

    from train_scripts.classification_data import read_csv

    lm, _, tuned, prefix = roberta
    work, save, scored = tuned[name]
    kwargs = _roberta_kwargs(lm, work)
    assert kwargs["bpe"] == name
    hub = RobertaModel.from_pretrained(str(save), "checkpoint_last.pt", str(work / "data-bin"), user_dir=plugins_dir(),
                                       **kwargs)
    hub.eval()
    rows = read_csv(f"{prefix}_test.csv", 30)
    labels = hub.task.label_dictionary
    got = []
    for text, _ in rows:
        pred = hub.predict("sentence_classification_head", hub.encode(text)).argmax().item()
        got.append(labels.string([pred + labels.nspecial]))
    assert got == scored
    if name == "flota":  # FLOTA pieces: at most k=2 per word, all from the pretrained vocabulary
        pieces = hub.bpe.encode(rows[0][0]).split()
        assert pieces and all(hub.task.source_dictionary.index(p) != hub.task.source_dictionary.unk() for p in pieces)
