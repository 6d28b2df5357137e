"""train_scripts.demo.translation.report (with its tables and plots): the page a reader opens (tables with CIs and marks,
the plain-words paragraph, embedded plots, tables instead of raw JSON), and tolerance of older results.json files."""
from __future__ import annotations

import copy
import html
import json
import re
from html.parser import HTMLParser

import pytest

from train_scripts.demo.translation import plots as report_plots
from train_scripts.demo.translation import report
from train_scripts.demo.translation import tables as report_tables

PNG = "data:image/png;base64,iVBORw0KGgo"   # base64 of the PNG magic


def _s(score, ci, p=None, alpha=0.05):
    return {"score": score, "mean": score - 0.1, "ci": ci, "p_value": p,
            "significant": None if p is None else p < alpha}


def _row(name, label, clean, infl, ws, p_clean=None, p_infl=None, p_ws=None, **kw):
    row = {"name": name, "label": label, "direction": "en-de",
           "tests": {"clean": {"bleu": _s(clean, 1.5, p_clean), "chrf": _s(clean + 20, 1.2, p_clean)},
                     "infl": {"bleu": _s(infl, 1.4, p_infl), "chrf": _s(infl + 20, 1.1, p_infl)},
                     "ws": {"bleu": _s(ws, 1.3, p_ws), "chrf": _s(ws + 20, 1.0, p_ws)}},
           "robustness": {"infl": {"mean": 0.91, "n": 500, "mean_changed": 0.88, "n_changed": 420},
                          "ws": {"mean": 0.72, "n": 500, "mean_changed": 0.71, "n_changed": 480}},
           "boundary": {"precision": 0.41, "recall": 0.75, "f1": 0.53, "mean_pieces": 3.5, "n_words": 31461,
                        "protocol": "paper", "gold": "eng.word.dev.tsv"},
           "src_tok_per_sent": 16.0, "tgt_tok_per_sent": 18.0, "src_tok_per_word": 1.3, "tgt_tok_per_word": 1.5,
           "train_cpu_seconds": 400.0, "num_updates": 250, "final_valid_loss": 6.5,
           "valid_curve": [[50, 9.0], [100, 7.5], [250, 6.5]],
           "examples": [{"raw": "Two dogs run.", "tokens": "▁Two ▁dog s ▁run .", "raw_de": "Zwei Hunde rennen.",
                         "tokens_de": "▁Zwei ▁Hund e ▁renn en ."}]}
    row.update(kw)
    return row


def sample_results() -> dict:
    """A results.json of three rows as the pipeline writes it (numbers made up, significance as compare())."""
    rows = [_row("unigram", "Unigram", 30.0, 25.0, 20.0),
            _row("bite_unigram", "BITE+Unigram", 33.0, 31.0, 19.5, p_clean=0.01, p_infl=0.001, p_ws=0.4,
                 src_tok_per_sent=17.6,
                 extra={"coverage": {"types_bite": 1200, "coverage_bite": 0.9731},
                        "symbol_complexity_lambda2": [1.5, 2.25]}),
            _row("flota", "FLOTA k=3", 26.0, 22.0, 19.0, p_clean=0.02, p_infl=0.2, p_ws=0.6)]
    meta = {"dataset": "Multi30k En->De", "summary": "3 rows.", "preset": "cpu", "baseline": "unigram",
            "max_update": 250,
            "noise": {"fraction": 0.3, "seed": 1, "files": {"infl": "test.infl.en", "ws": "test.ws.en"},
                      "stats": {"infl": {"candidates": 100, "changed": 31, "changed_share": 0.31,
                                         "changed_lines": 40, "lines": 50},
                                "ws": {"candidates": 200, "changed": 58, "changed_share": 0.29}}},
            "significance": {"test": "bs", "test_name": "paired bootstrap resampling", "n_samples": 1000,
                             "alpha": 0.05, "n_sentences": 500,
                             "signatures": {"bleu": "nrefs:1|bs:1000|seed:12345", "chrf": "nrefs:1|bs:1000"}},
            "versions": report.package_versions(), "commands": ["python -m train_scripts.demo.main"]}
    return {"meta": meta, "schemes": rows}


@pytest.fixture
def results():
    return sample_results()


class _Cells(HTMLParser):
    """Collects (tag, attributes, text) of every td/th."""

    def __init__(self):
        super().__init__()
        self.cells, self._cur = [], None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th"):
            self._cur = [tag, dict(attrs), ""]

    def handle_data(self, data):
        if self._cur is not None:
            self._cur[2] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cur is not None:
            self.cells.append(tuple(self._cur))
            self._cur = None


