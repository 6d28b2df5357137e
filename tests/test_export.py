"""morphtok-export: every scheme's exported directory loads offline and gives the project's pieces, the fairseq
dictionary ids (``</s>`` appended, as fairseq-preprocess stores them) and the project's decode, on the shared
Multi30k test sets."""
from __future__ import annotations

import json
import os
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")   # before transformers / huggingface_hub are imported

import pytest

pytest.importorskip("tokenizers", reason="the hf extra (pip install .[hf]) is not installed")
pytest.importorskip("transformers", reason="the hf extra (pip install .[hf]) is not installed")

from preprocess import export  # noqa: E402
from preprocess.common import UserError  # noqa: E402
from preprocess.models import spm, vocabularies  # noqa: E402
from preprocess.schemes import flota  # noqa: E402
from preprocess.schemes.spaces import SpacesEncoder  # noqa: E402
from tests.conftest import cli_env, require_shared  # noqa: E402
from tests.hf_fixtures import (  # noqa: E402,F401
    bite_scheme,
    fairseq_decoder,
    fairseq_dictionary,
    fairseq_ids,
    first_mismatch,
    shared_lines,
    wordmap_scheme,
)

SPACE_MODELS = ("unigram_prime", "bpe_prime", "unigram_default", "bpe_default")


def _export(argv: list, out) -> str:
    assert export.main([*map(str, argv), "--out", str(out)]) == 0
    return str(out)


def _fast(directory: str):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))


def _auto(directory: str):
    from transformers import AutoTokenizer

    import preprocess.hf_tokenizers  # noqa: F401  (registers the classes)
    return AutoTokenizer.from_pretrained(directory)


def _check_fast(tok, dictionary, lines, ref_pieces, decode):
    """tokenizer.json against the reference: pieces, ids (</s> appended), decode.  A piece outside the dictionary
    (an unknown character) has id <unk> on both sides; tokenizers' Unigram shows its text as SentencePiece does,
    its BPE shows "<unk>": either is accepted there, and only there."""
    encodings = tok.encode_batch(lines)   # with the post-processor: </s> appended
    got_pieces = [e.tokens[:-1] for e in encodings]
    want_ids = fairseq_ids(dictionary, [" ".join(p) for p in ref_pieces])
    unk = dictionary.unk()
    want_pieces = [[g if (g == "<unk>" and i == unk) else p for p, g, i in zip(ps, gs, ids)]
                   for ps, gs, ids in zip(ref_pieces, got_pieces, want_ids)]
    assert first_mismatch(lines, got_pieces, [e.ids for e in encodings], want_pieces, want_ids) is None
    for i, e in enumerate(encodings):
        assert tok.decode(e.ids[:-1], skip_special_tokens=False) == decode(dictionary, want_ids[i][:-1]), lines[i]


def _check_auto(tok, dictionary, lines, ref_pieces, decode):
    """A tokenizer class against the reference: the project's pieces exactly, fairseq's ids, the project's decode."""
    got_pieces = [tok.tokenize(line) for line in lines]
    got_ids = tok(lines)["input_ids"]
    want_ids = fairseq_ids(dictionary, [" ".join(p) for p in ref_pieces])
    assert first_mismatch(lines, got_pieces, got_ids, ref_pieces, want_ids) is None
    for i, ids in enumerate(got_ids):
        assert tok.decode(ids[:-1], skip_special_tokens=False) == decode(dictionary, want_ids[i][:-1]), lines[i]


# --- space-as-token and plain SentencePiece: tokenizer.json -------------------------------------------------------

@pytest.mark.parametrize("name,spaces", [(m, "keep") for m in SPACE_MODELS] +
                         [("unigram_prime", "drop"), ("bpe_prime", "drop")])
def test_spaces_tokenizer_json_equals_project(tmp_path, name, spaces):
    model = str(require_shared(f"space_models/{name}.model"))
    scheme = "spaces" if "prime" in name else "sentencepiece"
    out = _export(["--scheme", scheme, "--model", model, "--spaces", spaces], tmp_path / "hf")
    assert sorted(os.listdir(out)) == ["dict.txt", "special_tokens_map.json", "tokenizer.json",
                                       "tokenizer_config.json"]
    dict_path = tmp_path / "fairseq.dict.txt"          # the dictionary the project writes for this model
    spm.write_fairseq_dict(model, str(dict_path))
    dictionary = fairseq_dictionary(dict_path)
    assert (tmp_path / "hf" / "dict.txt").read_text(encoding="utf-8") == dict_path.read_text(encoding="utf-8")
    lines = shared_lines("en") + shared_lines("de")
    enc = SpacesEncoder(model, spaces)
    ref = [enc.encode_pieces(line) for line in lines]
    decode = fairseq_decoder({"bpe": "spaces", "spaces_model": model, "spaces": spaces})
    _check_fast(_fast(out), dictionary, lines, ref, decode)


