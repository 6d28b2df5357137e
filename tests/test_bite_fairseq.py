"""BITE end to end through the real CLIs on a Multi30k slice.

BITE+SentencePiece on the English *source* (En->De) and on the English *target* (De->En):
preprocess.encode --scheme bite --training-text -> preprocess.schemes.spaces train --user-symbols bite -> BITE+D encode in
one pass ->
fairseq-preprocess -> fairseq-train (a few updates of a tiny transformer) -> fairseq-generate / fairseq-interactive
with ``--tokenizer bite --bpe sentencepiece``.  Asserts what must hold (line counts, symbols as single pieces,
no inflection symbols in decoded output, re-inflection of references), not a BLEU.
"""
from __future__ import annotations

import pytest

from preprocess.schemes.bite import (
    ESCAPE,
    GLUE,
    INFLECTION_SYMBOLS,
    SINGLE_CHAR_SYMBOLS,
    SPACE_BEFORE_MARK,
    BiteLineEncoder,
    BiteTokenizer,
)
from tests.conftest import TINY_TRANSFORMER_ARGS, multi30k_slice

ALL_SYMBOLS = INFLECTION_SYMBOLS + SINGLE_CHAR_SYMBOLS


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _d_lines(stdout: str) -> dict:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("D-"):
            parts = line.split("\t")
            out[int(parts[0][2:])] = parts[2] if len(parts) > 2 else ""
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """Raw slice, BITE English, a joint SentencePiece model with the symbols, BITE+D / SPM encoded files."""
    from tests.conftest import run_command as run_cli
    tmp = tmp_path_factory.mktemp("bite_e2e")
    data = multi30k_slice(tmp / "raw", n_train=1200, n_valid=40, n_test=30)
    for split in ("train", "valid", "test"):
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--workers", "2", "--quiet",
                 "--inputs", data / f"{split}.en", "--outputs", tmp / f"{split}.bite.en"])
        assert len(_lines(tmp / f"{split}.bite.en")) == len(_lines(data / f"{split}.en"))
    # the subword model learns the base forms with the sentences' own spacing (BITE's training text)
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--training-text", "--workers", "2", "--quiet",
             "--inputs", data / "train.en", "--outputs", tmp / "train.text.en"])
    sp = tmp / "sp"
    run_cli(["python", "-m", "preprocess.schemes.spaces", "train", "--input", tmp / "train.text.en", data / "train.de",
             "--model-prefix", sp, "--model-type", "unigram", "--variant", "default", "--vocab-size", "1000",
             "--user-symbols", "bite", "--seed", "1", "--num-threads", "1"])
    for split in ("train", "valid", "test"):
        # English: BITE then SentencePiece in one pass (BITE+D); German: SentencePiece only
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "bite", "--subword-model", f"{sp}.model",
                 "--workers", "2", "--quiet", "--inputs", data / f"{split}.en", "--outputs", tmp / f"{split}.tok.en"])
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "spaces", "--model", f"{sp}.model", "--quiet",
                 "--inputs", data / f"{split}.de", "--outputs", tmp / f"{split}.tok.de"])
        n = len(_lines(data / f"{split}.en"))
        assert len(_lines(tmp / f"{split}.tok.en")) == len(_lines(tmp / f"{split}.tok.de")) == n
    user_dir = run_cli(["python", "-m", "fairseq_plugins"]).stdout.strip()
    return {"tmp": tmp, "data": data, "sp": sp, "user_dir": user_dir}


def _binarize_and_train(run_cli, p, src, tgt):
    tmp = p["tmp"]
    bin_dir = tmp / f"bin_{src}{tgt}"
    run_cli(["fairseq-preprocess", "--source-lang", src, "--target-lang", tgt,
             "--trainpref", tmp / "train.tok", "--validpref", tmp / "valid.tok", "--testpref", tmp / "test.tok",
             "--destdir", bin_dir, "--joined-dictionary", "--srcdict", f"{p['sp']}.dict.txt", "--workers", "2"])
    ckpt = tmp / f"ckpt_{src}{tgt}"
    run_cli(["fairseq-train", bin_dir, "--user-dir", p["user_dir"], *TINY_TRANSFORMER_ARGS,
             "--share-all-embeddings", "--save-dir", ckpt, "--max-update", "5", "--no-epoch-checkpoints"])
    assert (ckpt / "checkpoint_last.pt").exists()
    return bin_dir, ckpt / "checkpoint_last.pt"


def test_symbols_are_single_pieces_in_the_encoded_english(prepared):
    tok = _lines(prepared["tmp"] / "train.tok.en")
    bite_lines = _lines(prepared["tmp"] / "train.bite.en")
    for enc, b in zip(tok, bite_lines):
        pieces = enc.split()
        for sym in INFLECTION_SYMBOLS:
            assert pieces.count(sym) == b.split().count(sym)
        # one piece per symbol: never a standalone ▁ before it
        assert not any(x == "\u2581" and y in INFLECTION_SYMBOLS for x, y in zip(pieces, pieces[1:]))
    assert sum(l.split().count("[NNS]") for l in tok) > 100   # Multi30k is full of plurals