def test_page_items(results, tmp_path):
    paths = report.write_report(results, str(tmp_path))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    md = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    # self-contained: every image is embedded, one per plot (BLEU+CI, boundary, similarity, curves, lengths)
    srcs = re.findall(r'src="([^"]*)"', page)
    assert len(srcs) == len(paths["plots"]) == 5 and all(s.startswith(PNG) for s in srcs)
    # the first paragraph after the title says what can and cannot be concluded
    first = html.unescape(re.search(r"</h1>\s*<p[^>]*>(.*?)</p>", page, re.S).group(1))
    assert first.startswith("What this run can conclude") and "It cannot conclude whether" in first
    assert "BITE+Unigram scores significantly higher BLEU on the clean and inflection noise test sets" in first
    assert "FLOTA k=3 scores significantly lower BLEU on the clean test set" in first
    assert "With 6 tests uncorrected for multiple comparisons, about 0.3" in first
    assert "preset cpu" in first        # the budget caveat names the preset
    # CI and marks: BITE higher on clean and inflection noise, FLOTA lower on clean, the baseline unmarked
    assert "| BITE+Unigram | 33.0 ± 1.5▲ | 31.0 ± 1.4▲ (-2.0) | 19.5 ± 1.3 (-13.5) |" in md
    assert "| FLOTA k=3 | 26.0 ± 1.5▼ | 22.0 ± 1.4 (-4.0) | 19.0 ± 1.3 (-7.0) |" in md
    assert "| Unigram | 30.0 ± 1.5 | 25.0 ± 1.4 (-5.0) | 20.0 ± 1.3 (-10.0) |" in md
    # intrinsic: BITE's length increase over the baseline (Figure 8 measure), boundary P and F1, CPU timing
    assert "+10.0%" in md and "41.0" in md and "53.0" in md
    cells = _Cells()
    cells.feed(page)
    texts = [c[2] for c in cells.cells]
    assert "updates per CPU s" in texts and "0.62" in texts and "train s (wall)" not in texts
    # scheme-specific metrics are tables, not JSON in a code block
    assert "<pre>{" not in page and "```json" not in md
    assert ("td", {"class": "l"}, "coverage / coverage_bite") in cells.cells and "0.9731" in texts
    # example rows show the target side, token cells left-aligned
    assert ("td", {"class": "l"}, "▁Zwei ▁Hund e ▁renn en .") in cells.cells
    assert ("td", {"class": "l"}, "▁Two ▁dog s ▁run .") in cells.cells
    assert "Zwei Hunde rennen." in page
    # the preset, noise files and counts, significance settings, HanTa's version
    assert "Preset: cpu" in md and "test.infl.en" in md and "31 of 100 inflectable words re-inflected" in md
    assert "paired bootstrap resampling against Unigram" in md
    assert re.search(r"- HanTa: `\d+\.\d+", md)


def test_first_paragraph_without_significant_results(results, tmp_path):
    for r in results["schemes"][1:]:
        for test in r["tests"].values():
            for s in test.values():
                s.update(p_value=0.5, significant=False)
    report.write_report(results, str(tmp_path))
    first = (tmp_path / "REPORT.md").read_text(encoding="utf-8").split("\n\n")[1]
    # the policy's word for a non-significant difference: "not shown", not "differs" / "no difference"
    assert first.startswith("What this run can conclude: no scheme's BLEU difference from the baseline Unigram is "
                            "shown on any test set")
    table = (tmp_path / "REPORT.md").read_text(encoding="utf-8").split("## Translation quality")[1].split("Each cell")[0]
    assert "▲" not in table and "▼" not in table and "33.0 ± 1.5 |" in table