def test_tokenizer_json_needs_no_project_code(tmp_path):
    """Loaded in a fresh interpreter with HF_HUB_OFFLINE=1 by tokenizers and by transformers' AutoTokenizer,
    without importing any module of this project; both give the ids fairseq gives."""
    model = str(require_shared("space_models/unigram_prime.model"))
    out = _export(["--scheme", "spaces", "--model", model], tmp_path / "hf")
    lines = shared_lines("en", limit=50)
    code = (
        "import json, sys\n"
        "from tokenizers import Tokenizer\n"
        "from transformers import AutoTokenizer\n"
        "lines = json.loads(sys.stdin.read())\n"
        f"a = [e.ids for e in Tokenizer.from_file({out!r} + '/tokenizer.json').encode_batch(lines)]\n"
        f"b = AutoTokenizer.from_pretrained({out!r})(lines)['input_ids']\n"
        "own = sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in ('preprocess', 'fairseq_plugins', 'train_scripts'))\n"
        "print(json.dumps([a, b, own]))\n")
    env = {**cli_env(), "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(lines), capture_output=True, text=True,
                          env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    a, b, own = json.loads(proc.stdout.strip().splitlines()[-1])
    want = fairseq_ids(fairseq_dictionary(os.path.join(out, "dict.txt")),
                       SpacesEncoder(model).encode_lines(lines))
    assert own == []
    assert a == want and b == want


def test_off_by_one_ids_are_caught(tmp_path):
    """The comparison the tests rely on fails for an export whose ids are shifted by one (here: a tokenizer.json
    whose vocabulary lost <pad>, as an export that forgot one of fairseq's four specials would be)."""
    from tokenizers import Tokenizer
    model = str(require_shared("space_models/unigram_prime.model"))
    out = _export(["--scheme", "spaces", "--model", model], tmp_path / "hf")
    spec = json.loads((tmp_path / "hf" / "tokenizer.json").read_text(encoding="utf-8"))
    assert [v[0] for v in spec["model"]["vocab"][:4]] == ["<s>", "<pad>", "</s>", "<unk>"]
    del spec["model"]["vocab"][1]           # every id from <pad> on moves down by one
    spec["model"]["unk_id"] = 2
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] != "<pad>"]
    for t in spec["added_tokens"]:
        t["id"] = {"<s>": 0, "</s>": 1, "<unk>": 2}[t["content"]]
    spec["post_processor"]["special_tokens"]["</s>"]["ids"] = [1]
    shifted = Tokenizer.from_str(json.dumps(spec))
    lines = shared_lines("en", limit=20)
    dictionary = fairseq_dictionary(os.path.join(out, "dict.txt"))
    ref = [SpacesEncoder(model).encode_pieces(line) for line in lines]
    want_ids = fairseq_ids(dictionary, [" ".join(p) for p in ref])
    good = _fast(out).encode_batch(lines)
    bad = shifted.encode_batch(lines)
    assert first_mismatch(lines, [e.tokens[:-1] for e in good], [e.ids for e in good], ref, want_ids) is None
    miss = first_mismatch(lines, [e.tokens[:-1] for e in bad], [e.ids for e in bad], ref, want_ids)
    assert miss is not None and miss[0] == 0 and miss[2].startswith("ids")
    # and the fairseq ids themselves: the first dict.txt entry is 4, </s> is 2 (fairseq's Dictionary layout)
    first = (tmp_path / "hf" / "dict.txt").read_text(encoding="utf-8").split("\n", 1)[0].split(" ")[0]
    assert _fast(out).token_to_id(first) == 4 == dictionary.index(first)
    assert good[0].ids[-1] == 2 == dictionary.eos()


def test_export_refuses_what_tokenizer_json_cannot_express(tmp_path):
    default = str(require_shared("space_models/unigram_default.model"))
    with pytest.raises(UserError, match="prime"):
        export.main(["--scheme", "sentencepiece", "--model", default, "--spaces", "drop", "--out", str(tmp_path / "a")])
    other = tmp_path / "other.dict.txt"
    other.write_text("a 1\nb 1\n", encoding="utf-8")
    with pytest.raises(UserError, match="exactly the pieces"):
        export.main(["--scheme", "spaces", "--model", default, "--dict", str(other), "--out", str(tmp_path / "b")])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith(".")] == []   # no temporary directory left


