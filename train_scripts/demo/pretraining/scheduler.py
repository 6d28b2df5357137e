"""Runs the pretraining part's plan (``plan.Plan``) and collects what its steps leave.

:class:`LmDemo`: on the demo's scheduler (``train_scripts.demo.stages.Scheduler``; pretraining first, then data
preparation, then fine-tuning), :class:`LmDemo`: the part's steps as resumable stages (``train_scripts.demo.stages``)
on that scheduler; :func:`collect_results`: the pretraining records and the fine-tuning scores of results.json.
"""
from __future__ import annotations

import json
from pathlib import Path

from preprocess.models.spm import SPACE_SYMBOL
from train_scripts.binarize import read_record
from train_scripts.demo.pretraining.corpus import LEAKAGE_RULES, prepare_corpus
from train_scripts.demo.pretraining.plan import Plan, majority_rate
from train_scripts.demo.stages import Scheduler, SlotRunner


class LmDemo:
    def __init__(self, args, runner, stages, scheduler=None):
        self.a = args
        self.scheduler = scheduler
        self.plan = Plan(args)
        self.runner = runner
        self.stages = stages
        self.logs = self.plan.root / "logs"

    def data(self) -> dict:
        a = self.a
        return self.stages.run("lm/data", [self.plan.raw],
                               lambda: prepare_corpus(a.corpus, self.plan.raw, a.lm_words,
                                                      flota_data=a.flota_data, superbizarre=a.superbizarre,
                                                      tasks=tuple(a.tasks)),
                               key={"corpus": [str(c) for c in a.corpus], "words": a.lm_words,
                                    "tasks": list(a.tasks), "leakage_rules": LEAKAGE_RULES})

    def binarize_row(self, row: str) -> dict:
        p = self.plan
        cmd = p.binarize_command(row)
        return self.stages.run(f"lm/{row}/binarize", [p.lm_dir(row)],
                               lambda: self.runner.run(f"lm/{row}/binarize", cmd, self.logs / f"{row}.binarize.log")
                               and {"dict": str(p.lm_dir(row) / "data-bin" / "dict.txt"),
                                    "seconds": self.runner.seconds[f"lm/{row}/binarize"]},
                               key=[str(x) for x in cmd], after=("lm/data",), announce=False)

    def pretrain_row(self, row: str, seed: int = 1) -> dict:
        """The row's pretraining run ``seed`` (``--lm-pretrain-seeds``; 1: the first, ``lm/ROW/pretrain``)."""
        p = self.plan
        cmd = p.pretrain_command(row, seed)
        stage = p.pretrain_stage(row, seed)
        log = self.logs / (f"{row}.pretrain.log" if seed == 1 else f"{row}.pretrain-seed{seed}.log")

        def train():
            self.runner.run(stage, cmd, log, merge_stderr=True)
            return {"seconds": self.runner.seconds[stage]}

        result = self.stages.run(stage, [p.ckpt_dir(row, seed)], train, key=[str(x) for x in cmd],
                                 after=(f"lm/{row}/binarize",), announce=False)
        return {"row": row, "pretrain_seed": seed, **result}

    def prepare(self, run: dict) -> dict:
        cmd = self.plan.prepare_command(run)
        stage = run["prep"]

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"))
            info = json.loads((run["data"] / "classification.json").read_text())
            return {**info, "seconds": self.runner.seconds[stage]}

        return self.stages.run(stage, [run["data"]], go, key=[str(x) for x in cmd],
                               after=(f"lm/{run['row']}/binarize",), announce=False)

    def finetune(self, run: dict) -> dict:
        cmd = self.plan.finetune_command(run)
        stage = run["name"]
        prep = run["prep"]

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"), merge_stderr=True)
            return finetune_result(run["save"], self.runner.seconds[stage])

        # a random-init control reads only the architecture of the pretrained checkpoint, never its weights: it
        # depends on the row's data, not on its pretraining (a longer pretraining reuses the control)
        upstream = (f"lm/{run['row']}/binarize" if run["init"] == "random"
                    else self.plan.pretrain_stage(run["row"], run.get("pretrain_seed", 1)))
        key = [str(x) for x in cmd] + (["model:", *map(str, self.a.model)] if run["init"] == "random" else [])
        return self.stages.run(stage, [run["save"]], go, key=key, after=(prep, upstream), announce=False)

    def probe(self, run: dict, seed: int = 1) -> dict:
        """The frozen-encoder probe of ``run``'s row (its pretraining run ``seed``) on its (the largest size's)
        data (``train_scripts/probe.py``)."""
        cmd = self.plan.probe_command(run, seed)
        stage = f"probe/{run['task']}/{run['row']}" + ("" if seed == 1 else f"-seed{seed}")
        out = self.plan.probe_path(run["task"], run["row"], seed)

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"))
            return {**json.loads(out.read_text()), "seconds": self.runner.seconds[stage]}

        return self.stages.run(stage, [out], go, key=[str(x) for x in cmd],
                               after=(run["prep"], self.plan.pretrain_stage(run["row"], seed)), announce=False)

    def pseudo_perplexity(self, row: str, noisy: bool) -> dict:
        """The row's pseudo-perplexity per word on the first ``pppl_lines`` validation lines, clean or with the
        demo's inflection noise (``train_scripts/pseudo_perplexity.py``)."""
        a, p = self.a, self.plan
        kind = "noisy" if noisy else "clean"
        stage = f"pppl/{row}/{kind}"
        out = p.pppl_path(row).with_suffix(f".{kind}.json")
        cmd = ["python", "-m", "train_scripts.pseudo_perplexity", "--lm-data", p.lm_dir(row), "--checkpoint",
               p.pretrained(row), "--input", p.raw / f"valid.{p.lang}", "--max-lines", a.pppl_lines, "--output", out]
        if noisy:
            cmd += ["--infl-noise", a.noise_p, "--noise-seed", a.noise_seed]

        def go():
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"))
            return {**json.loads(out.read_text()), "seconds": self.runner.seconds[stage]}

        return self.stages.run(stage, [out], go, key=[str(x) for x in cmd], after=(f"lm/{row}/pretrain",),
                               announce=False)

    def schedule_training(self, sched) -> tuple:
        """Every row's binarisation and pretraining runs and every fine-tuning run (with its data preparation) as
        steps of ``sched``: ``(runs, pretrained by (row, seed), prepared by data folder, tuned)``.  Slots go to
        pretraining first (the longest steps, which the others wait for), then to data preparation, then to the
        rest."""
        a, p = self.a, self.plan
        self.runner = SlotRunner(self.runner, sched,
                                 lambda stage: 0 if stage.startswith("lm/") else 1 if stage.startswith("prep/") else 2)
        binarized = {row: sched.add(lambda r=row: self.binarize_row(r)) for row in a.rows}
        # every pretraining run of every row (--lm-pretrain-seeds), by (row, seed)
        pretrained = {(row, k): sched.add(lambda r=row, k=k: self.pretrain_row(r, k), [binarized[row]])
                      for row in a.rows for k in p.pretrain_seeds()}
        runs = p.finetune_runs()
        prepared = {}
        for run in runs:   # one data preparation per (task, row, encoding), shared by its seeds and inits
            if str(run["data"]) not in prepared:
                prepared[str(run["data"])] = sched.add(lambda r=run: self.prepare(r), [binarized[run["row"]]])
        # a control waits for its row's (first) pretraining too (it reads the checkpoint's architecture), though its
        # fingerprint does not depend on it (see finetune)
        tuned = [sched.add(lambda r=run: self.finetune(r), [prepared[str(run["data"])],
                                                            pretrained[(run["row"], run.get("pretrain_seed", 1))]])
                 for run in runs]
        return runs, pretrained, prepared, tuned

    def run_all(self) -> dict:
        """Every step on the demo's scheduler; the results.  An interrupt (SIGINT/SIGTERM) propagates to the run
        skeleton (``main.run_part``), which stops the scheduler and the stages before the processes."""
        a, p = self.a, self.plan
        data = self.data()
        sched = self.scheduler if self.scheduler is not None else Scheduler(a.jobs)
        runs, pretrained, prepared, tuned = self.schedule_training(sched)
        # the probe: every row with a random control, on its largest labelled size's data (one per task, row and
        # pretraining run; the random encoders with the first)
        probe_runs = {(r["task"], r["row"]): r for r in runs if r["part"] == "superbizarre" and r["init"] == "random"
                      and r["size"] == p.largest_size()}
        probed = {(*key, k): sched.add(lambda r=run, k=k: self.probe(r, k),
                                       [prepared[str(run["data"])], pretrained[(run["row"], k)]])
                  for key, run in probe_runs.items() for k in p.pretrain_seeds()}
        pppl = {(row, noisy): sched.add(lambda r=row, n=noisy: self.pseudo_perplexity(r, n), [pretrained[(row, 1)]])
                for row in (a.rows if a.pppl_lines else []) for noisy in (False, True)}
        sched.wait()
        results = collect_results(a, p, data, [f.result() for f in pretrained.values()], runs,
                                  [f.result() for f in tuned], {k: f.result() for k, f in prepared.items()})
        results["probe"] = [{"task": t, "row": r, "pretrain_seed": k, **f.result()}
                            for (t, r, k), f in probed.items()]
        for rec in results["pretraining"]:
            for noisy in (False, True):   # pseudo-perplexity: the first pretraining run's model
                if (rec["row"], noisy) in pppl and rec.get("pretrain_seed", 1) == 1:
                    rec["pppl_noisy" if noisy else "pppl_clean"] = _pppl_summary(pppl[(rec["row"], noisy)].result())
        results["floor"] = floors(a, runs, prepared)
        results["piece_floor"] = piece_floors(runs)
        return results


