"""Space-as-token training, the file encoder contract, bad input and the fairseq adapter."""
import gzip
import os
import subprocess
import sys

import pytest

from preprocess.common import UserError
from preprocess.models.spm import SPACE_SYMBOL as SPACE
from preprocess.schemes.spaces import SpacesEncoder, is_prime_model, train

N_TRAIN = 3000


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from tests.conftest import require_shared

    d = tmp_path_factory.mktemp("corpus")
    for lang in ("en", "de"):
        with gzip.open(require_shared(f"multi30k/train.{lang}.gz"), "rt", encoding="utf-8") as fh:
            lines = [next(fh) for _ in range(N_TRAIN)]
        (d / f"train.{lang}").write_text("".join(lines), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def models(corpus, tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    out = {}
    for mtype in ("bpe", "unigram"):
        for variant in ("default", "prime"):
            prefix = str(d / f"{mtype}_{variant}")
            train([str(corpus / "train.en"), str(corpus / "train.de")], prefix, mtype, variant, vocab_size=1000,
                  seed=1)
            out[mtype, variant] = prefix
    return out


def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().split("\n")[:-1]


def test_train_writes_model_vocab_and_fairseq_dict(models):
    for prefix in models.values():
        for ext in (".model", ".vocab", ".dict.txt"):
            assert os.path.getsize(prefix + ext) > 0
        entries = [line.split(" ") for line in read(prefix + ".dict.txt")]
        assert all(len(e) == 2 and e[1].isdigit() for e in entries)
        tokens = [e[0] for e in entries]
        assert not {"<s>", "</s>", "<unk>", "<pad>"} & set(tokens)
        assert len(tokens) == len(set(tokens)) == 1000 - 3  # vocab minus <unk> <s> </s>


def test_prime_keeps_spaces_as_their_own_token(models, corpus):
    lines = read(corpus / "train.en")[:200]
    for mtype in ("bpe", "unigram"):
        prime = SpacesEncoder(models[mtype, "prime"] + ".model")
        default = SpacesEncoder(models[mtype, "default"] + ".model")
        assert is_prime_model(prime.sp) and not is_prime_model(default.sp)
        for line in lines:
            pieces = prime.encode_pieces(line)
            assert all(p == SPACE or SPACE not in p for p in pieces)
            assert pieces.count(SPACE) == len(line.split()) - 1  # one ▁ per space, none before the first word
        assert any(p.startswith(SPACE) and p != SPACE for line in lines for p in default.encode_pieces(line))


def test_every_piece_is_in_the_fairseq_dict(models, corpus):
    for prefix in models.values():
        vocab = {line.split(" ")[0] for line in read(prefix + ".dict.txt")}
        enc = SpacesEncoder(prefix + ".model")
        for line in read(corpus / "train.de")[:300]:
            known = {p for p in enc.encode_pieces(line) if enc.sp.piece_to_id(p) != enc.sp.unk_id()}
            assert known <= vocab  # characters beyond --character-coverage are <unk> in both


def test_keep_is_lossless_and_drop_removes_only_spaces(models, shared_path):
    with gzip.open(shared_path("multi30k/val.en.gz"), "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in fh]
    keep = SpacesEncoder(models["unigram", "prime"] + ".model", "keep")
    drop = SpacesEncoder(models["unigram", "prime"] + ".model", "drop")
    for line in lines:
        normalised = " ".join(line.split())
        assert keep.decode(keep.encode(line)) == normalised
        assert drop.encode(line).split() == [p for p in keep.encode(line).split() if p != SPACE]


def test_drop_decode_is_a_documented_best_effort(shared_path):
    enc = SpacesEncoder(str(shared_path("space_models/unigram_prime.model")), "drop")
    # words that are one piece come back exactly; punctuation attaches to the previous word
    assert enc.decode(enc.encode("This is an input sentence.")) == "This is an input sentence."
    # the loss: the subword split of a word becomes a word boundary
    assert enc.encode("unsaturated") == "un saturated"
    assert enc.decode("un saturated") == "un saturated"


def test_train_errors_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="not found"):
        train([str(tmp_path / "missing.txt")], str(tmp_path / "m"))
    with pytest.raises(UserError, match="not found"):
        SpacesEncoder(str(tmp_path / "missing.model"))
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"this is not a model")
    with pytest.raises(UserError, match="not a valid SentencePiece model"):
        SpacesEncoder(str(bad))
    assert not list(tmp_path.glob("m.*"))


# --- the file encoder ------------------------------------------------------------------------------------

def test_spaces_train_cli_and_user_symbols(run_cli, corpus, tmp_path):
    prefix = tmp_path / "sym"
    run_cli(["python", "-m", "preprocess.schemes.spaces", "train", "--input", corpus / "train.en", "--model-prefix", prefix,
             "--model-type", "bpe", "--variant", "prime", "--vocab-size", "600", "--user-symbols", "[XX],[YY]",
             "--seed", "3", "--character-coverage", "1.0"])
    enc = SpacesEncoder(f"{prefix}.model")
    assert enc.encode_pieces("dogs[XX] run[YY]") == enc.encode_pieces("dogs") + ["[XX]", SPACE] + \
        enc.encode_pieces("run") + ["[YY]"]
    proc = run_cli(["python", "-m", "preprocess.schemes.spaces", "train", "--input", tmp_path / "none.txt",
                    "--model-prefix", prefix], check=False)
    assert proc.returncode == 2 and "not found" in proc.stderr


# --- fairseq adapter ---------------------------------------------------------------------------------------

def test_fairseq_adapter_is_identical_to_the_encoder(models, corpus):
    from argparse import Namespace

    from fairseq.data import encoders

    import fairseq_plugins  # noqa: F401  registers --bpe spaces

    model = models["unigram", "prime"] + ".model"
    for spaces in ("keep", "drop"):
        bpe = encoders.build_bpe(Namespace(bpe="spaces", spaces_model=model, spaces=spaces))
        enc = SpacesEncoder(model, spaces)
        lines = read(corpus / "train.en")[:300]
        assert [bpe.encode(line) for line in lines] == enc.encode_lines(lines)
        if spaces == "keep":
            assert all(bpe.decode(bpe.encode(line)) == " ".join(line.split()) for line in lines)


def test_plugin_dir_cli():
    out = subprocess.run([sys.executable, "-m", "fairseq_plugins"], capture_output=True, text=True, check=True)
    assert os.path.isfile(os.path.join(out.stdout.strip(), "spaces.py"))
