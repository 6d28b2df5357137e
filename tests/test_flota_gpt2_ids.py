"""FLOTA over an official-style fairseq checkpoint, whose dict.txt holds GPT-2 byte-level BPE ids.

A small synthetic GPT-2 BPE (encoder.json + vocab.bpe, the 256 byte symbols plus merged tokens) and an id
dict.txt in frequency order (as fairseq's gpt2_bpe/dict.txt): FLOTA's ids are fairseq's own ``gpt2`` BPE ids on
the words where both segment alike; a masked LM trained on fairseq-gpt2-encoded text is fine-tuned on
FLOTA-encoded text with ``--bpe flota``, and the hub encodes and decodes through it.
"""
import json
import random
from argparse import Namespace

import pytest
import torch

from preprocess.common import UserError
from preprocess.models.vocabularies import BYTE_TO_CHAR, is_gpt2_id_dict
from preprocess.schemes.flota import Gpt2IdFlota

G = "\u0120"  # GPT-2's mark of a preceding space
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "play", "run", "walk", "red", "blue", "house", "garden"]
SUFFIXES = ["ing", "ed", "s", "er"]
# an early merge of "at" makes BPE cut " cat"/" sat"/" mat" differently from FLOTA's longest match
EARLY = [("a", "t")]


def _build(tmp_path):
    tokens = [BYTE_TO_CHAR[b] for b in range(256)]
    merges = list(EARLY)
    for a, b in EARLY:
        tokens.append(a + b)
    for piece in [G + w for w in WORDS] + SUFFIXES:
        for end in range(2, len(piece) + 1):  # left to right: G+w, then G+wo, ...
            left, right = piece[:end - 1], piece[end - 1]
            if (left, right) not in merges:
                merges.append((left, right))
            if piece[:end] not in tokens:
                tokens.append(piece[:end])
    rng = random.Random(3)
    ids = list(range(len(tokens)))
    rng.shuffle(ids)  # GPT-2's ids are not positions in fairseq's dictionary
    encoder = dict(zip(tokens, ids))
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges),
                                        encoding="utf-8")
    order = sorted(encoder.values(), key=lambda i: (rng.random(), i))  # "frequency" order, not id order
    lines = [f"{i} {1000 - n}" for n, i in enumerate(order)] + ["madeupword0000 0", "madeupword0001 0"]
    (tmp_path / "dict.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return encoder


def _gpt2_bpe(tmp_path):
    from fairseq.data import encoders

    return encoders.build_bpe(Namespace(bpe="gpt2", gpt2_encoder_json=str(tmp_path / "encoder.json"),
                                        gpt2_vocab_bpe=str(tmp_path / "vocab.bpe")))


def test_flota_ids_are_fairseqs_gpt2_ids_where_they_agree(tmp_path):
    encoder = _build(tmp_path)
    id_to_token = {str(i): t for t, i in encoder.items()}
    bpe = _gpt2_bpe(tmp_path)
    flota = Gpt2IdFlota(str(tmp_path / "dict.txt"), str(tmp_path / "encoder.json"), k=3)
    assert is_gpt2_id_dict(str(tmp_path / "dict.txt"))
    agree, disagree = [], []
    for word in WORDS + [w + s for w in WORDS for s in SUFFIXES]:
        bpe_ids = bpe.encode(" " + word).split()  # a word after a space, as inside a sentence
        flota_ids = flota.tokenize(word)
        bpe_pieces = [id_to_token[i] for i in bpe_ids]
        flota_pieces = flota.flota.tokenize(word)
        if bpe_pieces == flota_pieces:
            agree.append(word)
            assert flota_ids == bpe_ids, word
        else:
            disagree.append(word)
    multi = [w for w in agree if len(flota.tokenize(w)) > 1]
    assert len(agree) >= 30 and len(multi) >= 20  # whole words and word + suffix
    assert "cat" in disagree and "dog" in agree  # the early "at" merge: BPE gives " c" + "at"
    # every id is in the dictionary, so fairseq's Dictionary knows all of them (no <unk>)
    from fairseq.data import Dictionary

    d = Dictionary.load(str(tmp_path / "dict.txt"))
    line = flota.encode("the dog walked to the gardens!")
    assert d.unk() not in d.encode_line(line, add_if_not_exist=False).tolist()
    # every byte is a token, so nothing is dropped here: ' t' + 'o', ' garden' + 's', '!' (a continuation)
    assert flota.decode(line) == "the dog walked to the gardens!"


def test_encoder_that_does_not_match_the_dictionary(tmp_path):
    encoder = _build(tmp_path)
    first_id = (tmp_path / "dict.txt").read_text().split()[0]
    wrong = {t: i for t, i in encoder.items() if str(i) != first_id}
    (tmp_path / "other.json").write_text(json.dumps(wrong))
    with pytest.raises(UserError, match=rf"its token {first_id} \(line 1\) is not an id of encoder.json"):
        Gpt2IdFlota(str(tmp_path / "dict.txt"), str(tmp_path / "other.json"))


def test_cli_needs_the_encoder_and_names_the_missing_token(tmp_path, run_cli):
    encoder = _build(tmp_path)
    (tmp_path / "in.txt").write_text("the dog played\n\nred houses\n")
    base = ["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", tmp_path / "dict.txt",
            "--inputs", tmp_path / "in.txt", "--outputs", tmp_path / "out.txt", "--quiet"]
    bad = run_cli(base, check=False)
    assert bad.returncode == 2 and "give --flota-gpt2-encoder encoder.json" in bad.stderr
    assert not (tmp_path / "out.txt").exists()
    run_cli([*base, "--flota-gpt2-encoder", tmp_path / "encoder.json"])
    lines = (tmp_path / "out.txt").read_text().split("\n")[:-1]
    assert lines[1] == "" and len(lines) == 3
    assert lines[0].split() == [str(encoder[p]) for p in (G + "the", G + "dog", G + "play", "ed")]


def test_finetune_an_official_style_checkpoint_with_bpe_flota(tmp_path, run_cli):
    encoder = _build(tmp_path)
    bpe = _gpt2_bpe(tmp_path)
    rng = random.Random(5)
    sentences = [" ".join(rng.choice(WORDS) + rng.choice(["", "", *SUFFIXES]) for _ in range(rng.randint(3, 8)))
                 for _ in range(80)]
    user_dir = run_cli(["python", "-m", "fairseq_plugins"]).stdout.strip()
    gpt2_opts = ["--flota-vocab", tmp_path / "dict.txt", "--flota-gpt2-encoder", tmp_path / "encoder.json"]
    tiny = ["--encoder-layers", "1", "--encoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32",
            "--encoder-attention-heads", "2", "--max-positions", "32", "--cpu", "--no-progress-bar",
            "--num-workers", "0", "--optimizer", "adam", "--lr", "0.001", "--batch-size", "8", "--seed", "1"]

    # the "official" checkpoint: a masked LM on text encoded by fairseq's own GPT-2 BPE, with the id dictionary
    lm = tmp_path / "lm"
    lm.mkdir()
    for split, part in (("train", sentences[:60]), ("valid", sentences[60:])):
        (lm / f"{split}.bpe").write_text("".join(bpe.encode(s) + "\n" for s in part))
    run_cli(["fairseq-preprocess", "--only-source", "--trainpref", lm / "train.bpe", "--validpref",
             lm / "valid.bpe", "--srcdict", tmp_path / "dict.txt", "--destdir", lm / "bin"])
    run_cli(["fairseq-train", lm / "bin", "--user-dir", user_dir, "--task", "masked_lm", "--criterion", "masked_lm",
             "--arch", "roberta_base", "--tokens-per-sample", "32", "--max-update", "2", "--save-dir",
             lm / "ckpt", *tiny])

    # fine-tuning data encoded by FLOTA with the ids of that dictionary
    cls = tmp_path / "cls"
    (cls / "raw").mkdir(parents=True)
    for split, part in (("train", sentences[:60]), ("valid", sentences[60:])):
        (cls / "raw" / f"{split}.input0").write_text("".join(s + "\n" for s in part))
        (cls / "raw" / f"{split}.label").write_text("".join(f"{int('dog' in s)}\n" for s in part))
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", *gpt2_opts, "--quiet", "--inputs",
                 cls / "raw" / f"{split}.input0", "--outputs", cls / "raw" / f"{split}.flota"])
    run_cli(["fairseq-preprocess", "--only-source", "--trainpref", cls / "raw" / "train.flota", "--validpref",
             cls / "raw" / "valid.flota", "--srcdict", tmp_path / "dict.txt", "--destdir", cls / "bin" / "input0"])
    run_cli(["fairseq-preprocess", "--only-source", "--trainpref", cls / "raw" / "train.label", "--validpref",
             cls / "raw" / "valid.label", "--destdir", cls / "bin" / "label"])
    save = tmp_path / "ft"
    run_cli(["fairseq-train", cls / "bin", "--user-dir", user_dir, "--task", "sentence_prediction",
             "--criterion", "sentence_prediction", "--num-classes", "2", "--arch", "roberta_base",
             "--restore-file", lm / "ckpt" / "checkpoint_last.pt", "--reset-optimizer", "--reset-dataloader",
             "--reset-meters", "--init-token", "0", "--separator-token", "2", "--max-update", "2",
             "--bpe", "flota", *gpt2_opts, "--save-dir", save, *tiny])
    state = torch.load(save / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    pre = torch.load(lm / "ckpt" / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    key = "encoder.sentence_encoder.embed_tokens.weight"
    assert state["model"][key].shape == pre["model"][key].shape  # the checkpoint's dictionary, unchanged
    assert state["optimizer_history"][-1]["num_updates"] == 2
    assert "classification_heads.sentence_classification_head.out_proj.weight" in state["model"]

    # the hub reads --bpe flota from the checkpoint: GPT-2 ids in, words out
    from fairseq.models.roberta import RobertaModel

    hub = RobertaModel.from_pretrained(str(save), "checkpoint_last.pt", str(cls / "bin"), user_dir=user_dir)
    tokens = hub.encode("the dog played")
    ids = [str(encoder[G + "dog"]), str(encoder[G + "play"]), str(encoder["ed"])]
    assert hub.task.source_dictionary.string(tokens[1:-1]).split() == [str(encoder[G + "the"]), *ids]
    assert hub.decode(tokens) == "the dog played"
    assert hub.predict("sentence_classification_head", tokens).shape == (1, 2)