def test_bite_on_english_source_en_de(run_cli, prepared):
    p = prepared
    bin_dir, ckpt = _binarize_and_train(run_cli, p, "en", "de")
    gen = run_cli(["fairseq-generate", bin_dir, "--user-dir", p["user_dir"], "--path", ckpt, "--gen-subset", "test",
                   "--beam", "2", "--max-len-a", "1", "--max-len-b", "5", "--bpe", "sentencepiece",
                   "--sentencepiece-model", f"{p['sp']}.model", "--cpu", "--batch-size", "16",
                   "--required-batch-size-multiple", "1"])
    n_test = len(_lines(p["data"] / "test.en"))
    assert sorted(_d_lines(gen.stdout)) == list(range(n_test))
    # the source side seen by the model is BITE: S- lines carry inflection symbols
    src_lines = [l for l in gen.stdout.splitlines() if l.startswith("S-")]
    assert len(src_lines) == n_test and any("[NNS]" in l or "[VBZ]" in l for l in src_lines)
    # fairseq-interactive encodes raw English with --tokenizer bite, then SentencePiece
    inter = run_cli(["fairseq-interactive", bin_dir, "--user-dir", p["user_dir"], "--path", ckpt, "--cpu",
                     "--tokenizer", "bite", "--bite-pretokenizer", "moses", "--bpe", "sentencepiece",
                     "--sentencepiece-model", f"{p['sp']}.model", "--beam", "2", "--max-len-a", "1",
                     "--max-len-b", "5", "--source-lang", "en", "--target-lang", "de"],
                    input="Two dogs are running.\nA man rides a bike.\n")
    s_lines = [l.split("\t")[1] for l in inter.stdout.splitlines() if l.startswith("S-")]
    assert len(s_lines) == 2 and len(_d_lines(inter.stdout)) == 2
    # the symbols are pieces of their own, with no ▁ piece before them
    assert "[NNS]" in s_lines[0].split() and "[VBG]" in s_lines[0].split() and "[VBZ]" in s_lines[1].split()
    assert not any("\u2581 [" in l for l in s_lines)


def test_bite_on_english_target_de_en(run_cli, prepared):
    p = prepared
    bin_dir, ckpt = _binarize_and_train(run_cli, p, "de", "en")
    common = ["--user-dir", p["user_dir"], "--path", ckpt, "--gen-subset", "test", "--cpu", "--batch-size", "16",
              "--required-batch-size-multiple", "1",
              "--tokenizer", "bite", "--bpe", "sentencepiece", "--sentencepiece-model", f"{p['sp']}.model"]
    gen = run_cli(["fairseq-generate", bin_dir, *common, "--beam", "2", "--max-len-a", "1", "--max-len-b", "8"])
    refs = _lines(p["data"] / "test.en")
    hyps = _d_lines(gen.stdout)
    assert sorted(hyps) == list(range(len(refs)))
    bad = ALL_SYMBOLS + (ESCAPE, GLUE, SPACE_BEFORE_MARK, "\u2581")
    for h in hyps.values():
        assert not any(s in h for s in bad), h
    # H- lines are the model's raw pieces; D- lines must be exactly our decoder applied to them
    b = BiteTokenizer("moses")
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=f"{p['sp']}.model")
    for line in gen.stdout.splitlines():
        if line.startswith("H-"):
            idx, _, pieces = line.split("\t")
            assert hyps[int(idx[2:])] == b.detokenize(sp.decode(pieces.split()).split())
    # scoring the references: the D- lines are the re-inflected English references
    ref_gen = run_cli(["fairseq-generate", bin_dir, *common, "--score-reference"])
    dref = _d_lines(ref_gen.stdout)
    assert sorted(dref) == list(range(len(refs)))
    exact = sum(dref[i] == " ".join(refs[i].split()) for i in range(len(refs)))
    assert not any(s in d for d in dref.values() for s in bad)
    assert exact >= 0.9 * len(refs), [(dref[i], refs[i]) for i in range(len(refs)) if dref[i] != refs[i]]


def test_adapter_composes_with_bpe_spaces(run_cli, prepared, tmp_path):
    """--tokenizer bite + --bpe spaces (space-as-token SentencePiece, prime) round-trips raw English."""
    from argparse import Namespace

    from fairseq.data import encoders

    import fairseq_plugins  # noqa: F401
    p = prepared
    for single in (False, True):
        prime = tmp_path / f"prime{int(single)}"
        bite_file = tmp_path / f"train{int(single)}.text.en"
        b = BiteLineEncoder("moses", "nltk", single, training_text=True)
        bite_file.write_text("\n".join(b.encode_lines(_lines(p["data"] / "train.en"))) + "\n", encoding="utf-8")
        run_cli(["python", "-m", "preprocess.schemes.spaces", "train", "--input", bite_file, "--model-prefix", prime,
                 "--model-type", "bpe", "--variant", "prime", "--vocab-size", "800", "--seed", "1",
                 "--user-symbols", "bite-single" if single else "bite", "--num-threads", "1"])
        tok = encoders.build_tokenizer(Namespace(tokenizer="bite", bite_pretokenizer="moses", bite_tagger="nltk",
                                                 bite_single_char=single))
        bpe = encoders.build_bpe(Namespace(bpe="spaces", spaces_model=f"{prime}.model", spaces="keep"))
        raw = _lines(p["data"] / "valid.en")
        ok = 0
        symbols = SINGLE_CHAR_SYMBOLS if single else INFLECTION_SYMBOLS
        for line in raw:
            enc = bpe.encode(tok.encode(line))
            pieces = enc.split()
            n_symbols = sum(t in symbols for t in tok.bite.tokenize(line))
            assert sum(x in symbols for x in pieces) == n_symbols
            assert not any(x == "\u2581" and y in symbols for x, y in zip(pieces, pieces[1:]))
            back = tok.decode(bpe.decode(enc))
            assert not any(s in back for s in ALL_SYMBOLS)
            ok += back == " ".join(line.split())
        assert ok >= 0.9 * len(raw)
