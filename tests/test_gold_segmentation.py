"""HYP2 against gold morphology (preprocess/evaluate/lexeme.py, train_scripts/gold_segmentation.py): constructed
segmenters whose scores are known -- one that keeps every lexeme whole links exactly the forms of one lemma
(consistency recall and F1 1.0), one that splits into characters links nothing (precision 0), one that equals the
MorphyNet gold has boundary F1 1.0 -- the paired bootstrap of a row against itself is [0, 0], the pieces of a verb
in its sentence, and hostile input (a missing file, a malformed CoNLL-U line) as one line with no output.  End to
end on two tiny real rows (SentencePiece Unigram and Wordmap, binarize --lm)."""
import json

import numpy as np
import pytest

from preprocess.cli import run_main
from preprocess.common import UserError
from preprocess.evaluate import lexeme, morph
from tests.conftest import require_shared
from train_scripts import gold_segmentation as gs
from train_scripts.prepare_german import read_conllu

SP = "\u2581"

# (text, [(form, lemma, upos)]): every word of the text, punctuation written against the last one
SENTENCES = [
    ("Kinder spielen im Garten.", [("Kinder", "Kind", "NOUN"), ("spielen", "spielen", "VERB"), ("im", "in", "ADP"),
                                   ("Garten", "Garten", "NOUN")]),
    ("Er spielt Fußball.", [("Er", "er", "PRON"), ("spielt", "spielen", "VERB"), ("Fußball", "Fußball", "NOUN")]),
    ("Sie spielte gestern.", [("Sie", "sie", "PRON"), ("spielte", "spielen", "VERB"), ("gestern", "gestern", "ADV")]),
    ("Wir kaufen Brot.", [("Wir", "wir", "PRON"), ("kaufen", "kaufen", "VERB"), ("Brot", "Brot", "NOUN")]),
    ("Er kauft Milch.", [("Er", "er", "PRON"), ("kauft", "kaufen", "VERB"), ("Milch", "Milch", "NOUN")]),
    ("Sie kaufte ein.", [("Sie", "sie", "PRON"), ("kaufte", "kaufen", "VERB"), ("ein", "ein", "ADP")]),
    ("Er macht es.", [("Er", "er", "PRON"), ("macht", "machen", "VERB"), ("es", "es", "PRON")]),
    ("Wir machen mit.", [("Wir", "wir", "PRON"), ("machen", "machen", "VERB"), ("mit", "mit", "ADP")]),
    ("Er lacht.", [("Er", "er", "PRON"), ("lacht", "lachen", "VERB")]),
]
# the lexeme of each verb form above, and its gold split
LEXEME = {"spielen": ["spiel", "en"], "spielt": ["spiel", "t"], "spielte": ["spiel", "te"], "kaufen": ["kauf", "en"],
          "kauft": ["kauf", "t"], "kaufte": ["kauf", "te"], "macht": ["mach", "t"], "machen": ["mach", "en"],
          "lacht": ["lach", "t"]}
MORPHYNET = [("fallen", "befallen", "V", "V", "be", "prefix"), ("kaufen", "verkaufen", "V", "V", "ver", "prefix"),
             ("Zahl", "zahlen", "N", "V", "en", "suffix"), ("lachen", "auflachen", "V", "V", "auf", "prefix"),
             ("Haus", "Häuschen", "N", "N", "chen", "suffix"),                  # not a verb: left out
             ("stehen", "verstanden", "V", "V", "ver", "prefix")]               # not affix + source: left out
GOLD = {"befallen": ["be", "fallen"], "verkaufen": ["ver", "kaufen"], "zahlen": ["zahl", "en"],
        "auflachen": ["auf", "lachen"]}