def test_older_results_still_render(results, tmp_path):
    old = copy.deepcopy(results)
    old["meta"] = {"dataset": "Multi30k", "summary": "old", "versions": {"python": "3.11"}}
    for r in old["schemes"]:
        r["bleu"], r["chrf"] = r["tests"]["clean"]["bleu"]["score"], r["tests"]["clean"]["chrf"]["score"]
        r["train_seconds"] = 120.0
        for k in ("tests", "robustness", "train_cpu_seconds", "num_updates"):
            del r[k]
        del r["boundary"]["protocol"]
        r["bleu_signature"] = "nrefs:1|case:mixed"
    paths = report.write_report(old, str(tmp_path))
    md = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert "| Unigram | 30.0 |" in md and "train s (wall)" in md and "120" in md
    assert "What this run can conclude: little. No paired significance test" in md
    assert "protocol not recorded" in md
    assert "`nrefs:1|case:mixed`" in md
    assert len(paths["plots"]) == 4            # no similarity plot without robustness rows
    empty = report.write_report({"schemes": []}, str(tmp_path / "empty"))
    assert empty["plots"] == [] and "cannot compare" in (tmp_path / "empty" / "REPORT.md").read_text()


def test_plots_are_drawn_from_the_numbers(results, tmp_path):
    """The BLEU plot's whiskers span sacreBLEU's interval around the bootstrap mean."""
    import matplotlib.pyplot as plt

    drawn = {}
    real_bar = plt.Axes.bar

    def spy(self, x, height, width, **kw):
        drawn[kw.get("label")] = (list(height), kw.get("yerr"))
        return real_bar(self, x, height, width, **kw)

    plt.Axes.bar = spy
    try:
        report_plots.plot_bleu(results["schemes"], str(tmp_path / "b.png"))
    finally:
        plt.Axes.bar = real_bar
    heights, (low, high) = drawn["inflection noise"]
    assert heights == [25.0, 31.0, 22.0]
    # score 31.0, mean 30.9, ci 1.4: from 29.5 to 32.3
    assert low[1] == pytest.approx(1.5) and high[1] == pytest.approx(1.3)


def _with_budget_and_wordmap(results):
    """The sample rows with what the pipeline now records: the budget each row saw (BITE: 40% fewer sentence
    pairs under the same updates, its source 25% longer; FLOTA: the baseline's budget and lengths), FLOTA's
    boundary row scored by covered characters, and a Wordmap row scored on German verbs."""
    budget = {"updates": 2000, "sentences": 300000, "tgt_tokens": 4_200_000, "src_tokens_est": 3_900_000,
              "epochs": 30.0, "train_pairs": 10000}
    rows = {r["name"]: r for r in results["schemes"]}
    rows["unigram"]["budget"] = dict(budget)
    rows["bite_unigram"]["budget"] = {**budget, "sentences": 180000, "epochs": 18.0}
    rows["bite_unigram"]["src_tok_per_sent"] = 20.0
    rows["flota"]["budget"] = {**budget, "sentences": 290000}
    rows["flota"]["boundary"] = {"precision": 0.52, "recall": 0.31, "f1": 0.39, "mean_pieces": 1.6,
                                 "n_words": 31400, "skipped": 61, "n_gold": 31461, "spelled": 6333,
                                 "coverage": 0.87, "protocol": "paper", "gold": "eng.word.dev.tsv"}
    for name in ("unigram", "bite_unigram"):
        rows[name]["boundary"].update(skipped=0, n_gold=31461, spelled=31461, coverage=1.0)
    results["schemes"].append(_row("wordmap", "Wordmap", 29.0, 24.0, 19.0, p_clean=0.3, p_infl=0.4, p_ws=0.5,
                                   budget=dict(budget),
                                   boundary={"precision": 0.8, "recall": 0.7, "f1": 0.75, "mean_pieces": 2.1,
                                             "n_words": 950, "skipped": 3, "n_gold": 953, "spelled": 950,
                                             "coverage": 1.0, "protocol": "all",
                                             "gold": "German derivational verbs"}))
    return results


def test_budget_and_the_kind_of_each_significant_difference(results, tmp_path):
    report.write_report(_with_budget_and_wordmap(results), str(tmp_path))
    md = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    first = md.split("\n\n")[1]
    assert ("BITE+Unigram: can be a sequence-length effect as much as a quality one (it saw 40% fewer sentence "
            "pairs and its source is 25% longer than Unigram's under the same number of updates)") in first
    assert "FLOTA k=3: a quality difference at this budget" in first
    assert "Wordmap:" not in first          # not significant: no kind to tell
    budget = md.split("## Training budget")[1].split("\n\n")[1]
    assert "| BITE+Unigram | 2,000 | 180,000 | -40.0% | 18.0 | 4,200,000 | 3,900,000 |" in budget
    assert "| Unigram | 2,000 | 300,000 | +0.0% | 30.0 |" in budget


