"""morphtok-prepare-wikipedia on a small MediaWiki dump made here (the real export layout: namespaced XML,
<siteinfo> with namespaces, a redirect, pages outside the article namespace, templates, links, references, tables,
lists, formulas): the text, the blank lines between articles, what is skipped, the seeded split, workers,
--max-articles, the length filter, one-line errors for bad dumps and no partial output after Ctrl-C."""
from __future__ import annotations

import bz2
import json
import os
import signal
import subprocess
import sys
import time
from xml.sax.saxutils import escape

import pytest

from tests.conftest import cli_env
from train_scripts.prepare_wikipedia import in_valid, wikitext_to_paragraphs

SCHEMA = "http://www.mediawiki.org/xml/export-0.11/"
HEADER = f"""<mediawiki xmlns="{SCHEMA}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="{SCHEMA} http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.42.0-wmf.5</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Media</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
FOOTER = "</mediawiki>\n"

EINSTEIN = """{{Short description|German-born physicist (1879–1955)}}
{{Infobox scientist
| name = Albert Einstein
| birth_date = {{birth date|df=y|1879|3|14}}
}}
'''Albert Einstein''' ({{IPA-de|ˈalbɛɐ̯t ˈʔaɪnʃtaɪn|lang}}; 14 March 1879 – 18 April 1955) was a \
[[Germany|German]]-born [[theoretical physicist]].<ref name="bio">{{cite web |url=https://example.org |title=Bio}}\
</ref> He developed the [[theory of relativity]].<ref>Some book, p. 3.</ref>

[[File:Einstein 1921 by F Schmutzer.jpg|thumb|Einstein in 1921. A caption sentence.]]
== Life ==
Einstein was born in [[Ulm]], in the [[Kingdom of Württemberg]]. In 1921 Dr. Jones met him in the U.S., \
e.g. in [[Princeton, New Jersey|Princeton]].<!-- a hidden comment --><br />He liked ''music'' and \
the&nbsp;violin &amp; piano.

{| class="wikitable"
|-
! Year !! Prize
|-
| 1921 || [[Nobel Prize in Physics]]
|}
* A list item that is not prose.
# A numbered item.
His formula <math>E = mc^2</math> is famous. It changed physics.
=== References ===
{{Reflist}}
[[Category:German physicists]]
[[de:Albert Einstein]]
"""
EINSTEIN_SENTENCES = [
    "Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist.",
    "He developed the theory of relativity.",
    "Einstein was born in Ulm, in the Kingdom of Württemberg.",
    "In 1921 Dr. Jones met him in the U.S., e.g. in Princeton.",
    "He liked music and the violin & piano.",
    "It changed physics.",
]

ULM = """'''Ulm''' is a city in [[Baden-Württemberg]], [[Germany]].<ref>{{cite book|title=X}}</ref> It lies on \
the [[Danube|River Danube]] and has about 126,000 inhabitants.

== History ==
The city was founded around 850.{{citation needed|date=May 2020}} Its minster has the world's tallest church \
steeple ([[List of tallest churches|161.5 m]]).
"""
ULM_SENTENCES = [
    "Ulm is a city in Baden-Württemberg, Germany.",
    "It lies on the River Danube and has about 126,000 inhabitants.",
    "The city was founded around 850.",
    "Its minster has the world's tallest church steeple (161.5 m).",
]

VIOLIN = """{{Other uses}}
The '''violin''' is a wooden [[string instrument]]. It has four strings tuned in perfect fifths!
"""
VIOLIN_SENTENCES = ["The violin is a wooden string instrument.", "It has four strings tuned in perfect fifths!"]

ONLY_MARKUP = """{{Infobox settlement|name=Nowhere}}
{| class="wikitable"
| Only a table here
|}
[[Category:Stubs]]
"""

PAGES = [  # (title, ns, redirect target, text)
    ("Albert Einstein", 0, None, EINSTEIN),
    ("Einstein", 0, "Albert Einstein", "#REDIRECT [[Albert Einstein]]\n\n{{R from surname}}"),
    ("Talk:Ulm", 1, None, "This talk page sentence must not appear."),
    ("Ulm", 0, None, ULM),
    ("Template:Infobox scientist", 10, None, "This template sentence must not appear."),
    ("Nowhere", 0, None, ONLY_MARKUP),
    ("Violin", 0, None, VIOLIN),
    ("Fiddle", 0, None, "#redirect [[Violin]]"),   # a redirect without <redirect/>, lower case
]
ARTICLES = {"Albert Einstein": EINSTEIN_SENTENCES, "Ulm": ULM_SENTENCES, "Violin": VIOLIN_SENTENCES}


def page_xml(k: int, title: str, ns: int, redirect: str | None, text: str) -> str:
    redirect_xml = f'    <redirect title="{escape(redirect)}" />\n' if redirect else ""
    return f"""  <page>
    <title>{escape(title)}</title>
    <ns>{ns}</ns>
    <id>{k + 1}</id>
{redirect_xml}    <revision>
      <id>{1000 + k}</id>
      <parentid>{999 + k}</parentid>
      <timestamp>2024-01-01T00:00:00Z</timestamp>
      <contributor><username>Someone</username><id>7</id></contributor>
      <comment>an edit</comment>
      <model>wikitext</model>
      <format>text/x-wiki</format>
      <text bytes="{len(text.encode())}" xml:space="preserve">{escape(text)}</text>
      <sha1>0000000000000000000000000000000</sha1>
    </revision>
  </page>
"""


def dump_xml(pages=PAGES) -> str:
    return HEADER + "".join(page_xml(k, *p) for k, p in enumerate(pages)) + FOOTER


@pytest.fixture
def dump(tmp_path):
    path = tmp_path / "dumps" / "enwiki-20240101-pages-articles-multistream.xml.bz2"
    path.parent.mkdir()
    path.write_bytes(bz2.compress(dump_xml().encode("utf-8")))
    return path


def run(*args, check=True, **kwargs):
    proc = subprocess.run(["morphtok-prepare-wikipedia", *map(str, args)], capture_output=True, text=True,
                          env=cli_env(), **kwargs)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def documents(path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n") and not text.startswith("\n")
    return [block.split("\n") for block in text[:-1].split("\n\n")]


def a_seed_that_splits(titles, fraction=0.5) -> int:
    return next(s for s in range(1000) if 0 < sum(in_valid(t, s, fraction) for t in titles) < len(titles))


def test_dump_to_train_and_valid(dump, tmp_path):
    seed = a_seed_that_splits(list(ARTICLES))
    out = tmp_path / "wiki"
    proc = run("--dump", dump, "--out", out, "--valid-fraction", 0.5, "--seed", seed)
    assert proc.stderr.count("\n") == 1 and "3 articles" not in proc.stderr  # one summary line
    expected = {"train": [], "valid": []}
    for title, sentences in ARTICLES.items():   # the dump's order within each split
        expected["valid" if in_valid(title, seed, 0.5) else "train"].append(sentences)
    assert expected["train"] and expected["valid"]
    for split in ("train", "valid"):
        assert documents(out / f"{split}.en") == expected[split]
    text = (out / "train.en").read_text() + (out / "valid.en").read_text()
    for absent in ("must not appear", "REDIRECT", "redirect", "Infobox", "caption", "list item", "numbered",
                   "Prize", "formula", "Category", "{", "}", "[", "|", "<", "&nbsp;", "&amp;", "''", "=="):
        assert absent not in text
    info = json.loads((out / "prepare.json").read_text())
    assert info["pages"] == 8 and info["articles"] == 4 and info["redirects"] == 2
    assert info["other_namespaces"] == 2 and info["empty_articles"] == 1
    assert info["documents"] == {s: len(expected[s]) for s in expected}
    assert info["sentences"]["train"] + info["sentences"]["valid"] == sum(map(len, ARTICLES.values()))
    assert sorted(os.listdir(out)) == ["prepare.json", "train.en", "valid.en"]

    # the same split from a folder of dumps, with two workers; another seed can move articles
    again = tmp_path / "again"
    run("--dump", dump.parent, "--out", again, "--valid-fraction", 0.5, "--seed", seed, "--workers", 2, "--quiet")
    for name in ("train.en", "valid.en"):
        assert (again / name).read_text() == (out / name).read_text()


def test_max_articles_keeps_each_articles_split(dump, tmp_path):
    # the first two articles: Einstein and Ulm (Nowhere, the third, has no text); a split with both sides
    seed = next(s for s in range(1000) if in_valid("Albert Einstein", s, 0.5) != in_valid("Ulm", s, 0.5))
    out = tmp_path / "two"
    run("--dump", dump, "--out", out, "--valid-fraction", 0.5, "--seed", seed, "--max-articles", 2, "--quiet")
    got = documents(out / "train.en") + documents(out / "valid.en")
    assert sorted(got) == sorted([EINSTEIN_SENTENCES, ULM_SENTENCES])
    valid = documents(out / "valid.en")
    assert valid == [EINSTEIN_SENTENCES if in_valid("Albert Einstein", seed, 0.5) else ULM_SENTENCES]
    assert json.loads((out / "prepare.json").read_text())["articles"] == 2


def test_length_filter_with_the_papers_models(dump, tmp_path, shared_path):
    model = shared_path("space_models/unigram_prime.model")
    seed = a_seed_that_splits(list(ARTICLES))
    out = tmp_path / "filtered"
    run("--dump", dump, "--out", out, "--valid-fraction", 0.5, "--seed", seed, "--filter-model", model,
        "--max-tokens", 12, "--quiet")
    from preprocess.schemes.spaces import SpacesEncoder

    enc = SpacesEncoder(str(model), "keep")
    kept = [s for block in documents(out / "train.en") + documents(out / "valid.en") for s in block]
    everything = [s for sentences in ARTICLES.values() for s in sentences]
    assert sorted(kept) == sorted(s for s in everything if len(enc.encode(s).split()) <= 12)
    assert 0 < len(kept) < len(everything)
    info = json.loads((out / "prepare.json").read_text())
    assert info["filtered_sentences"] == len(everything) - len(kept) and info["max_tokens"] == 12


def test_wikitext_details():
    assert wikitext_to_paragraphs("A [[:Category:Foo|category link]] and [[Star Wars: Episode IV|a film]] here.") == [
        "A and a film here."]
    assert wikitext_to_paragraphs("Text [[fr:Texte]] [[Image:x.png|thumb|Caption.]] more.<sup>2</sup>") == [
        "Text more.2"]
    assert wikitext_to_paragraphs("== Only a heading ==\n; Term\n: definition\n__NOTOC__") == []


@pytest.mark.parametrize("content", [b"", b"BZh91AY&SYgarbage" * 4, b"<html><body>not a dump</body></html>",
                                     "truncated", "no pages"])
def test_bad_dumps_are_one_line(content, dump, tmp_path):
    bad = tmp_path / "bad.xml.bz2"
    if content == "truncated":
        data = dump.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif content == "no pages":
        bad.write_bytes(bz2.compress((HEADER + FOOTER).encode()))
    else:
        bad.write_bytes(content)
    out = tmp_path / "out"
    proc = run("--dump", bad, "--out", out, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert str(bad) in proc.stderr
    assert not out.exists() or os.listdir(out) == []


def test_missing_dump_and_too_small_split(dump, tmp_path):
    proc = run("--dump", tmp_path / "nope.xml.bz2", "--out", tmp_path / "o", check=False)
    assert proc.returncode == 2 and "dumps.wikimedia.org" in proc.stderr and proc.stderr.count("\n") == 1
    proc = run("--dump", dump, "--out", tmp_path / "o", "--valid-fraction", 1e-9, check=False)
    assert proc.returncode == 2 and "valid split" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists() or os.listdir(tmp_path / "o") == []


def test_ctrl_c_leaves_no_partial_output(tmp_path):
    """The dump comes through a pipe as a multistream bz2 whose second stream never arrives: the command has
    written two articles to its temporary files and waits; Ctrl-C then leaves nothing behind."""
    fifo, out = tmp_path / "dump.xml.bz2", tmp_path / "out"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "train_scripts.prepare_wikipedia", "--dump", str(fifo),
                             "--out", str(out), "--valid-fraction", "0.5"], stderr=subprocess.PIPE, text=True,
                            env=cli_env())
    with open(fifo, "wb") as writer:
        writer.write(bz2.compress((HEADER + page_xml(0, *PAGES[0]) + page_xml(3, *PAGES[3])).encode()))
        writer.flush()
        deadline = time.monotonic() + 30
        while not (out.exists() and len(os.listdir(out)) == 3) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert out.exists() and len(os.listdir(out)) == 3   # the three temporary files
        time.sleep(0.5)   # let it read what was sent
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "error: interrupted\n"
    assert os.listdir(out) == []
