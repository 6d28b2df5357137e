"""The German part of ``make demo``: Wordmap's own question (Jung 2023, sections 1.2, 3.2.3 and 4), asked on real
German.

The thesis built Wordmap to test two hypotheses with a German masked language model: **HYP1**, a tokenisation with
a part-of-speech overhead for verbs affects model performance (tested here two-sided); **HYP2**, separating
lexemic from functional morphs gives better lexemic tokens.  This part pretrains a small RoBERTa per row (Unigram,
the baseline, at Wordmap's dictionary size, and Wordmap) on the same German text with the same budget, several
pretraining seeds each (or continues a user's German RoBERTa for both, ``--de-init``), and measures:

* **agreement** (HYP1's primary measure here): CLAMS German subject-verb agreement pairs, per construction, beside
  chance and random encoders; Wordmap against Unigram by McNemar per seed and a paired t over seeds;
* **gold segmentation** (HYP2): consistency of UD German GSD test's verb pieces with their gold lemmas and boundary
  F1 on MorphyNet, with paired bootstrap intervals;
* **the verbs** (the thesis's target): whole-word pseudo-perplexity on UD German GSD test, over all words and over
  the gold VERB/AUX words, beside a character floor; frozen-encoder probes of the verb features and a lexeme probe,
  beside random encoders;
* **classification**, only when asked (``--de-germeval-finetune``; on in the gpu preset): GermEval 2018 coarse,
  the official F1, seeds and a random-init control, the character n-gram floor.

The corpus and its leakage rules: ``train_scripts/prepare_german.py``.  The steps are the shared language-model
pipeline's (``train_scripts/demo/lm/``) on German, with the part's data step and measures (``steps.py``); presets,
rows and the GermEval task: ``plan.py``; ``--de-init``: ``init.py``; the report: ``report.py``.

    morphtok-demo --part german --output demo-output [--de-preset cpu|fast|gpu] [--de-pretrain-seeds 3] \
        [--de-germeval-finetune] [--de-init CHECKPOINT] [--dry-run]
"""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from preprocess.common import SHARED_DATA, UserError
from train_scripts.demo.german.plan import (
    BASELINE,
    GERMEVAL_OFF,
    PRESET_HELP,
    PRESET_KEYS,
    PRESETS,
    ROWS,
    Paths,
    flag,
    plan_of,
    seeded,
)
from train_scripts.demo.part import Context, Part
from train_scripts.demo.preflight import refuse_overlap
from train_scripts.demo.presets import add_preset_options, apply_preset

#: where each input comes from (docs/data.md)
SOURCES = {
    "--de-germeval": "GermEval 2018: github.com/uds-lsv/GermEval-2018-Data (germeval2018.{training,test}.txt)",
    "--de-ud": "UD German GSD: github.com/UniversalDependencies/UD_German-GSD (de_gsd-ud-{dev,test}.conllu)",
    "--de-multi30k": "Multi30k: github.com/multi30k/dataset data/task1/raw (train.de, val.de, test_2016_flickr.de)",
    "--de-agreement": "CLAMS German: github.com/aaronmueller/clams de_evalset/ (simple_agrmt.txt, vp_coord.txt, ...)",
    "--de-morphynet": "MorphyNet: github.com/kbatsuren/MorphyNet (deu.derivational.v1.tsv)",
}
#: the CLAMS constructions the agreement stage reads (``--de-agreement``)
CLAMS_FILES = ("simple_agrmt.txt", "vp_coord.txt", "long_vp_coord.txt", "prep_anim.txt")