def test_boundary_rows_on_the_same_words_and_other_gold_apart(results, tmp_path):
    import matplotlib.pyplot as plt

    results = _with_budget_and_wordmap(results)
    drawn = []
    real_bar = plt.Axes.bar

    def spy(self, x, height, width, **kw):
        drawn.append((kw.get("label"), list(height)))
        return real_bar(self, x, height, width, **kw)

    plt.Axes.bar = spy
    try:
        report.write_report(results, str(tmp_path))
    finally:
        plt.Axes.bar = real_bar
    md = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    english = md.split("## Morph boundaries on eng.word.dev.tsv")[1].split("## ")[0]
    assert "| FLOTA k=3 | 31,461 | 31,400 | 61 | 6,333 | 87.0% | 52.0 | 31.0 | 39.0 |" in english
    assert "| Unigram | 31,461 | 31,461 | 0 | 31,461 | 100.0% | 41.0 |" in english
    assert "Wordmap" not in english and "edges of the characters its pieces cover" in english
    other = md.split("## Morph boundaries on German derivational verbs (different gold")[1].split("## ")[0]
    assert "| Wordmap | 953 | 950 | 3 |" in other and "all concatenative gold words" in other
    assert "protocol not recorded" not in md
    # the boundary chart holds the English rows only (precision bars: Unigram, BITE, FLOTA), Wordmap stays out
    assert ("precision", [41.0, 41.0, 52.0]) in drawn
    assert "Not in this chart (other gold, see the tables): Wordmap (German derivational verbs)" in md


def test_tokeniser_scores_per_row(results, tmp_path):
    """The field's intrinsic scores: each row's Rényi efficiency, fertility and pieces per word, as the
    pipeline computes them from the row's test encodings, shown per row; rows without them get a dash."""
    from train_scripts.demo.translation.rows import tokenizer_scores

    raw = {"test.en": ["Two dogs run .", "A man walks ."], "test.de": ["Zwei Hunde rennen .", "Ein Mann geht ."]}
    tok = {"en": ["▁Two ▁dog s ▁run ▁.", "▁A ▁man ▁walk s ▁."],
           "de": ["▁Zwei ▁Hund e ▁renn en ▁.", "▁Ein ▁Mann ▁geht ▁."]}
    scores = tokenizer_scores(tok, raw)
    assert scores["src"]["fertility"] == 10 / 8 and scores["tgt"]["fertility"] == 10 / 8
    assert 0 < scores["src"]["renyi_efficiency"] <= 1
    results["schemes"][0]["tokenizer_scores"] = scores
    report.write_report(results, str(tmp_path))
    md = (tmp_path / "REPORT.md").read_text(encoding="utf-8")
    assert "## Tokeniser scores" in md
    section = md.split("## Tokeniser scores", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in section.splitlines() if line.startswith("| Unigram |"))
    assert f"{scores['src']['renyi_efficiency']:.3f}" in row and "1.25" in row
    flota = next(line for line in section.splitlines() if line.startswith("| FLOTA k=3 |"))
    assert flota.count(report_tables.DASH) == 6


def test_a_report_table_is_one_function_and_one_entry(tmp_path, monkeypatch):
    """A toy section added to the translation part's list shows in REPORT.md, report.html and the demo's report."""
    from train_scripts.demo import demo_report
    from train_scripts.demo.report_document import Para, Section, Table

    def toy(context):
        n = len(context.rows)
        return [Section("Toy section", [Table([["row", "rows seen"], ["toy", f"{n}"]]), Para("A `toy` note.")])]

    monkeypatch.setattr(report, "SECTIONS", report.SECTIONS + [toy])
    results = sample_results()
    n = len(results["schemes"])
    for outdir in (tmp_path / "alone", tmp_path / "demo"):
        outdir.mkdir()
        if outdir.name == "alone":
            paths = report.write_report(results, str(outdir))
        else:
            (outdir / "results.json").write_text(json.dumps(results))
            paths = demo_report.write(str(outdir))
        md = open(paths["markdown"], encoding="utf-8").read()
        page = open(paths["html"], encoding="utf-8").read()
        assert f"## Toy section\n\n| row | rows seen |\n|---|---:|\n| toy | {n} |\n\nA `toy` note." in md
        assert md.index("## Toy section") < md.index("## Versions")      # the run's provenance stays last
        assert "<h2>Toy section</h2>" in page and f'<td class="l">toy</td><td>{n}</td>' in page
        assert "<p>A <code>toy</code> note.</p>" in page
