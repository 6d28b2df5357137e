"""The pretraining part's run of the language-model pipeline (``train_scripts/demo/lm/``): its data step and its
own scores.

:class:`PretrainingRun` is the pipeline with this part's corpus (``corpus.py``: the ArXiv titles and/or running
English text) as its data step, and, once every row is pretrained, the frozen-encoder probe of each row with a
Superbizarre control, pseudo-perplexity clean and with inflection noise, the character n-gram floor of every task
and the matched floor of every FLOTA segmentation.
"""
from __future__ import annotations

from train_scripts.demo.lm.pipeline import Pipeline
from train_scripts.demo.pretraining.corpus import LEAKAGE_RULES, prepare_corpus
from train_scripts.demo.pretraining.plan import largest_size, pipeline_settings


class PretrainingRun(Pipeline):
    """The pipeline on this part's settings ``args`` (``part.parse_args``), with its corpus and scores."""

    def __init__(self, args, runner, stages, scheduler):
        super().__init__(pipeline_settings(args), runner, stages, scheduler)
        self.a = args

    def data(self) -> dict:
        a = self.a
        return self.stages.run("lm/data", [self.plan.raw],
                               lambda: prepare_corpus(a.corpus, self.plan.raw, a.lm_words,
                                                      flota_data=a.flota_data, superbizarre=a.superbizarre,
                                                      tasks=tuple(a.tasks)),
                               key={"corpus": [str(c) for c in a.corpus], "words": a.lm_words,
                                    "tasks": list(a.tasks), "leakage_rules": LEAKAGE_RULES})

    def schedule_scores(self, runs: list, pretrained: dict, prepared: dict) -> dict:
        """The probe: every row with a random control, on its largest labelled size's data (one per task, row and
        pretraining run; the random encoders with the first); pseudo-perplexity of each row's first model."""
        a, p, sched = self.a, self.plan, self.scheduler
        probe_runs = {(r["task"], r["row"]): r for r in runs if r["part"] == "superbizarre" and r["init"] == "random"
                      and r["size"] == largest_size(a)}
        probed = {(*key, k): sched.add(lambda r=run, k=k: self.probe(r, a.ft_sizes, a.seeds, k),
                                       [prepared[str(run["data"])], pretrained[(run["row"], k)]])
                  for key, run in probe_runs.items() for k in p.pretrain_seeds()}
        noise = {False: None, True: (a.noise_p, a.noise_seed)}
        pppl = {(row, noisy): sched.add(lambda r=row, n=noisy: self.pseudo_perplexity(r, a.pppl_lines, noise[n]),
                                        [pretrained[(row, 1)]])
                for row in (a.rows if a.pppl_lines else []) for noisy in (False, True)}
        return {"probe": probed, "pppl": pppl}

    def add_scores(self, results: dict, runs: list, prepared: dict, scores: dict) -> dict:
        results["probe"] = [{"task": t, "row": r, "pretrain_seed": k, **f.result()}
                            for (t, r, k), f in scores["probe"].items()]
        pppl = scores["pppl"]
        for rec in results["pretraining"]:
            for noisy in (False, True):   # pseudo-perplexity: the first pretraining run's model
                if (rec["row"], noisy) in pppl and rec.get("pretrain_seed", 1) == 1:
                    rec["pppl_noisy" if noisy else "pppl_clean"] = _pppl_summary(pppl[(rec["row"], noisy)].result())
        results["floor"] = floors(runs)
        results["piece_floor"] = piece_floors(runs)
        return results


def _pppl_summary(r: dict) -> dict:
    keep = ("pppl_per_word", "bits_per_word", "unigram_bits_per_word", "pppl_per_token", "tokens_per_word", "words",
            "tokens", "lines", "scored_lines", "truncated_lines", "unk_tokens", "seconds", "noise")
    return {k: r[k] for k in keep if k in r}


def floors(runs: list) -> list:
    """The character n-gram floor (``train_scripts/ngram_floor.py``) of every (task, labelled size) of the
    Superbizarre runs and of every FLOTA task: the same training, dev and test rows as the runs (for FLOTA also
    the noisy test copy), alpha chosen on dev by the runs' selection metric."""
    from train_scripts.ngram_floor import floor_for_csv

    out, seen = [], set()
    for r in runs:
        key = (r["part"], r["task"], r.get("size"))
        if key in seen or r["encoding"] != "standard":
            continue
        seen.add(key)
        noisy = r["data"] / "raw" / "test1.input0"
        noisy_text = noisy.read_text(encoding="utf-8").splitlines() if noisy.is_file() else None
        f = floor_for_csv(str(r["prefix"]), r.get("train_rows") or 0, r["rows"], r["metric"], noisy_text)
        out.append({"part": r["part"], "task": r["task"], "size": r.get("size"), **f})
    return out


def piece_floors(runs: list) -> list:
    """The matched floor of the FLOTA table (``train_scripts/ngram_floor.py``, :func:`piece_floor_for_data`): the
    Naive Bayes over each segmentation's own pieces (the standard one and every FLOTA mode and k), on the data its
    runs fine-tune on (clean test and the noisy copy), alpha chosen on their dev rows by their metric."""
    from train_scripts.ngram_floor import piece_floor_for_data

    out, seen = [], set()
    for r in runs:
        key = (r["task"], r["encoding"])
        if r["part"] != "flota" or key in seen:
            continue
        seen.add(key)
        f = piece_floor_for_data(str(r["data"]), r["metric"])
        out.append({"part": "flota", "task": r["task"], "encoding": r["encoding"], "mode": r.get("mode"),
                    "k": r.get("k"), **f})
    return out
