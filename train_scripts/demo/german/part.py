"""The German part of ``make demo``: Wordmap's own question (Jung 2023, sections 3.2.3 and 4), asked on real German.

The thesis built Wordmap to test two hypotheses with a German masked language model: **HYP1**, a tokenisation with
a part-of-speech overhead for verbs improves a model fine-tuned for sequence classification; **HYP2**, separating
lexemic from functional morphs gives better lexemic tokens.  This part pretrains a small RoBERTa per row (Unigram,
the baseline, and Wordmap) on the same German text with the same budget and seeds, and measures:

* **the verbs** (the thesis's target): pseudo-perplexity per word on UD German GSD test, over all words and over the
  gold VERB/AUX words; a frozen-encoder probe of the verb features (VerbForm, Tense, Person, Number, Mood; trained
  on UD dev, scored on UD test) and a lexeme probe (HYP2: how often a verb form's nearest other verb form, by the
  encoder's word state, shares its gold lemma), both beside random encoders of the same architecture;
* **classification** (HYP1): GermEval 2018 coarse (OFFENSE/OTHER), the official F1, a dev split of the training
  tweets, N seeds per row and a random-init control, the character n-gram Naive Bayes floor beside every row,
  Wordmap against Unigram with Holm's correction over the part's tests.

The corpus and its leakage rules: ``train_scripts/prepare_german.py``.  The steps are the shared language-model
pipeline's (``train_scripts/demo/lm/``: binarize --lm, pretrain_roberta.sh, finetune_classification.sh) on German,
with the part's data step and verb measures (``steps.py``); presets, rows and the GermEval task: ``plan.py``; the
report: ``report.py``.

    morphtok-demo --part german --output demo-output [--de-preset cpu|fast|gpu] [--de-seeds 5] [--dry-run]
"""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from preprocess.common import SHARED_DATA, UserError
from train_scripts.demo.german.plan import BASELINE, PRESET_HELP, PRESET_KEYS, PRESETS, ROWS, Paths, flag, plan_of
from train_scripts.demo.part import Context, Part
from train_scripts.demo.preflight import refuse_overlap
from train_scripts.demo.presets import add_preset_options, apply_preset

#: where each input comes from (docs/data.md)
SOURCES = {
    "--de-germeval": "GermEval 2018: github.com/uds-lsv/GermEval-2018-Data (germeval2018.{training,test}.txt)",
    "--de-ud": "UD German GSD: github.com/UniversalDependencies/UD_German-GSD (de_gsd-ud-{dev,test}.conllu)",
    "--de-multi30k": "Multi30k: github.com/multi30k/dataset data/task1/raw (train.de, val.de, test_2016_flickr.de)",
}