class GermanPart(Part):
    name = "german"
    preset_flag = "--de-preset"
    #: fast: measured, 20 MB (2026-12-02, 2 pretraining seeds); cpu and gpu estimated from the checkpoints' size
    #: (12 bytes per parameter with Adam's state, about 3 kept per run, 6 runs): 3.0M parameters, about 110 MB per
    #: run on the cpu preset; RoBERTa-base, about 1.5 GB per checkpoint on the gpu preset
    disk = {"cpu": 800e6, "fast": 30e6, "gpu": 30e9}
    #: its inputs in the shared data folder (``--shared-data``; docs/data.md)
    shared_inputs = {"--de-germeval": "german/germeval2018", "--de-ud": "german/ud_german_gsd",
                     "--de-multi30k": "multi30k", "--de-agreement": "german/clams_de",
                     "--de-morphynet": "morph_gold/deu.derivational.v1.tsv"}
    title = ("Wordmap against Unigram on German: agreement, verbs (pseudo-perplexity, probes), gold segmentation, "
             "GermEval 2018 when asked; options --de-*")

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
        ap.add_argument("--de-agreement", type=Path, default=SHARED_DATA / "german" / "clams_de",
                        help="folder of the CLAMS German agreement pairs (" + ", ".join(CLAMS_FILES) + ")")
        ap.add_argument("--de-morphynet", type=Path,
                        default=SHARED_DATA / "morph_gold" / "deu.derivational.v1.tsv",
                        help="MorphyNet's German derivations (the gold segmentation stage's boundary F1)")
        ap.add_argument("--de-germeval-finetune", action=argparse.BooleanOptionalAction, default=None,
                        help="fine-tune on GermEval 2018 (and score its floor); default: on in gpu, off in cpu and "
                             "fast, because " + GERMEVAL_OFF.split(": ", 1)[1].replace("%", "%%"))
        ap.add_argument("--de-init", type=Path, default=None, metavar="CHECKPOINT",
                        help="continue masked-LM training from this German RoBERTa in fairseq format (its "
                             "dict.txt beside it), for both rows alike: each row's dictionary is the checkpoint's "
                             "plus the row's new pieces, their embeddings the mean of the checkpoint's pieces that "
                             "spell them (docs/german.md)")
        add_preset_options(ap, PRESETS, PRESET_KEYS, "", PRESET_HELP, flag, group=ap)

    def settings(self, options: argparse.Namespace) -> argparse.Namespace:
        preset = PRESETS[options.de_preset]
        a = argparse.Namespace(output=options.output.resolve(), dry_run=options.dry_run, preset=options.de_preset,
                               device=preset["device"], model=[str(x) for x in preset["model"]],
                               germeval=options.de_germeval, ud=options.de_ud, multi30k=options.de_multi30k,
                               agreement=options.de_agreement, morphynet=options.de_morphynet,
                               rows=list(ROWS), baseline=BASELINE,
                               init=options.de_init.resolve() if options.de_init else None)
        apply_preset(options, preset, PRESET_KEYS, into=a, flag=flag)
        a.germeval_finetune = (preset["germeval_finetune"] if options.de_germeval_finetune is None
                               else options.de_germeval_finetune)
        a.preset_overrides = {k: getattr(a, k) for k in PRESET_KEYS if getattr(a, k) != preset[k]}
        if a.germeval_finetune != preset["germeval_finetune"]:
            a.preset_overrides["germeval_finetune"] = a.germeval_finetune
        if a.init:
            from train_scripts.demo.german.init import init_options

            a.init_options = init_options()
        a.ud_files = {split: a.ud / name for split, name in (("dev", "de_gsd-ud-dev.conllu"),
                                                              ("test", "de_gsd-ud-test.conllu"))}
        if a.seeds < 1 or a.probe_seeds < 1 or a.pretrain_seeds < 1:
            raise UserError("--de-seeds, --de-probe-seeds and --de-pretrain-seeds must be at least 1")
        if a.agreement_pairs < 0:
            raise UserError("--de-agreement-pairs must be 0 (all) or more")
        folder = a.output / self.name
        if folder.is_file():
            raise UserError(f"--output {a.output}: {folder} is a file, not a folder")
        refuse_overlap((("--de-germeval", a.germeval), ("--de-ud", a.ud), ("--de-multi30k", a.multi30k),
                        ("--de-agreement", a.agreement)), folder)
        if not a.dry_run:
            missing = self.missing(a)
            if missing:
                raise UserError(missing)
        return a

    def check_inputs(self, a) -> None:
        """Every input read whole by its stage's reader (``inputs.py``): one line naming the option, file and line."""
        from train_scripts.demo.german.inputs import check

        check(a.germeval, a.ud, a.multi30k, a.agreement, CLAMS_FILES, a.morphynet)

    @staticmethod
    def missing(a) -> str | None:
        """The inputs that are not there, as one sentence, or None."""
        needed = [("--de-germeval", a.germeval / f) for f in ("germeval2018.training.txt", "germeval2018.test.txt")]
        needed += [("--de-ud", p) for p in a.ud_files.values()]
        needed += [("--de-multi30k", a.multi30k / "train.de")]
        needed += [("--de-agreement", a.agreement / name) for name in CLAMS_FILES]
        needed += [("--de-morphynet", a.morphynet)]
        if a.init:
            needed += [("--de-init", a.init), ("--de-init", a.init.parent / "dict.txt")]
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
        seeds = plan.pretrain_seeds()
        stages = [("lm/data", "data")] + [(f"lm/{row}/binarize", f"binarize/{row}") for row in args.rows]
        if args.init:
            stages += [(f"init/{row}", "init") for row in args.rows]
        stages += [(plan.pretrain_stage(row, k), f"pretrain/{row}") for row in args.rows for k in seeds]
        runs = plan.finetune_runs()
        stages += [(p, "prepare") for p in dict.fromkeys(r["prep"] for r in runs)]
        stages += [(r["name"], "finetune") for r in runs]
        for row in args.rows:
            for k in seeds:
                stages += [(seeded(f"agreement/{row}", k), "agreement+random" if k == 1 else "agreement"),
                           (seeded(f"pppl/{row}/ud", k), "pppl"),
                           (seeded(f"verbs/{row}", k), "verbs+random" if k == 1 else "verbs")]
        stages.append(("gold", "gold"))
        if args.germeval_finetune:
            stages.append(("floor", "floor"))
        return costs_from(stages, FIGURES.get(args.preset))

    def plan(self, args) -> list:
        from train_scripts.demo.german.steps import agreement_command, gold_command

        plan, paths = plan_of(args), Paths(args.output / self.name)
        sizes = {row: plan.s.row_table[row].config.get("vocab_size", plan.s.vocab_size) for row in args.rows}
        lines = [f"# preset {args.preset}: rows {', '.join(args.rows)} (vocabulary sizes: "
                 + ", ".join(f"{row} {n:,}" for row, n in sizes.items()) + f"); {len(plan.pretrain_seeds())} "
                 f"pretraining seeds per row; GermEval fine-tuning {'on' if args.germeval_finetune else 'off'}",
                 f"python -m train_scripts.prepare_german corpus --out {paths.raw}",
                 f"python -m train_scripts.prepare_german germeval --out {paths.germeval}",
                 f"python -m train_scripts.prepare_german ud --out {paths.ud}"]
        show = lambda cmd: " ".join(shlex.quote(str(x)) for x in cmd)   # noqa: E731
        for row in args.rows:
            lines.append(show(plan.binarize_command(row)))
            if args.init:
                from train_scripts.demo.german.init import extend_command

                lines.append(show(extend_command(args, plan, paths, row)))
                lines.append(show([*plan.binarize_command(row), "--srcdict", paths.init(row) / "dict.txt"]))
            for k in plan.pretrain_seeds():
                lines.append(show(plan.pretrain_command(row, k)))
        runs = plan.finetune_runs()
        if runs:
            lines.append(f"# {len(runs)} GermEval fine-tuning runs, e.g.:")
            seen = set()
            for run in runs:
                if run["init"] not in seen:
                    seen.add(run["init"])
                    lines.append(show(plan.finetune_command(run)))
        else:
            lines.append("# no GermEval fine-tuning (--de-germeval-finetune to run it)")
        lines.append(f"# per row and pretraining seed: agreement ({args.probe_seeds} random encoders on seed 1), "
                     f"whole-word pseudo-perplexity on {paths.ud / 'ud_test.de'} (all words and verbs), the verb "
                     f"probes (train_scripts.verb_probe, {args.probe_seeds} random encoders on seed 1), e.g.:")
        row = args.rows[0]
        lines.append(show(agreement_command(args, plan, paths, row)))
        lines.append("# once over every row's segmentation:")
        lines.append(show(gold_command(args, plan, paths)))
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
                                                "germeval_finetune": a.germeval_finetune,
                                                "init": str(a.init) if a.init else None,
                                                "inputs": {"germeval": str(a.germeval), "ud": str(a.ud),
                                                           "multi30k": str(a.multi30k),
                                                           "agreement": str(a.agreement),
                                                           "morphynet": str(a.morphynet)}}


PART = GermanPart()
