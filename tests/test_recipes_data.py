"""Data preparation scripts (local copies: no network in tests) and binarize with the other schemes."""
import json

import pytest

from tests.conftest import multi30k_slice


def test_prepare_multi30k_from_local_copy(run_cli, shared_path, tmp_path):
    src = shared_path("multi30k")
    run_cli(["bash", "train_scripts/prepare_multi30k.sh", "--out", tmp_path / "m", "--from", src,
             "--max-train", "500"])
    import gzip

    for split, name, n in (("train", "train", 500), ("valid", "val", 1014), ("test", "test_2016_flickr", 1000)):
        for lang in ("en", "de"):
            lines = (tmp_path / "m" / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            with gzip.open(src / f"{name}.{lang}.gz", "rt", encoding="utf-8") as fh:
                assert lines == fh.read().splitlines()[:n]
    # a copy that is not the published set is refused, and nothing is half-written
    bad = run_cli(["bash", "train_scripts/prepare_multi30k.sh", "--out", tmp_path / "bad", "--from",
                   multi30k_slice(tmp_path / "slice", 50, 10, 10)], check=False)
    assert bad.returncode != 0 and "published set" in bad.stderr
    assert not list((tmp_path / "bad").glob("*.en"))


def test_prepare_wmt14_from_local_copy(run_cli, tmp_path):
    src = tmp_path / "local"
    for corpus, n in (("europarl-v7.de-en", 3), ("commoncrawl.de-en", 2), ("news-commentary-v9.de-en", 1)):
        (src / corpus).mkdir(parents=True)
        for lang in ("en", "de"):
            (src / corpus / f"{corpus}.{lang}").write_text("".join(f"{corpus} {lang} {i}\n" for i in range(n)))
    (src / "newstest2013.en").write_text("dev en\n")
    (src / "newstest2013.de").write_text("dev de\n")
    sgm = '<refset>\n<doc docid="x">\n<seg id="1">Ein Satz &amp; mehr.</seg>\n<seg id="2">Zwei</seg>\n</doc>\n'
    (src / "test-full").mkdir()
    (src / "test-full" / "newstest2014-deen-ref.de.sgm").write_text(sgm)
    (src / "test-full" / "newstest2014-deen-src.en.sgm").write_text(sgm.replace("Ein Satz", "A sentence"))
    out = tmp_path / "wmt"
    run_cli(["bash", "train_scripts/prepare_wmt14_en_de.sh", "--out", out, "--from", src])
    train_en = (out / "train.en").read_text().splitlines()
    assert len(train_en) == 6 and len((out / "train.de").read_text().splitlines()) == 6
    assert train_en[0] == "europarl-v7.de-en en 0" and train_en[-1] == "news-commentary-v9.de-en en 0"
    assert (out / "valid.de").read_text() == "dev de\n"
    assert (out / "test.en").read_text().splitlines() == ["A sentence &amp; mehr.", "Zwei"]
    (src / "commoncrawl.de-en" / "commoncrawl.de-en.de").write_text("only one line\n")
    bad = run_cli(["bash", "train_scripts/prepare_wmt14_en_de.sh", "--out", tmp_path / "w2", "--from", src],
                  check=False)
    assert bad.returncode != 0 and "commoncrawl.de-en: 2 English but 1 German" in bad.stderr


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    return multi30k_slice(tmp_path_factory.mktemp("schemes") / "raw", 150, 12, 9)


def _binarize(run_cli, raw, out, *opts):
    run_cli(["python", "-m", "train_scripts.binarize", "--data", raw, "--out", out, "--vocab-size", "400", *opts])
    return json.loads((out / "binarize.json").read_text())


def _check_lines(out, raw):
    for split in ("train", "valid", "test"):
        n = len((raw / f"{split}.en").read_text().splitlines())
        for lang in ("en", "de"):
            assert len((out / "tok" / f"{split}.{lang}").read_text().split("\n")) - 1 == n


def test_binarize_bite(run_cli, small_corpus, tmp_path):
    from preprocess.bite import INFLECTION_SYMBOLS

    info = _binarize(run_cli, small_corpus, tmp_path / "b", "--scheme", "bite")
    _check_lines(tmp_path / "b", small_corpus)
    assert info["joined_dictionary"]
    assert info["encode_args"]["en"][:2] == ["--scheme", "bite"] and info["encode_args"]["de"][:2] == ["--scheme", "spaces"]
    en = (tmp_path / "b" / "tok" / "train.en").read_text().split()
    de = (tmp_path / "b" / "tok" / "train.de").read_text().split()
    symbols = set(INFLECTION_SYMBOLS)
    assert symbols & set(en) and not symbols & set(de)  # BITE on the English side only
    assert info["generate_args"][:2] == ["--bpe", "sentencepiece"]  # German target: no BITE to undo
    assert info["source_args"][:2] == ["--tokenizer", "bite"]


def test_binarize_flota_with_test_noise(run_cli, small_corpus, shared_path, tmp_path):
    vocab = shared_path("flota_vocabs/xlnet-base-cased.txt")
    common = ["--scheme", "flota", "--flota-vocab", vocab, "--flota-style", "sentencepiece", "--flota-k", "2"]
    clean = _binarize(run_cli, small_corpus, tmp_path / "c", *common)
    _binarize(run_cli, small_corpus, tmp_path / "n", *common, "--flota-noise-p", "0.5")
    _check_lines(tmp_path / "n", small_corpus)
    assert clean["generate_args"][:2] == ["--bpe", "flota"] and "--flota-k" in clean["generate_args"]
    read = lambda d, f: (tmp_path / d / "tok" / f).read_text()  # noqa: E731
    assert read("c", "train.en") == read("n", "train.en") and read("c", "test.en") != read("n", "test.en")
    vocab_tokens = set(vocab.read_text(encoding="utf-8").split("\n"))
    assert set(read("c", "train.en").split()) <= vocab_tokens  # FLOTA only emits vocabulary tokens


def test_binarize_wordmap_separate_dictionaries(run_cli, small_corpus, tmp_path):
    info = _binarize(run_cli, small_corpus, tmp_path / "w", "--scheme", "wordmap")
    _check_lines(tmp_path / "w", small_corpus)
    assert not info["joined_dictionary"] and info["train_args"] == ["--share-decoder-input-output-embed"]
    assert info["generate_args"][:2] == ["--bpe", "wordmap"]
    bin_dir = tmp_path / "w" / "data-bin"
    assert (bin_dir / "dict.en.txt").read_text() != (bin_dir / "dict.de.txt").read_text()
    assert (tmp_path / "w" / "models" / "wordmap.de.txt").exists()