def _pppl_summary(r: dict) -> dict:
    keep = ("pppl_per_word", "bits_per_word", "unigram_bits_per_word", "pppl_per_token", "tokens_per_word", "words",
            "tokens", "lines", "scored_lines", "truncated_lines", "unk_tokens", "seconds", "noise")
    return {k: r[k] for k in keep if k in r}


def floors(a, runs: list, prepared: dict) -> list:
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


def finetune_result(save: Path, seconds: float) -> dict:
    """Scores of one fine-tuning run (the best dev epoch's checkpoint) and whether it collapsed to one class."""
    out = {"seconds": seconds}
    for name in ("dev", "test", "test_noisy"):
        path = save / f"{name}_scores.json"
        if path.exists():
            s = json.loads(path.read_text())
            out[name] = {"accuracy": s["accuracy"], "macro_f1": s["macro_f1"], "examples": s["examples"],
                         "classes_predicted": len(set(s["predictions"]))}
    out["collapsed"] = out.get("dev", {}).get("classes_predicted", 2) <= 1
    for name in ("checkpoint_best.pt",):   # the fine-tuned weights are not kept: the scores are the result
        (save / name).unlink(missing_ok=True)
    return out


# --- results --------------------------------------------------------------------------------------------------

def pretraining_record(plan: Plan, row: str, seconds: float, seed: int = 1) -> dict:
    """Budget and losses of one pretraining (the row's run ``seed``): updates, sequences, tokens, epochs; validation
    loss per token (bits, as fairseq logs it) and per word / per character of the validation text (per-token loss x
    tokens per word)."""
    from train_scripts.train_log import log_records, validation_curve

    log = plan.ckpt_dir(row, seed) / "train.log"
    curve = [{"update": r["update"], "loss": r.get("valid_loss")} for r in validation_curve(str(log))
             if r.get("subset") == "valid" and r.get("valid_loss") is not None]
    updates = sequences = tokens = 0.0
    last_updates = 0
    for rec in log_records(str(log)):
        if "train_wpb" in rec and "train_num_updates" in rec:     # an end-of-epoch record
            n = int(float(rec["train_num_updates"]))
            steps = n - last_updates
            tokens += float(rec["train_wpb"]) * steps
            sequences += float(rec.get("train_bsz", 0)) * steps
            last_updates, updates = n, n
    info = read_record(str(plan.lm_dir(row)))
    drop = info.get("spaces") == "drop"
    counts = {}
    for split in ("train", "valid"):
        toks = words = chars = lines = 0
        with open(plan.lm_dir(row) / "tok" / f"{split}.{plan.lang}", encoding="utf-8") as enc, \
                open(plan.raw / f"{split}.{plan.lang}", encoding="utf-8") as raw:
            for t_line, r_line in zip(enc, raw):
                pieces = t_line.split()
                if not pieces:   # a blank line separates documents: fairseq drops it (complete_doc)
                    continue
                toks += len(pieces) - (pieces.count(SPACE_SYMBOL) if drop else 0) + 1   # + </s>
                words += len(r_line.split())
                chars += len(r_line.rstrip("\n"))
                lines += 1
        counts[split] = {"tokens": toks, "words": words, "chars": chars, "lines": lines}
    final = curve[-1]["loss"] if curve else None
    v = counts["valid"]
    per_word = final * v["tokens"] / v["words"] if final is not None and v["words"] else None
    per_char = final * v["tokens"] / v["chars"] if final is not None and v["chars"] else None
    return {"row": row, "pretrain_seed": seed, "updates": int(updates), "sequences": int(sequences),
            "tokens": int(tokens),
            "epochs": tokens / counts["train"]["tokens"] if counts["train"]["tokens"] else None,
            "train_tokens": counts["train"]["tokens"], "train_words": counts["train"]["words"],
            "tokens_per_word": counts["train"]["tokens"] / max(1, counts["train"]["words"]),
            "valid_curve": curve, "valid_loss_per_token": final, "valid_loss_per_word": per_word,
            "valid_loss_per_char": per_char, "seconds": seconds, "spaces_dropped": drop}