class GermanPart(Part):
    name = "german"
    preset_flag = "--de-preset"
    #: measured: the fast run's folder 11 MB, the cpu run's (see FIGURES' record); the gpu preset's RoBERTa-base
    #: checkpoints about 1.5 GB each
    disk = {"cpu": 150e6, "fast": 30e6, "gpu": 12e9}
    #: its inputs in the shared data folder (``--shared-data``; docs/data.md)
    shared_inputs = {"--de-germeval": "german/germeval2018", "--de-ud": "german/ud_german_gsd",
                     "--de-multi30k": "multi30k"}
    title = "Wordmap against Unigram on German: verbs (pseudo-perplexity, probes) and GermEval 2018; options --de-*"

    def add_options(self, ap) -> None:
        ap.add_argument("--de-preset", default="cpu", choices=list(PRESETS),
                        help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items())
                        .replace("%", "%%"))
        ap.add_argument("--de-germeval", type=Path, default=SHARED_DATA / "german" / "germeval2018",
                        help="folder of germeval2018.{training,test}.txt")
        ap.add_argument("--de-ud", type=Path, default=SHARED_DATA / "german" / "ud_german_gsd",
                        help="folder of de_gsd-ud-{dev,test}.conllu")
        ap.add_argument("--de-multi30k", type=Path, default=SHARED_DATA / "multi30k",
                        help="Multi30k folder (its German side: train.de in the corpus; val/test held out)")
        add_preset_options(ap, PRESETS, PRESET_KEYS, "", PRESET_HELP, flag, group=ap)

    def settings(self, options: argparse.Namespace) -> argparse.Namespace:
        preset = PRESETS[options.de_preset]
        a = argparse.Namespace(output=options.output.resolve(), dry_run=options.dry_run, preset=options.de_preset,
                               device=preset["device"], model=[str(x) for x in preset["model"]],
                               germeval=options.de_germeval, ud=options.de_ud, multi30k=options.de_multi30k,
                               rows=list(ROWS), baseline=BASELINE)
        apply_preset(options, preset, PRESET_KEYS, into=a, flag=flag)
        a.preset_overrides = {k: getattr(a, k) for k in PRESET_KEYS if getattr(a, k) != preset[k]}
        a.ud_files = {split: a.ud / name for split, name in (("dev", "de_gsd-ud-dev.conllu"),
                                                              ("test", "de_gsd-ud-test.conllu"))}
        if a.seeds < 1 or a.probe_seeds < 1:
            raise UserError("--de-seeds and --de-probe-seeds must be at least 1")
        folder = a.output / self.name
        if folder.is_file():
            raise UserError(f"--output {a.output}: {folder} is a file, not a folder")
        refuse_overlap((("--de-germeval", a.germeval), ("--de-ud", a.ud), ("--de-multi30k", a.multi30k)), folder)
        if not a.dry_run:
            missing = self.missing(a)
            if missing:
                raise UserError(missing)
        return a

    def check_inputs(self, a) -> None:
        """Every input read whole by its stage's reader (``inputs.py``): one line naming the option, file and line."""
        from train_scripts.demo.german.inputs import check

        check(a.germeval, a.ud, a.multi30k)

    @staticmethod
    def missing(a) -> str | None:
        """The inputs that are not there, as one sentence, or None."""
        needed = [("--de-germeval", a.germeval / f) for f in ("germeval2018.training.txt", "germeval2018.test.txt")]
        needed += [("--de-ud", p) for p in a.ud_files.values()]
        needed += [("--de-multi30k", a.multi30k / "train.de")]
        gone = {}
        for option, path in needed:
            if not (path.exists() or path.with_name(path.name + ".gz").exists()):
                gone.setdefault(option, path if path.parent.exists() else path.parent)
        if not gone:
            return None
        return ("the german part's input is missing: "
                + "; ".join(f"{path} ({option}; {SOURCES[option]})" for option, path in gone.items())
                + ". Put it there (docs/data.md) or pass the option with your copy; --part translation pretraining "
                  "runs without it")

    def stage_costs(self, args) -> list:
        from train_scripts.demo.estimate import costs_from
        from train_scripts.demo.german.plan import FIGURES

        plan = plan_of(args)
        stages = [("lm/data", "data")] + [(f"lm/{row}/binarize", f"binarize/{row}") for row in args.rows]
        stages += [(f"lm/{row}/pretrain", f"pretrain/{row}") for row in args.rows]
        runs = plan.finetune_runs()
        stages += [(p, "prepare") for p in dict.fromkeys(r["prep"] for r in runs)]
        stages += [(r["name"], "finetune") for r in runs]
        stages += [(f"pppl/{row}/ud", "pppl") for row in args.rows] + [(f"verbs/{row}", "verbs") for row in args.rows]
        return costs_from(stages + [("floor", "floor")], FIGURES.get(args.preset))

    def plan(self, args) -> list:
        plan, paths = plan_of(args), Paths(args.output / self.name)
        lines = [f"# preset {args.preset}: rows {', '.join(args.rows)}",
                 f"python -m train_scripts.prepare_german corpus --out {paths.raw}",
                 f"python -m train_scripts.prepare_german germeval --out {paths.germeval}",
                 f"python -m train_scripts.prepare_german ud --out {paths.ud}"]
        for row in args.rows:
            lines.append(" ".join(shlex.quote(str(x)) for x in plan.binarize_command(row)))
            lines.append(" ".join(shlex.quote(str(x)) for x in plan.pretrain_command(row)))
        runs = plan.finetune_runs()
        lines.append(f"# {len(runs)} GermEval fine-tuning runs, e.g.:")
        seen = set()
        for run in runs:
            if run["init"] not in seen:
                seen.add(run["init"])
                lines.append(" ".join(shlex.quote(str(x)) for x in plan.finetune_command(run)))
        lines.append(f"# per row: pseudo-perplexity on {paths.ud / 'ud_test.de'} (all words and verbs), the verb "
                     f"probes (train_scripts.verb_probe, {args.probe_seeds} random encoders)")
        return lines

    def run(self, args, ctx: Context) -> dict:
        from train_scripts.demo.german import report
        from train_scripts.demo.german.steps import GermanRun

        results = GermanRun(args, ctx.runner, ctx.stages, ctx.scheduler).run_all()
        results["meta"] = {"settings": settings(args), "skipped_stages": len(ctx.stages.skipped),
                           "ran_stages": len(ctx.stages.ran)}
        results["analysis"] = report.analyse(results)
        return results

    def refresh(self, results: dict, folder: str) -> dict:
        from train_scripts.demo.german import report

        results["analysis"] = report.analyse(results)
        return results

    def sections(self, results: dict, folder: str, relative: str = "") -> list:
        from train_scripts.demo.german import report

        return report.sections(results, folder)

    def provenance(self, results: dict) -> dict:
        meta = results.get("meta") or {}
        return {"versions": meta.get("versions") or {}, "commands": [meta["command"]] if meta.get("command") else []}


def settings(a) -> dict:
    """What the report states about this run's settings."""
    keep = ("preset", "device", "model", "rows", "baseline", "jobs", "threads", "preset_overrides", *PRESET_KEYS)
    return {k: getattr(a, k) for k in keep} | {"note": PRESETS[a.preset]["note"],
                                                "inputs": {"germeval": str(a.germeval), "ud": str(a.ud),
                                                           "multi30k": str(a.multi30k)}}


PART = GermanPart()
