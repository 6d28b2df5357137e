"""Files written by the code before the refactor (commit a5265f7; see tests/data/legacy-a5265f7/README.md) still load
and give the same output: each demo row's ``binarize.json`` and models encode the test text byte for byte as
a5265f7 did, and its Hugging Face exports (BITE, FLOTA and Wordmap classes, the spaces ``tokenizer.json``) give the
same ids."""
from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env, require_shared

LEGACY = REPO / "tests" / "data" / "legacy-a5265f7"
EXPECTED = json.loads((LEGACY / "expected.json").read_text(encoding="utf-8"))
LINES = 300


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    """The first 300 lines of Multi30k's test 2016, as ``test.{en,de}`` (what a5265f7 encoded)."""
    folder = tmp_path_factory.mktemp("raw")
    for lang in ("en", "de"):
        with gzip.open(require_shared(f"multi30k/test_2016_flickr.{lang}.gz"), "rt", encoding="utf-8") as fh:
            lines = [next(fh) for _ in range(LINES)]
        (folder / f"test.{lang}").write_text("".join(lines), encoding="utf-8")
    return folder


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("row", sorted(EXPECTED["rows"]))
def test_binarize_json_and_models_encode_as_before(row, raw, tmp_path):
    from train_scripts.binarize import encode_file, scheme_from_info

    out = tmp_path / row
    shutil.copytree(LEGACY / "rows" / row, out)
    text = (out / "binarize.json").read_text(encoding="utf-8")
    info = json.loads(text.replace("@OUT@", str(out)).replace("@RAW@", str(raw)))
    scheme = scheme_from_info(info)
    for lang in ("en", "de"):
        dst = tmp_path / f"test.{lang}"
        encode_file(scheme.encoder(lang, 1), str(raw / f"test.{lang}"), str(dst), 1, True)
        assert _sha(dst.read_bytes()) == EXPECTED["rows"][row][lang], f"{row} {lang}: not what a5265f7 wrote"


@pytest.mark.parametrize("name", sorted(EXPECTED["hf"]))
def test_hugging_face_exports_load_and_give_the_same_ids(name, raw):
    transformers = pytest.importorskip("transformers")
    from preprocess import hf_tokenizers

    directory = str(LEGACY / "hf" / name)
    if name == "spaces":
        tok = transformers.PreTrainedTokenizerFast.from_pretrained(directory)
    else:
        tok = hf_tokenizers.tokenizer_classes()[name].from_pretrained(directory)
    lang = "de" if name == "wordmap" else "en"
    ids = [tok(line)["input_ids"] for line in (raw / f"test.{lang}").read_text(encoding="utf-8").splitlines()]
    assert _sha(json.dumps(ids).encode()) == EXPECTED["hf"][name], f"{name}: not the ids a5265f7's class gave"


@pytest.mark.slow
def test_checkpoint_loads_and_translates_as_before(raw, tmp_path):
    """A checkpoint a5265f7 trained (its cfg names a5265f7's plugin folder and data, both gone) loads through
    morphtok-translate with the row's binarize.json and prints what a5265f7 printed."""
    out = tmp_path / "bite_unigram"
    shutil.copytree(LEGACY / "rows" / "bite_unigram", out)
    text = (out / "binarize.json").read_text(encoding="utf-8")
    (out / "binarize.json").write_text(text.replace("@OUT@", str(out)).replace("@RAW@", str(raw)), encoding="utf-8")
    # fairseq infers the language pair from the binarised splits' names; the splits themselves (Multi30k's text as
    # ids) are not kept in the repository, and interactive translation reads none of them
    (out / "data-bin" / "test.en-de.en.idx").touch()
    lines = (raw / "test.en").read_text(encoding="utf-8").splitlines()[:25]
    proc = subprocess.run([sys.executable, "-m", "train_scripts.translate", "--data", str(out), "--checkpoint",
                           str(LEGACY / "checkpoints" / "bite_unigram.pt")], input="\n".join(lines) + "\n",
                          cwd=tmp_path, env={**cli_env(), "CUDA_VISIBLE_DEVICES": ""}, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(proc.stdout.splitlines()) == 25
    assert _sha(proc.stdout.encode()) == EXPECTED["translate"]["bite_unigram"], proc.stdout[:500]