def collect_results(a, plan: Plan, data: dict, pre: list, runs: list, results: list, prepared: dict) -> dict:
    rows = [pretraining_record(plan, p["row"], p.get("seconds", 0.0), p.get("pretrain_seed", 1)) for p in pre]
    for r in rows:
        row = plan.rows[r["row"]]
        r["label"], r["note"] = row.label, row.note
    finetune = []
    for run, res in zip(runs, results):
        info = prepared[str(run["data"])]
        finetune.append({k: run.get(k) for k in ("part", "task", "row", "init", "seed", "encoding", "mode", "k",
                                                 "lr", "size", "epochs")} | res
                        | {"pretrain_seed": run.get("pretrain_seed", 1)}
                        | {"tokens_per_example": info.get("tokens_per_example", {}).get("test"),
                           "majority": majority_rate(run["data"] / "raw" / "test.label")})
    return {"data": data, "pretraining": rows, "finetune": finetune}


def stage_seconds(folder: Path) -> dict:
    """``{"pretraining": s, "preparation": s, "fine-tuning": s}``: the wall seconds of every recorded stage's command
    (from the moment it had a slot), summed by kind (commands that ran side by side count each)."""
    out = {"pretraining": 0.0, "preparation": 0.0, "fine-tuning": 0.0}
    for record in folder.glob("*.json"):
        name = record.stem
        kind = "pretraining" if name.startswith("lm__") else "preparation" if name.startswith("prep__") \
            else "fine-tuning"
        saved = json.loads(record.read_text())
        result = saved.get("result")
        out[kind] += result.get("seconds", saved.get("seconds", 0.0)) if isinstance(result, dict) else \
            saved.get("seconds", 0.0)
    return out
