"""Wordmap (Jung 2023): thesis examples, algorithm properties, vocabulary file, tokeniser and bad input."""
from __future__ import annotations

import gzip
import itertools
import random

import pytest

from preprocess.common import UserError
from preprocess.models.spm import SPACE_SYMBOL
from preprocess.schemes import wordmap as wm
from preprocess.schemes.wordmap import maps, segmentation, tagging, vocabulary

# ---------------------------------------------------------------------------------------------------------
# Algorithm 1: Table 2 of the thesis (target = verstehen), cleaning regex, syllables
# ---------------------------------------------------------------------------------------------------------


def test_table2_maps_for_verstehen():
    assert maps.wordmaps("verstehen", "verarbeiten") == [("111000000", "left match", True),
                                                        ("001000011", "right match", True)]
    assert maps.wordmaps("verstehen", "variiert") == [("101001000", "left match", True)]
    # same length: one map, no padding (Table 2 lists it for both matching ends)
    assert maps.wordmaps("verstehen", "vormachen") == [("101000111", "equal length", False)]
    assert maps.wordmaps("verstehen", "anstrebtest") == []


def test_cleaning_regex_thesis_example():
    assert maps.clean_map("11101100101") == "11100000001"
    assert maps.clean_map("101000111") == "100000111"
    assert maps.clean_map("001000011") == "000000011"
    assert maps.clean_map("0000") == "0000"
    assert maps.clean_map("1111") == "1111"


def test_syllable_count():
    assert maps.syllable_count("anschauen") == 3  # the thesis calls it 3-syllabic
    assert maps.syllable_count("viertelt") == 2
    assert maps.syllable_count("verstehen") == 3
    assert maps.syllable_count("brr") == 0


def test_naive_counts_table2():
    # summed cleaned maps of verstehen against the four Table 2 verbs, computed by hand:
    # 111000000 + 000000011 + 100000000 + 100000111 (leading runs and trailing runs only)
    verbs = ["verarbeiten", "variiert", "vormachen", "anstrebtest"]
    assert list(maps.positional_counts_naive("verstehen", verbs)) == [3, 1, 1, 0, 0, 0, 1, 2, 2]
    lead, trail, full = maps.run_counts_naive("verstehen", verbs)
    assert list(lead) == [3, 1, 1, 0, 0, 0, 0, 0, 0]
    assert list(trail) == [0, 0, 0, 0, 0, 0, 1, 2, 2]
    assert full == 0


def test_short_targets_only_analysed_to_the_right():
    # 'spielt' has 2 syllables: leading runs are dropped, so no prefix is possible
    verbs = ["spielen", "spinnt", "sprießt", "rollt", "malt"]
    lead, trail, _ = maps.run_counts_naive("spielt", verbs)
    assert not lead.any()
    assert trail[-1] == 4  # spinnt, sprießt, rollt, malt end in t


def _morphynet_verbs(shared_path):
    words = set()
    with open(shared_path("morph_gold/deu.derivational.v1.tsv"), encoding="utf-8") as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4:
                if f[3] == "V":
                    words.add(f[1])
                if f[2] == "V":
                    words.add(f[0])
    return sorted(words)