def test_export_keeps_an_existing_directory_and_its_inputs(tmp_path):
    model = str(require_shared("space_models/bpe_prime.model"))
    out = tmp_path / "hf"
    out.mkdir()
    (out / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(UserError, match="not empty"):
        export.main(["--scheme", "spaces", "--model", model, "--out", str(out)])
    assert (out / "mine.txt").read_text(encoding="utf-8") == "keep me"
    inside = out / "m.model"
    inside.write_bytes(open(model, "rb").read())
    with pytest.raises(UserError, match="holds an input"):
        export.main(["--scheme", "spaces", "--model", str(inside), "--out", str(out), "--overwrite"])
    assert inside.exists()
    _export(["--scheme", "spaces", "--model", model, "--overwrite"], out)
    assert not (out / "mine.txt").exists() and (out / "tokenizer.json").exists()


# --- FLOTA: tokenizer class -------------------------------------------------------------------------------------

@pytest.mark.parametrize("vocab", ["bert-base-uncased", "gpt2", "xlnet-base-cased"])
def test_flota_class_equals_project(tmp_path, vocab):
    path = str(require_shared(f"flota_vocabs/{vocab}.txt"))
    out = _export(["--scheme", "flota", "--flota-vocab", path, "--flota-k", "3"], tmp_path / "hf")
    assert {"dict.txt", "flota_vocab.txt", "tokenizer_config.json", export.SHIM} <= set(os.listdir(out))
    dict_path = tmp_path / "flota.dict.txt"   # what `morphtok-flota dict` writes for fairseq-preprocess --srcdict
    vocabularies.write_fairseq_dict(path, str(dict_path))
    dictionary = fairseq_dictionary(dict_path)
    lines = shared_lines("en") + shared_lines("de")
    enc = flota.make_encoder(export.parse_args(["--scheme", "flota", "--flota-vocab", path, "--out", "x"]))
    ref = [line.split() for line in enc.encode_lines(lines)]
    decode = fairseq_decoder({"bpe": "flota", "flota_vocab": path, "flota_style": "auto", "flota_k": 3,
                              "flota_mode": "flota"})
    _check_auto(_auto(out), dictionary, lines, ref, decode)


def test_tokenizer_class_loads_offline_with_auto_map(tmp_path):
    """Without importing this package first: AutoTokenizer(trust_remote_code=True) finds the class through the
    directory's auto_map shim; after `import preprocess.hf_tokenizers`, no flag is needed."""
    path = str(require_shared("flota_vocabs/bert-base-uncased.txt"))
    out = _export(["--scheme", "flota", "--flota-vocab", path], tmp_path / "hf")
    lines = shared_lines("en", limit=30)
    code = (
        "import json, sys\n"
        "from transformers import AutoTokenizer\n"
        "lines = json.loads(sys.stdin.read())\n"
        f"a = AutoTokenizer.from_pretrained({out!r}, trust_remote_code=True)\n"
        "import preprocess.hf_tokenizers\n"
        f"b = AutoTokenizer.from_pretrained({out!r})\n"
        "print(json.dumps([type(a).__name__, a(lines)['input_ids'], type(b).__name__, b(lines)['input_ids']]))\n")
    env = {**cli_env(), "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf_home")}
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(lines), capture_output=True, text=True,
                          env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    name_a, a, name_b, b = json.loads(proc.stdout.strip().splitlines()[-1])
    assert name_a == name_b == "MorphtokFlotaTokenizer"
    dict_path = tmp_path / "flota.dict.txt"
    vocabularies.write_fairseq_dict(path, str(dict_path))
    enc = flota.make_encoder(export.parse_args(["--scheme", "flota", "--flota-vocab", path, "--out", "x"]))
    assert a == b == fairseq_ids(fairseq_dictionary(dict_path), enc.encode_lines(lines))


# --- BITE and Wordmap: tokenizer classes over models the schemes learned -------------------------------------------

def _bite_case(scheme, tmp_path, limit):
    o = scheme.options
    out = _export(["--scheme", "bite", "--subword-model", scheme.model, "--tagger", o.bite_tagger,
                   "--pretokenizer", o.bite_pretokenizer], tmp_path / "hf")
    assert {"dict.txt", "subword.model", "tokenizer_config.json"} <= set(os.listdir(out))
    lines = shared_lines("en", limit)
    ref = [line.split() for line in scheme.encoder("en")().encode_lines(lines)]
    decode = fairseq_decoder({"bpe": "sentencepiece", "sentencepiece_model": scheme.model},
                             {"tokenizer": "bite", "bite_pretokenizer": o.bite_pretokenizer,
                              "bite_tagger": o.bite_tagger, "bite_single_char": False})
    _check_auto(_auto(out), fairseq_dictionary(scheme.dictionary("en")), lines, ref, decode)