def conllu_text(sentences=SENTENCES) -> str:
    out = []
    for n, (text, words) in enumerate(sentences, 1):
        out += [f"# sent_id = s{n}", f"# text = {text}"]
        for i, (form, lemma, upos) in enumerate(words, 1):
            misc = "SpaceAfter=No" if i == len(words) else "_"
            out.append(f"{i}\t{form}\t{lemma}\t{upos}\t_\t_\t0\tdep\t_\t{misc}")
        out.append(f"{len(words) + 1}\t.\t.\tPUNCT\t_\t_\t0\tpunct\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


@pytest.fixture
def inputs(tmp_path):
    ud = tmp_path / "ud.conllu"
    ud.write_text(conllu_text(), encoding="utf-8")
    morphynet = tmp_path / "deu.derivational.tsv"
    morphynet.write_text("".join("\t".join(r) + "\n" for r in MORPHYNET), encoding="utf-8")
    return ud, morphynet


class Row:
    """A constructed segmenter with a row's interface (``encode_words``): ``split(word) -> pieces`` for every
    word of letters (``▁`` added to the first), other characters as pieces of their own."""

    def __init__(self, split):
        self.split = split

    def encode_words(self, lines):
        out = []
        for line in lines:
            pieces, words = [], []
            for w, word in enumerate(line.split()):
                letters = word.rstrip(".,")
                parts = (self.split(letters) if letters else []) + list(word[len(letters):])
                parts[0] = SP + parts[0]
                pieces += parts
                words += [w] * len(parts)
            out.append((pieces, words))
        return out


def lexemes_whole(word):
    return list(LEXEME.get(word.lower(), GOLD.get(word, [word])))


def characters(word):
    return list(word)


def whole(word):
    return [word]


def score(rows, inputs, **kwargs):
    from preprocess.evaluate.wordmap import read_derivational_verbs

    ud, morphynet = inputs
    return gs.score_rows(rows, read_conllu(str(ud)), read_derivational_verbs(str(morphynet)),
                         resamples=kwargs.pop("resamples", 200), **kwargs)


# --- the measures on constructed segmenters ----------------------------------------------------------------------

def test_keeping_every_lexeme_whole_links_exactly_the_forms_of_a_lemma(inputs):
    r = score({"lexemes": Row(lexemes_whole)}, inputs)
    c = r["rows"]["lexemes"]["consistency"]
    # 9 forms of 4 lemmas: related pairs 3 + 3 + 1 = 7, of 36
    assert (c["longest"]["related_pairs"], c["longest"]["unrelated_pairs"]) == (7, 29)
    assert c["longest"]["recall"] == c["longest"]["precision"] == c["longest"]["f1"] == 1.0
    # 'any' also links the lemmas through their shared ending 'en' / 'te' (two characters): recall 1, precision less
    assert c["any"]["recall"] == 1.0
    assert c["any"]["fp"] > 0 and c["any"]["precision"] < 1.0
    assert r["forms"] == {"verbs": 9, "verbs_without_word": 0, "forms": 9, "scored": 9, "lemmas": 4, "lemmas_with_several_forms": 3}


def test_any_with_a_longer_minimum_is_f1_one_for_the_lexemes(inputs):
    # no ending has three characters: only the lexemes link
    c = score({"lexemes": Row(lexemes_whole)}, inputs, min_length=3)["rows"]["lexemes"]["consistency"]["any"]
    assert c["recall"] == c["precision"] == c["f1"] == 1.0


def test_characters_link_nothing_and_whole_forms_link_no_two_forms(inputs):
    r = score({"characters": Row(characters), "whole": Row(whole)}, inputs)
    for name in ("characters", "whole"):
        for mode in lexeme.SHARE_MODES:
            c = r["rows"][name]["consistency"][mode]
            assert (c["tp"], c["fp"], c["precision"], c["recall"], c["f1"]) == (0, 0, 0.0, 0.0, 0.0), (name, mode)


def test_characters_have_low_precision_on_a_one_character_minimum(inputs):
    c = score({"characters": Row(characters)}, inputs, min_length=1)["rows"]["characters"]["consistency"]["any"]
    assert c["recall"] == 1.0 and c["precision"] < 0.5


def test_boundary_f1_is_one_for_the_gold_segmenter(inputs):
    r = score({"gold": Row(lambda w: list(GOLD.get(w, [w]))), "whole": Row(whole)}, inputs)
    b = r["rows"]["gold"]["boundary"]
    assert (b["precision"], b["recall"], b["f1"], b["n_words"], b["skipped"]) == (1.0, 1.0, 1.0, 4, 0)
    assert r["rows"]["whole"]["boundary"]["recall"] == 0.0
    assert r["morphynet"] == {"entries": 4, "scored_by_every_row": 4}
    d = r["comparisons"]["whole - gold"]["boundary"]["recall"]
    assert d["difference"] == -1.0 and d["low"] == d["high"] == -1.0 and d["excludes_zero"]


def test_the_bootstrap_interval_of_a_row_against_itself_is_zero(inputs):
    r = score({"a": Row(lexemes_whole), "b": Row(lexemes_whole)}, inputs)
    comparison = r["comparisons"]["b - a"]
    for part in [comparison["boundary"], *comparison["consistency"].values()]:
        for key in ("precision", "recall", "f1"):
            assert part[key] == {"difference": 0.0, "low": 0.0, "high": 0.0, "excludes_zero": False}
        assert part["resamples"] == 200 and part["seed"] == 1


def test_the_bootstrap_is_paired_and_seeded():
    counts_a = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [2, 0, 0]], dtype=float)
    counts_b = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 1]], dtype=float)

    def run(seed):
        return lexeme.paired_bootstrap(4, lambda w: lexeme.boundary_scores(counts_a, w),
                                       lambda w: lexeme.boundary_scores(counts_b, w), resamples=300, seed=seed)

    first, again, other = run(1), run(1), run(2)
    assert first == again and first != other
    assert first["f1"]["low"] <= first["f1"]["difference"] <= first["f1"]["high"]