@pytest.fixture(scope="module")
def multi30k_verbs():
    """Verbs HanTa finds in the first 3000 German sentences of Multi30k (about 10 s)."""
    from tests.conftest import require_shared
    path = require_shared("multi30k/train.de.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, 3000)]
    return wm.extract_verbs(lines)


def test_extract_verbs_slice(multi30k_verbs):
    verbs = multi30k_verbs
    assert len(verbs) > 300
    assert len(set(verbs)) == len(verbs)
    for v in ("steht", "spielt", "sitzen"):
        assert v in verbs
    assert "mann" not in verbs and "ein" not in verbs  # nouns/articles are not verbs
    assert all(v == v.lower() and v.isalpha() for v in verbs)
    # capitalised sentence-initial verb, punctuation glued to the verb, user word list
    got = wm.extract_verbs(["Spielt er Gitarre?", "", "   ", "Er schaut zu."], extra_words=["Viertelt", "x", "1a"])
    assert "spielt" in got and "schaut" in got and "viertelt" in got
    assert "x" not in got and "1a" not in got


@pytest.mark.parametrize("source", ["multi30k", "morphynet"])
def test_thesis_figures_3_and_4(source, multi30k_verbs, shared_path):
    """Figure 3: viertelt -> viertel + t; Figure 4: anschauen -> an + schau + en (Algorithm 1 + z-scores)."""
    verbs = multi30k_verbs if source == "multi30k" else _morphynet_verbs(shared_path)
    assert maps.analyse("viertelt", verbs) == ("", "viertel", "t")
    assert maps.analyse("anschauen", verbs) == ("an", "schau", "en")


def test_summed_reading_loses_the_prefix_of_anschauen(shared_path):
    """Documents why the per-side reading is the default: one z-score over the summed map cannot show 'an'."""
    verbs = _morphynet_verbs(shared_path)
    prefix, _stem, suffix = maps.analyse("anschauen", verbs, mode="summed")
    assert suffix == "en" and prefix != "an"
    assert maps.analyse("viertelt", verbs, mode="summed") == ("", "viertel", "t")


@pytest.mark.parametrize("size", [60, 400])
def test_indexed_counts_equal_pairwise_reference(size, shared_path):
    rng = random.Random(7)
    verbs = [w for w in (maps.normalise_verb(v) for v in _morphynet_verbs(shared_path)) if w]
    sample = sorted(set(rng.sample(verbs, size)) | {"ab", "abab", "ba", "verstehen", "stehen", "versteh"})
    index = maps._VerbIndex(sample)
    for target in sample + ["anschauen", "zz", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"]:
        a = maps.run_counts_naive(target, sample)
        b = index.run_counts(target)
        assert list(a[0]) == list(b[0]) and list(a[1]) == list(b[1]) and a[2] == b[2], target
    assert maps.analyse_all(sample, method="naive") == maps.analyse_all(sample, method="fast")


def test_split_by_zscore_and_side():
    # counts with a clear suffix peak: only the last position is above the mean
    assert maps.split_by_zscore("viertelt", [0, 0, 0, 0, 1, 3, 4, 95]) == ("", "viertel", "t")
    assert maps.split_by_zscore("abc", [1, 1, 1]) == ("", "abc", "")  # constant map: no affixes
    assert maps.split_by_side("anschauen", [2000, 600, 150, 70, 0, 0, 0, 0, 0],
                            [0, 0, 0, 0, 0, 0, 120, 8800, 10200]) == ("an", "schau", "en")
    assert maps.split_by_zscore("a", [3]) == ("", "a", "")


# ---------------------------------------------------------------------------------------------------------
# Vocabulary rules, file format
# ---------------------------------------------------------------------------------------------------------


def test_outlier_and_interference_rules():
    analyses = {
        "w1": ("", "spiel", "t"), "w2": ("ver", "steh", "en"), "w3": ("an", "schau", "en"),
        "w4": ("", "lauf", "t"), "w5": ("", "sitz", "t"), "w6": ("", "geh", "en"), "w7": ("ab", "fahr", "en"),
        # a 12-char "affix" is a length outlier (> mean + 2.5 sd) and an overlong stem (> mean + 2 MAD)
        "w8": ("", "x", "abcdefghijkl"), "w9": ("", "überschwänglichkeit", "e"),
        "w10": ("ge", "mal", "t"), "w11": ("be", "spring", "er"), "w12": ("", "renn", "st"),
        "w13": ("", "kletter", "te"), "w14": ("", "wart", "n"), "w15": ("", "sag", "et"), "w16": ("zu", "lach", ""),
        "w17": ("um", "trink", ""),
    }
    # functional lengths: mean 2.5, sd 2.58 -> limit 8.95; lexemic lengths: mean 5, MAD 2 -> limit 9;
    # mean functional length after cleaning 28/15 = 1.87
    vocab = vocabulary.vocabulary_from_analyses(analyses)
    assert "abcdefghijkl" not in vocab.functional
    assert {"t", "en", "ver", "an", "ab", "e"} <= set(vocab.functional)
    assert "überschwänglichkeit" not in vocab.lexemic
    assert "x" not in vocab.lexemic  # shorter than the mean functional length (interference)
    assert {"spiel", "steh", "schau", "lauf", "sitz", "geh", "fahr", "kletter"} <= set(vocab.lexemic)
    assert vocab.functional["en"] == 4 and vocab.kind("en") == "functional" and vocab.kind("spiel") == "lexemic"


def test_vocabulary_save_load(tmp_path, multi30k_verbs):
    vocab = wm.build_vocabulary(multi30k_verbs)
    assert len(vocab.functional) > 10 and len(vocab.lexemic) > 100
    assert {"t", "en", "ge"} <= set(vocab.functional)
    path = tmp_path / "v.txt"
    vocab.save(str(path))
    back = wm.WordmapVocabulary.load(str(path))
    assert back.functional == vocab.functional and back.lexemic == vocab.lexemic
    assert back.meta["split"] == "per-side"
    for w in multi30k_verbs[:200]:
        assert wm.segment(w, back) == wm.segment(w, vocab)
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n", encoding="utf-8")
    with pytest.raises(UserError):
        wm.WordmapVocabulary.load(str(bad))
    with pytest.raises(UserError):
        wm.WordmapVocabulary.load(str(tmp_path / "missing.txt"))


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2 and eq. (3.1)
# ---------------------------------------------------------------------------------------------------------


def test_eq_3_1_by_hand():
    # ver + steh + en, t = 9, |s| = 3: (3/27)^(1/3) + (4/27)^(1/4) + (2/27)^(1/2)
    assert segmentation.score(("ver", "steh", "en")) == pytest.approx(0.480750 + 0.620403 + 0.272166, abs=1e-5)
    assert segmentation.score(("verstehen",)) == pytest.approx(1.0)
    # the |s| divisor punishes many short pieces, the s_i-th root punishes long ones
    assert (segmentation.score(("ve", "rs", "te", "he", "n")) < segmentation.score(("ver", "steh", "en"))
            < segmentation.score(("vers", "tehen")))


def test_segmentations_algorithm2_rules():
    vocab = wm.WordmapVocabulary({"an": 5, "en": 9, "t": 7}, {"schau": 3, "ansch": 1, "viertel": 2, "a": 4})
    # complete, left to right, pieces > 1 char; one trailing character may close a segmentation
    assert sorted(segmentation.segmentations("anschauen", vocab)) == [("an", "schau", "en")]
    assert segmentation.segmentations("viertelt", vocab) == [("viertel", "t")]
    assert segmentation.segmentations("viertelte", vocab) == []      # two characters left over: incomplete
    assert segmentation.segmentations("aviertel", vocab) == []       # a unary piece may not start a segmentation
    assert wm.segment("viertelte", vocab) == ["viertelte"]  # no complete segmentation: returned whole
    assert wm.segment("Anschauen", vocab) == ["An", "schau", "en"]  # capitalised verb keeps its spelling
    assert wm.segment("", vocab) == [""]
    assert wm.segment("x", vocab) == ["x"]


def test_segment_is_the_argmax_of_all_segmentations(multi30k_verbs):
    vocab = wm.build_vocabulary(multi30k_verbs)
    checked = 0
    for w in multi30k_verbs + ["anschauen", "hinunterspringen", "verstehen", "eingeschlafen"]:
        allsegs = segmentation.segmentations(w, vocab, limit=20000)
        got = wm.segment(w, vocab)
        assert "".join(got) == w
        if not allsegs:
            assert got == [w]
            continue
        checked += 1
        best = max(round(segmentation.score(s, len(w)), 12) for s in allsegs)
        assert tuple(got) in allsegs
        assert round(segmentation.score(got, len(w)), 12) == best
        assert all(len(p) > 1 and p in vocab for p in got[:-1])
    assert checked > 100


def test_segment_long_and_odd_words_terminate():
    vocab = wm.WordmapVocabulary({"ab": 3, "ba": 2, "a": 1}, {"aba": 1, "bab": 1, "abab": 1})
    word = "ab" * 30  # 60 characters, exponentially many segmentations
    got = wm.segment(word, vocab)
    assert "".join(got) == word and len(got) > 1
    assert wm.segment("ab" * 500, vocab) == ["ab" * 500]  # beyond MAX_SEGMENT_LEN: whole
    for odd in ["İstanbul", "ǅemal", "😀😀", "a\u0301b", "ß"]:
        assert "".join(wm.segment(odd, vocab)) == odd


# ---------------------------------------------------------------------------------------------------------
# Sentence tokeniser: reversibility and bad input
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory, multi30k_verbs):
    from tests.conftest import require_shared
    with gzip.open(require_shared("multi30k/train.de.gz"), "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, 3000)]
    d = tmp_path_factory.mktemp("wordmap")
    wm.train_spm(lines, str(d / "spm"), 2000, "unigram")
    vocab = wm.build_vocabulary(multi30k_verbs)
    vocab.save(str(d / "wordmap.txt"))
    return wm.WordmapTokenizer(str(d / "wordmap.txt"), str(d / "spm.model")), lines, d


BAD_LINES = [
    "", "   ", "\t", "Spielt er Gitarre?", "Schau dir das an!", "Er schaut sich das Bild an.",
    "Die Kinder (spielten) im Garten.", "The quick brown fox jumps over the lazy dog.",
    "sie haben gespielt-und getanzt", "Er  läuft\tschnell .", "ﬁ x\u00a0y z 😀 中文 \u200b\ufeff",
    "a" * 5000, "Häuser " * 800, "sehr" + "-" * 300 + "langweilig", "12:30 Uhr, 3,5 km / h", "ÄÖÜ äöü ß ẞ",
    "läuft\u2028rennt", "x\rx",
]


def test_tokenizer_lossless_on_multi30k_slice(tokenizer):
    tok, lines, _ = tokenizer
    sample = lines[:300]
    out = tok.encode_lines(sample)
    assert len(out) == len(sample)
    n_verb_splits = 0
    for src, enc in zip(sample, out):
        assert "\n" not in enc and "\r" not in enc and "  " not in enc
        assert wm.decode_line(enc) == " ".join(src.split())
        n_verb_splits += sum(1 for p in enc.split() if not p.startswith(SPACE_SYMBOL))
    assert n_verb_splits > 300


def test_verbs_go_through_wordmap(tokenizer):
    tok, _, _ = tokenizer
    pieces = tok.encode_pieces("Zwei Männer stehen am Herd.")
    # 'stehen' is a verb: its pieces are exactly its Wordmap segmentation
    seg = wm.segment("stehen", tok.vocabulary)
    assert len(seg) > 1
    i = pieces.index(SPACE_SYMBOL + seg[0])
    assert pieces[i:i + len(seg)] == [SPACE_SYMBOL + seg[0]] + seg[1:]
    # the noun is encoded by the base SentencePiece model
    assert pieces[:2] == [p for p in tok.sp.encode("Zwei Männer", out_type=str)][:2]


def test_bad_input_one_line_each_and_lossless(tokenizer):
    tok, _, _ = tokenizer
    out = tok.encode_lines(BAD_LINES)
    assert len(out) == len(BAD_LINES)
    for src, enc in zip(BAD_LINES, out):
        assert "\n" not in enc and "\r" not in enc
        if not src.strip():
            assert enc == ""
        flat = " ".join(src.replace("\u2028", " ").replace("\r", " ").split())
        assert wm.decode_line(enc) == flat, src[:40]


def test_encode_cli_and_errors(tokenizer, run_cli, tmp_path):
    _, lines, d = tokenizer
    src = tmp_path / "in.de"
    src.write_text("\n".join(lines[:50] + BAD_LINES[:12]) + "\n", encoding="utf-8")
    dst = tmp_path / "out.de"
    run_cli(["python", "-m", "preprocess.encode", "--scheme", "wordmap", "--wordmap-vocab", d / "wordmap.txt",
             "--wordmap-spm", d / "spm.model", "--inputs", src, "--outputs", dst, "--workers", "2", "--quiet",
             "--chunk-size", "7"])
    enc = dst.read_text(encoding="utf-8").split("\n")[:-1]
    raw = src.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(enc) == len(raw)
    assert [wm.decode_line(e) for e in enc] == [" ".join(r.split()) for r in raw]
    proc = run_cli(["python", "-m", "preprocess.encode", "--scheme", "wordmap", "--wordmap-vocab",
                    tmp_path / "nope.txt", "--wordmap-spm", d / "spm.model", "--inputs", src, "--outputs",
                    tmp_path / "x"], check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error:") and "Traceback" not in proc.stderr


def test_build_cli(run_cli, tmp_path, multi30k_verbs):
    verbs = tmp_path / "verbs.txt"
    verbs.write_text("\n".join(multi30k_verbs[:400]) + "\n", encoding="utf-8")
    corpus = tmp_path / "c.de"
    corpus.write_text("Ein Mann spielt Gitarre.\nZwei Kinder schauen zu.\n" * 50, encoding="utf-8")
    run_cli(["python", "-m", "preprocess.schemes.wordmap", "build", "--input", corpus, "--verbs", verbs, "--quiet",
             "--output", tmp_path / "v.txt", "--spm-prefix", tmp_path / "spm", "--spm-vocab-size", "60"])
    vocab = wm.WordmapVocabulary.load(str(tmp_path / "v.txt"))
    assert len(vocab) > 20 and (tmp_path / "spm.model").exists()
    # verbs tagged from --input on 2 workers: those of extract_verbs
    mixed = tmp_path / "m.de"
    mixed.write_text("Ein Mann spielt Gitarre.\nZwei Kinder schauen zu.\nSie lacht und tanzt.\n" * 40,
                     encoding="utf-8")
    run_cli(["python", "-m", "preprocess.schemes.wordmap", "build", "--input", mixed, "--workers", "2", "--quiet",
             "--output", tmp_path / "m.txt", "--verbs-out", tmp_path / "m.verbs"])
    assert (tmp_path / "m.verbs").read_text(encoding="utf-8").split() == wm.extract_verbs(
        mixed.read_text(encoding="utf-8").splitlines())
    proc = run_cli(["python", "-m", "preprocess.schemes.wordmap", "segment", "--vocab", tmp_path / "v.txt", "anschauen",
                    "viertelt"])
    assert len(proc.stdout.splitlines()) == 2
    proc = run_cli(["python", "-m", "preprocess.schemes.wordmap", "build", "--verbs", tmp_path / "missing",
                    "--output", tmp_path / "w.txt"], check=False)
    assert proc.returncode == 2 and "error:" in proc.stderr


# ---------------------------------------------------------------------------------------------------------
# Corpus scale: parallel verb extraction, the inventory (no dictionary holes)
# ---------------------------------------------------------------------------------------------------------


def test_extract_verbs_file_with_workers_equals_extract_verbs(tmp_path, multi30k_verbs):
    """Tagging the training text on 2 workers in small chunks gives the verbs of the one-process
    extract_verbs, in the same order; --max-lines takes the first lines only."""
    from tests.conftest import require_shared
    with gzip.open(require_shared("multi30k/train.de.gz"), "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, 3000)]
    path = tmp_path / "train.de"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert wm.extract_verbs_file(str(path), workers=2, chunk_size=150, tmp_dir=str(tmp_path)) == multi30k_verbs
    assert wm.extract_verbs_file(str(path), workers=2, chunk_size=100, max_lines=400) == wm.extract_verbs(
        lines[:400])
    assert [p.name for p in tmp_path.iterdir()] == ["train.de"]   # its temporary files are gone


def test_inventory_keeps_verbs_inside_it(tokenizer):
    """With an inventory, every piece written for a verb is in it: Wordmap's pieces where they all are, else
    the whole verb where it is, else the base model's pieces.  An inventory holding everything the plain
    tokenizer wrote reproduces its output exactly."""
    tok, lines, d = tokenizer
    plain = tok.encode_lines(lines[:300])
    inventory = {p for line in plain for p in line.split()}
    again = wm.WordmapTokenizer(tok.vocabulary, tok.sp, inventory=inventory)
    assert again.encode_lines(lines[:300]) == plain
    spm_only = {tok.sp.id_to_piece(i) for i in range(tok.sp.get_piece_size())}
    narrow = wm.WordmapTokenizer(tok.vocabulary, tok.sp, inventory=spm_only)
    line = "Zwei Männer stehen am Herd."
    seg = wm.segment("stehen", tok.vocabulary)
    assert len(seg) > 1 and not all(p in spm_only for p in [SPACE_SYMBOL + seg[0]] + seg[1:])
    pieces = narrow.encode_pieces(line)
    assert all(p in spm_only for p in pieces)
    assert wm.decode_line(" ".join(pieces)) == line
    whole_ok = wm.WordmapTokenizer(tok.vocabulary, tok.sp, inventory=spm_only | {SPACE_SYMBOL + "stehen"})
    assert SPACE_SYMBOL + "stehen" in whole_ok.encode_pieces(line)
    for src in lines[300:600]:
        enc = narrow.encode_line(src)
        assert wm.decode_line(enc) == " ".join(src.split())
        assert all(p in spm_only for p in enc.split()), src
    assert narrow.inventory_fallbacks > 0 and again.inventory_fallbacks == 0
    # a fallback is counted every time its verb comes back (the verb's pieces are remembered, not its count)
    def count(encode_lines):
        before = narrow.inventory_fallbacks
        encode_lines()
        return narrow.inventory_fallbacks - before
    spaced = [" ".join(tagging.tag_token_list(s.split())) for s in lines[300:600]]   # every verb a word of its own
    src = next(s for s in spaced if count(lambda s=s: narrow.encode_line(s)) > 0)
    once = count(lambda: narrow.encode_line(src))
    assert once > 0 and count(lambda: narrow.encode_lines([src, "Sie stehen.", src])) == 2 * once


def test_segmenter_pieces_cover_lower_and_capitalised_verbs(tokenizer):
    tok, lines, _ = tokenizer
    inventory = set(wm.segmenter_pieces(tok.vocabulary))
    for p in tok.vocabulary.pieces:
        assert {SPACE_SYMBOL + p, p, SPACE_SYMBOL + p[0].upper() + p[1:]} <= inventory
    checked = 0
    for src in lines[:500]:
        for a, b in tok.verb_spans(src):
            word = src[a:b]
            if word not in (word.lower(), word[0].upper() + word[1:].lower()):
                continue
            segs = wm.segment(word, tok.vocabulary)
            if len(segs) > 1:
                checked += 1
                assert SPACE_SYMBOL + segs[0] in inventory and all(s in inventory for s in segs[1:]), word
    assert checked > 300


def test_tag_tokens_fast_equals_hanta_taglevel_1():
    """Wordmap's tags from preprocess.tagging.hanta_fast equal those of HanTa's own tag_sent(taglevel=1) as Wordmap used
    it, including the window HanTa's lemma pass cannot handle (all '?')."""
    from HanTa import HanoverTagger as ht
    hanta = ht.HanoverTagger("morphmodel_ger.pgz")
    sentences = ["Die Herbstauktion beginnt morgen , sagt er .", "Ein Mann spielt Gitarre und singt laut .",
                 "Spielt er ?" + " x" * 250 + " Herbstauktion"]
    for line in sentences:
        tokens = [m.group() for m in tagging._TAG_TOKEN_RE.finditer(line)]
        assert tagging.tag_tokens(tokens) == tagging.tag_tokens(tokens, tagger=hanta), line
    assert set(tagging.tag_tokens(sentences[0].split())) == {"?"}
    assert "?" not in tagging.tag_tokens(sentences[1].split())


def test_untaggable_window_is_counted_and_reported(tokenizer):
    """A window HanTa's own tag_sent fails on (its words tagged '?', so none is a verb) is not silent: the
    tokenizer counts its words and reports them as a note counter."""
    tok, _, _ = tokenizer
    line = "Die Herbstauktion beginnt morgen , sagt er ."      # HanTa's lemma pass fails on this window
    before = tok.counters()
    assert wm.decode_line(tok.encode_line(line)) == line
    after = tok.counters()
    grown = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    assert list(grown.values()) == [8] and "HanTa could not tag" in next(iter(grown)), grown
    tok.encode_line("Ein Mann spielt Gitarre und singt laut .")
    assert tok.counters() == after


def _reference_pieces(tok, line):
    """WordmapTokenizer.encode_pieces written plainly: every HanTa token located by its regex match, every word
    by ``\\S+``, the verbs inside each word by their spans."""
    import re

    from preprocess.common import flatten_line
    line = flatten_line(line)
    verbs = [(a, b) for a, b, t, g in tagging.tag_line(line, tok.tagger) if tagging.is_verb_tag(g) and t.isalpha() and len(t) > 1]
    out = []
    for m in re.finditer(r"\S+", line):
        inside = [(a, b) for a, b in verbs if m.start() <= a < m.end()]
        if not inside:
            out += tok._spm(m.group(), True)
        else:
            tok._encode_word(line, m.start(), m.end(), inside, out)
    return out


def test_encode_pieces_equal_the_plain_reference(tokenizer):
    """The fast line path (words by str.split, verb positions from the verbs alone) gives the pieces of the plain
    one: repeated verbs, a verb inside another token, verbs behind or between punctuation in one word, odd white
    space, untaggable and over-long tokens, and Multi30k lines."""
    tok, lines, _ = tokenizer
    tricky = ["spielt spielt spielt", "Er spielte , spielt und spielt .", "(spielt)-singt singt", "Sie spielt\u3000singt"
              "\u00a0läuft", "x spielt" + "y" * 60 + " spielt", "Spielt der Mann ? Spielt er ?", "geht-geht-geht geht",
              "1 singt 2 singt", "singt\u2028tanzt", "Sie  tanzt\t\tund\u2003singt ."]
    for line in BAD_LINES + tricky + lines[:400]:
        assert tok.encode_pieces(line) == _reference_pieces(tok, line), line
