"""Data preparation scripts (local copies: no network in tests)."""
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