def test_boundary_table_sums_to_morph_evaluate():
    gold = [("befallen", ["be", "fallen"]), ("zahlen", ["zahl", "en"]), ("aufstehen", ["auf", "stehen"])]
    pieces = [[SP + "be", "fall", "en"], [SP + "za", "hlen"], ["xyz"]]
    counts, scored = lexeme.boundary_table(pieces, gold)
    whole = morph.evaluate(lambda w: dict(zip([g[0] for g in gold], pieces))[w], gold, "all")
    assert list(scored) == [True, True, False]
    assert counts.sum(axis=0).tolist() == [whole["hits"], whole["insertions"], whole["deletions"]]
    f1 = lexeme.boundary_scores(counts, np.ones((1, 3)))["f1"][0]
    assert f1 == pytest.approx(whole["f1"])


def test_a_form_keeps_its_most_frequent_segmentation():
    items = lexeme.form_items([("gehen", "geht", ["▁ge", "ht"]), ("gehen", "Geht", ["▁geh", "t"]),
                               ("gehen", "geht", ["▁ge", "ht"]), ("gehen", "gehen", ["▁gehen"])])
    assert [(i.form, i.count, i.pieces, i.segmentations) for i in items] == [
        ("geht", 3, ("▁ge", "ht"), 2), ("gehen", 1, ("▁gehen",), 1)]


def test_share_modes():
    assert lexeme.lexeme_pieces(["▁Spiel", "t", "en"], "any") == {"spiel", "en"}
    assert lexeme.lexeme_pieces(["▁ver", "kauf", "en"], "longest") == {"kauf"}
    assert lexeme.lexeme_pieces(["▁", "a", "b"], "longest") == frozenset()
    with pytest.raises(UserError):
        lexeme.lexeme_pieces(["a"], "some")


def test_a_verb_keeps_the_pieces_of_its_form():
    assert gs.form_pieces("geht.", "geht", [SP + "ge", "ht", "."]) == [SP + "ge", "ht"]
    assert gs.form_pieces("geht.", "geht", [SP + "geht."]) == [SP + "geht."]
    assert gs.form_pieces("geht's", "geht", [SP + "geh", "t", "'", "s"]) == [SP + "geh", "t"]
    # pieces that do not spell the word (a normalising model): all of them
    assert gs.form_pieces("Geht", "Geht", [SP + "geht"]) == [SP + "geht"]