def _wordmap_case(scheme, tmp_path, limit):
    vocab, model = scheme.path("wordmap.de.txt"), scheme.vocabulary_file("de")
    out = _export(["--scheme", "wordmap", "--wordmap-vocab", vocab, "--wordmap-spm", model,
                   "--dict", scheme.dictionary("de")], tmp_path / "hf")
    assert {"dict.txt", "wordmap.txt", "wordmap-spm.model", "tokenizer_config.json"} <= set(os.listdir(out))
    lines = shared_lines("de", limit)
    ref = [line.split() for line in scheme.encoder("de")().encode_lines(lines)]
    decode = fairseq_decoder({"bpe": "wordmap", "wordmap_vocab": vocab, "wordmap_spm": model})
    _check_auto(_auto(out), fairseq_dictionary(scheme.dictionary("de")), lines, ref, decode)


def test_bite_class_equals_project(bite_scheme, tmp_path):
    _bite_case(bite_scheme, tmp_path, limit=150)


def test_wordmap_class_equals_project(wordmap_scheme, tmp_path):
    _wordmap_case(wordmap_scheme, tmp_path, limit=150)


@pytest.mark.slow
def test_bite_class_equals_project_all_test_data(bite_scheme, tmp_path):
    _bite_case(bite_scheme, tmp_path, limit=None)


@pytest.mark.slow
def test_wordmap_class_equals_project_all_test_data(wordmap_scheme, tmp_path):
    _wordmap_case(wordmap_scheme, tmp_path, limit=None)


def test_wordmap_export_needs_its_dictionary(wordmap_scheme, tmp_path):
    with pytest.raises(UserError, match="--dict"):
        export.main(["--scheme", "wordmap", "--wordmap-vocab", wordmap_scheme.path("wordmap.de.txt"),
                     "--wordmap-spm", wordmap_scheme.vocabulary_file("de"), "--out", str(tmp_path / "hf")])
    assert not (tmp_path / "hf").exists()


def test_sentencepiece_with_user_symbols_equals_project(bite_scheme, tmp_path):
    """A plain SentencePiece model with user-defined symbols (BITE's subword model: [NNS] ..., ⧵, ⁀, ␣) as a
    tokenizer.json: the symbols are added tokens, glued to a word or at a word start as SentencePiece puts them."""
    from preprocess.schemes.bite import BiteTokenizer
    model = bite_scheme.model
    out = _export(["--scheme", "sentencepiece", "--model", model], tmp_path / "hf")
    bite = BiteTokenizer("moses", "nltk")
    raw = shared_lines("en", limit=150)
    lines = [bite.subword_text(t) for t in bite.tokenize_batch(raw)] + raw + ["x[NNS]y", "[VBD] [VBD]a", "\u29f5[NNS]"]
    enc = SpacesEncoder(model)
    decode = fairseq_decoder({"bpe": "sentencepiece", "sentencepiece_model": model})
    _check_fast(_fast(out), fairseq_dictionary(bite_scheme.dictionary("en")), lines,
                [enc.encode_pieces(line) for line in lines], decode)


def test_flota_class_keeps_one_options_object_from_saved_keywords(tmp_path):
    """from_pretrained passes the flota_* keywords of tokenizer_config.json: they become the options object, the
    same as one given directly, and are saved under the same keys (directories saved earlier keep loading)."""
    from preprocess.hf_tokenizers import MorphtokFlotaTokenizer
    from preprocess.schemes.flota import FlotaOptions

    vocab, dict_txt = tmp_path / "v.txt", tmp_path / "dict.txt"
    vocab.write_text("the\ndog\n##s\n")
    dict_txt.write_text("the 1\ndog 1\n##s 1\n")
    saved = MorphtokFlotaTokenizer(str(dict_txt), flota_list_file=str(vocab), flota_k=2, flota_case="lower")
    given = MorphtokFlotaTokenizer(str(dict_txt), flota_list_file=str(vocab),
                                   options=FlotaOptions(flota_k=2, flota_case="lower"))
    assert saved.options == given.options == FlotaOptions(flota_vocab=str(vocab), flota_k=2, flota_case="lower")
    assert {k: saved.init_kwargs[k] for k in ("flota_k", "flota_case", "flota_style")} == \
        {"flota_k": 2, "flota_case": "lower", "flota_style": FlotaOptions.flota_style}
    assert "options" not in saved.init_kwargs and saved.tokenize("the dogs") == given.tokenize("the dogs")
