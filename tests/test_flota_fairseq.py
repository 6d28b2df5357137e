"""FLOTA in fairseq: a dictionary from the vocabulary, fairseq-preprocess on FLOTA-encoded text, --bpe flota."""
from __future__ import annotations

import csv
from argparse import Namespace

import pytest

pytest.importorskip("fairseq")

from preprocess.models.vocabularies import write_fairseq_dict  # noqa: E402
from preprocess.schemes.flota import FlotaTokenizer  # noqa: E402

INVENTORIES = [("bert-base-uncased", "wordpiece"), ("gpt2", "gpt2"), ("xlnet-base-cased", "sentencepiece")]
ODD = ["", "   ", "a" * 10_000, "naïve café e\u0301 日本語 العربية 🙂", "\x00\x7f zzqx_-_ q_-", "self-seeded laser"]


def titles(folder, n):
    with open(folder / "arxiv_physics_1e+02_dev.csv", encoding="utf-8", newline="") as fh:
        return [row["text"] for row in csv.DictReader(fh)][:n]


def build(vocab, style, **kw):
    from fairseq.data import encoders

    import fairseq_plugins  # noqa: F401  (registers --bpe flota)
    args = Namespace(bpe="flota", flota_vocab=str(vocab), flota_style=style, flota_k=kw.get("k", 3),
                     flota_mode=kw.get("mode", "flota"), flota_strict=kw.get("strict", False),
                     flota_max_len=None, flota_unk=kw.get("unk"), flota_byte_level=kw.get("byte_level", False))
    return encoders.build_bpe(args)


@pytest.mark.parametrize("name,style", INVENTORIES)
def test_adapter_pieces_are_in_the_dictionary(tmp_path, shared_path, name, style):
    from fairseq.data import Dictionary
    vocab = shared_path(f"flota_vocabs/{name}.txt")
    dict_path = tmp_path / "dict.txt"
    info = write_fairseq_dict(vocab, str(dict_path))
    d = Dictionary.load(str(dict_path))
    inventory = [t for t in vocab.read_text(encoding="utf-8").split("\n") if t]
    assert info["skipped"] == []
    assert len(d) == 4 + len([t for t in inventory if t not in ("<s>", "<pad>", "</s>", "<unk>")])
    bpe = build(vocab, style)
    lib = FlotaTokenizer(vocab, style, k=3)
    for line in titles(shared_path("flota_arxiv"), 200) + ODD:
        encoded = bpe.encode(line)
        assert encoded == " ".join(lib.tokenize(line))  # the adapter is the library
        ids = d.encode_line(encoded, add_if_not_exist=False, append_eos=False)
        assert d.unk() not in ids.tolist(), (line, encoded)
        assert len(ids) == len(encoded.split())
        bpe.decode(encoded)  # never raises
    # decode joins pieces into words (lossy: FLOTA drops uncovered characters)
    if style == "wordpiece":
        # "desirable" falls back to the word-start form (no "##desirable" in BERT), so it decodes as a word
        assert bpe.encode("undesirable graphene") == "un desirable graph ##ene"
        assert bpe.decode("un desirable graph ##ene") == "un desirable graphene"
        assert build(vocab, style, k=1).decode(build(vocab, style, k=1).encode("undesirable")) == "desirable"
        assert bpe.is_beginning_of_word("un") and not bpe.is_beginning_of_word("##ize")


def test_adapter_unknown_word_behaviour_matches_library(shared_path):
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    line = "graphene 日本 𓀀𓀁 laser"
    assert build(vocab, "wordpiece").encode(line) == " ".join(FlotaTokenizer(vocab, "wordpiece").tokenize(line))
    assert "𓀀" not in build(vocab, "wordpiece").encode(line)
    with_unk = build(vocab, "wordpiece", unk="[UNK]").encode(line)
    assert with_unk == " ".join(FlotaTokenizer(vocab, "wordpiece", unk_token="[UNK]").tokenize(line))
    assert "[UNK]" in with_unk.split()


def test_adapter_baseline_modes(shared_path):
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    assert build(vocab, "wordpiece", mode="first").encode("undesirable") == "und ##es ##ira"
    assert build(vocab, "wordpiece", mode="longest").encode("undesirable") == "und ##ira ##ble"


def test_fairseq_preprocess_on_flota_text(tmp_path, shared_path, run_cli):
    """Real CLIs: preprocess.encode --scheme flota, then fairseq-preprocess with a dictionary from the
    vocabulary: nothing is replaced by <unk>, and the binarised data decodes to the same pieces."""
    vocab = shared_path("flota_vocabs/bert-base-uncased.txt")
    lines = titles(shared_path("flota_arxiv"), 120) + ODD
    raw = tmp_path / "train.raw"
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    enc = tmp_path / "train.en"
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "flota", "--flota-vocab", vocab, "--flota-style",
             "wordpiece", "--flota-k", "3", "--inputs", raw, "--outputs", enc, "--quiet"])
    dict_path = tmp_path / "dict.txt"
    write_fairseq_dict(vocab, str(dict_path))
    dest = tmp_path / "bin"
    proc = run_cli(["fairseq-preprocess", "--only-source", "--source-lang", "en", "--trainpref", tmp_path / "train",
                    "--srcdict", dict_path, "--destdir", dest, "--workers", "1"])
    log = proc.stdout + proc.stderr
    assert "0.0% replaced" in log, log[-2000:]
    from fairseq.data import Dictionary, data_utils
    d = Dictionary.load(str(dest / "dict.en.txt"))
    ds = data_utils.load_indexed_dataset(str(dest / "train.en-None.en"), d)
    encoded = enc.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(ds) == len(lines) == len(encoded)
    for i in range(len(ds)):
        assert d.string(ds[i]) == encoded[i]


def test_dict_cli(tmp_path, shared_path, run_cli):
    from fairseq.data import Dictionary
    out = tmp_path / "dict.txt"
    run_cli(["python", "-m", "preprocess.schemes.flota", "dict", "--vocab", shared_path("flota_vocabs/xlnet-base-cased.txt"),
             "--output", out])
    d = Dictionary.load(str(out))
    # xlnet has <s>, </s>, <unk>, <pad> of its own: fairseq's reserved ones take their place
    assert len(d) == 32000
    assert d.index("\u2581the") != d.unk() and d.index("<unk>") == d.unk()


def test_fairseq_command_line_options(shared_path):
    """The options as fairseq's own CLI parser reads them (what fairseq-train / fairseq-generate do)."""
    import os

    from fairseq import options
    from fairseq.data import encoders

    import fairseq_plugins
    vocab = str(shared_path("flota_vocabs/bert-base-uncased.txt"))
    parser = options.get_generation_parser()
    args = options.parse_args_and_arch(parser, [
        "unused-data-dir", "--user-dir", os.path.dirname(fairseq_plugins.__file__), "--bpe", "flota",
        "--flota-vocab", vocab, "--flota-style", "wordpiece", "--flota-k", "2", "--flota-max-len", "10",
        "--flota-strict", "--flota-unk", "[UNK]"])
    assert (args.flota_k, args.flota_max_len, args.flota_strict, args.flota_unk) == (2, 10, True, "[UNK]")
    bpe = encoders.build_bpe(args)
    expected = FlotaTokenizer(vocab, "wordpiece", k=2, max_len=10, strict=True, unk_token="[UNK]")
    line = "undesirable 𓀀 superconductivity"
    assert bpe.encode(line) == " ".join(expected.tokenize(line))
    assert "[UNK]" in bpe.encode(line).split()