def test_a_sentence_whose_pieces_do_not_align_leaves_its_verbs_out(inputs):
    class Merging(Row):
        def encode_words(self, lines):
            out = super().encode_words(lines)
            return [(p, [0] * len(w)) if "lacht" in line else (p, w) for line, (p, w) in zip(lines, out)]

    r = score({"a": Row(lexemes_whole), "b": Merging(lexemes_whole)}, inputs)
    assert (r["rows"]["b"]["verbs_aligned"], r["rows"]["b"]["verbs_unaligned"]) == (8, 1)
    assert r["forms"]["scored"] == 8   # the forms every row segmented


# --- hostile input -----------------------------------------------------------------------------------------------

def _args(ud, morphynet, lm, out):
    return ["--lm-data", str(lm), "--ud-conllu", str(ud), "--morphynet", str(morphynet), "--output", str(out)]


def test_a_missing_file_is_one_line_and_no_output(inputs, tmp_path, capsys):
    ud, morphynet = inputs
    out = tmp_path / "out.json"
    for args, named in ((_args(tmp_path / "none.conllu", morphynet, tmp_path, out), "--ud-conllu"),
                        (_args(ud, tmp_path / "none.tsv", tmp_path, out), "--morphynet"),
                        (_args(ud, morphynet, tmp_path / "no-row", out), "--lm-data")):
        assert run_main(gs.main, args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:") and named in err[0], err
        assert not out.exists()


def test_a_malformed_conllu_line_is_one_line_naming_it(inputs, tmp_path, capsys):
    _, morphynet = inputs
    bad = tmp_path / "bad.conllu"
    lines = conllu_text().splitlines()
    lines[3] = "\t".join(lines[3].split("\t")[:6])   # a word line of 6 columns
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    assert run_main(gs.main, _args(bad, morphynet, tmp_path, out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:4" in err[0] and "10 tab-separated columns" in err[0], err
    assert not out.exists()


def test_a_morphynet_file_without_verbs_is_one_line(inputs, tmp_path, capsys):
    ud, _ = inputs
    nouns = tmp_path / "nouns.tsv"
    nouns.write_text("Haus\tHäuschen\tN\tN\tchen\tsuffix\n", encoding="utf-8")
    assert run_main(gs.main, _args(ud, nouns, tmp_path, tmp_path / "out.json")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no concatenative verb derivations" in err[0]


# --- end to end on two real rows ---------------------------------------------------------------------------------

@pytest.mark.slow   # two binarize --lm runs (HanTa tagging for Wordmap): about 30 s on a loaded 2-core machine
def test_command_on_a_unigram_and_a_wordmap_row(inputs, tmp_path):
    import gzip

    from train_scripts.binarize import binarize

    raw = tmp_path / "raw"
    raw.mkdir()
    with gzip.open(require_shared("multi30k/train.de.gz"), "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(400)]
    (raw / "train.de").write_text("".join(lines[:360]), encoding="utf-8")
    (raw / "valid.de").write_text("".join(lines[360:]), encoding="utf-8")
    rows = []
    for scheme in ("sentencepiece", "wordmap"):
        binarize({"scheme": scheme, "model_type": "unigram", "vocab_size": 400}, str(raw), str(tmp_path / scheme),
                 "de", None, lm=True)
        rows += ["--lm-data", str(tmp_path / scheme)]
    ud, morphynet = inputs
    out = tmp_path / "gold.json"
    assert run_main(gs.main, [*rows, "--ud-conllu", str(ud), "--morphynet", str(morphynet), "--resamples", "50",
                              "--output", str(out)]) == 0
    r = json.loads(out.read_text(encoding="utf-8"))
    assert list(r["rows"]) == ["sentencepiece", "wordmap"]
    assert [r["rows"][n]["scheme"] for n in r["rows"]] == ["sentencepiece", "wordmap"]
    assert list(r["comparisons"]) == ["wordmap - sentencepiece"]
    for row in r["rows"].values():
        assert set(row["consistency"]) == set(lexeme.SHARE_MODES)
        assert row["verbs_aligned"] == 9 and row["boundary"]["n_gold"] == 4
    assert set(r) >= {"rows", "comparisons", "forms", "morphynet", "share", "bootstrap", "frame", "ud_conllu",
                      "seconds"}
    assert r["bootstrap"] == {"resamples": 50, "seed": 1, "level": 0.95}
