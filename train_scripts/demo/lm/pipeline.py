"""The language-model pipeline's steps as resumable stages on the demo's scheduler, and the results they leave.

:class:`Pipeline` runs a :class:`~train_scripts.demo.lm.plan.Plan`: every row's binarisation and pretraining runs,
every task's data preparation and fine-tuning runs (slots to pretraining first, the longest steps, which the others
wait for), and the steps a part may add (the frozen-encoder probe, pseudo-perplexity, any command that writes a
JSON).  A part subclasses it with its own data step (:meth:`Pipeline.data`), its extra scores
(:meth:`Pipeline.schedule_scores`) and what it adds to the results (:meth:`Pipeline.add_scores`).
:func:`collect_results`: the pretraining records and the fine-tuning scores of results.json.
"""
from __future__ import annotations

import json
from pathlib import Path

from preprocess.models.spm import SPACE_SYMBOL
from train_scripts.binarize import read_record
from train_scripts.demo.lm.plan import Plan, Settings, majority_rate
from train_scripts.demo.stages import SlotRunner


class Pipeline:
    """binarise -> pretrain -> prepare -> fine-tune -> score, for a part's :class:`Settings`, as stages of
    ``stages`` on ``scheduler`` (the demo's: at most ``--jobs`` commands at a time)."""

    def __init__(self, settings: Settings, runner, stages, scheduler):
        self.s = settings
        self.scheduler = scheduler
        self.plan = Plan(settings)
        self.runner = runner
        self.stages = stages
        self.logs = self.plan.root / "logs"

    # --- the part's hooks ---------------------------------------------------------------------------------------

    def data(self) -> dict:
        """The part's data step (stage ``lm/data``): writes ``raw/{train,valid}.LANG`` and whatever its tasks read;
        its record (results["data"])."""
        raise NotImplementedError

    def schedule_scores(self, runs: list, pretrained: dict, prepared: dict) -> dict:
        """The part's own steps on the scheduler once the training steps are there (``pretrained`` by (row,
        seed), ``prepared`` by data folder): their futures, by any key, for :meth:`add_scores`."""
        return {}

    def add_scores(self, results: dict, runs: list, prepared: dict, scores: dict) -> dict:
        """The results with the part's own scores added (``prepared``: the data records by data folder;
        ``scores``: :meth:`schedule_scores`'s futures, done)."""
        return results

    # --- the steps ----------------------------------------------------------------------------------------------

    def binarize_row(self, row: str) -> dict:
        p = self.plan
        cmd = p.binarize_command(row)
        return self.stages.run(f"lm/{row}/binarize", [p.lm_dir(row)],
                               lambda: self.runner.run(f"lm/{row}/binarize", cmd, self.logs / f"{row}.binarize.log")
                               and {"dict": str(p.lm_dir(row) / "data-bin" / "dict.txt"),
                                    "seconds": self.runner.seconds[f"lm/{row}/binarize"]},
                               key=[str(x) for x in cmd], after=("lm/data",), announce=False)

    def pretrain_row(self, row: str, seed: int = 1) -> dict:
        """The row's pretraining run ``seed`` (1: the first, ``lm/ROW/pretrain``)."""
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
        key = [str(x) for x in cmd] + (["model:", *map(str, self.s.model)] if run["init"] == "random" else [])
        return self.stages.run(stage, [run["save"]], go, key=key, after=(prep, upstream), announce=False)

    def json_stage(self, stage: str, cmd: list, out: Path, after: tuple) -> dict:
        """A command that writes one JSON (``out``) as a stage: that JSON and the command's seconds."""
        def go():
            out.parent.mkdir(parents=True, exist_ok=True)
            self.runner.run(stage, cmd, self.logs / (stage.replace("/", "_") + ".log"))
            return {**json.loads(out.read_text()), "seconds": self.runner.seconds[stage]}

        return self.stages.run(stage, [out], go, key=[str(x) for x in cmd], after=after, announce=False)

    def probe(self, run: dict, sizes, random_seeds: int, seed: int = 1) -> dict:
        """The frozen-encoder probe of ``run``'s row (its pretraining run ``seed``) on ``run``'s data, at each
        of ``sizes``, beside ``random_seeds`` random encoders (``train_scripts/probe.py``)."""
        p = self.plan
        return self.json_stage(p.probe_stage(run["task"], run["row"], seed),
                               p.probe_command(run, sizes, random_seeds, seed),
                               p.probe_path(run["task"], run["row"], seed),
                               (run["prep"], p.pretrain_stage(run["row"], seed)))

    def pseudo_perplexity(self, row: str, lines: int, noise: tuple | None = None) -> dict:
        """The row's pseudo-perplexity per word on the first ``lines`` validation lines, clean or with
        inflection noise ``noise`` = (probability, seed) (``train_scripts/pseudo_perplexity.py``)."""
        p = self.plan
        kind = "noisy" if noise else "clean"
        out = p.pppl_path(row).with_suffix(f".{kind}.json")
        cmd = ["python", "-m", "train_scripts.pseudo_perplexity", "--lm-data", p.lm_dir(row), "--checkpoint",
               p.pretrained(row), "--input", p.raw / f"valid.{p.lang}", "--max-lines", lines, "--output", out]
        if noise:
            cmd += ["--infl-noise", noise[0], "--noise-seed", noise[1]]
        return self.json_stage(f"pppl/{row}/{kind}", cmd, out, (f"lm/{row}/pretrain",))

    def schedule_training(self, sched) -> tuple:
        """Every row's binarisation and pretraining runs and every fine-tuning run (with its data preparation) as
        steps of ``sched``: ``(runs, pretrained by (row, seed), prepared by data folder, tuned)``.  Slots go to
        pretraining first (the longest steps, which the others wait for), then to data preparation, then to the
        rest."""
        s, p = self.s, self.plan
        self.runner = SlotRunner(self.runner, sched,
                                 lambda stage: 0 if stage.startswith("lm/") else 1 if stage.startswith("prep/") else 2)
        binarized = {row: sched.add(lambda r=row: self.binarize_row(r)) for row in s.rows}
        # every pretraining run of every row, by (row, seed)
        pretrained = {(row, k): sched.add(lambda r=row, k=k: self.pretrain_row(r, k), [binarized[row]])
                      for row in s.rows for k in p.pretrain_seeds()}
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
        data = self.data()
        runs, pretrained, prepared, tuned = self.schedule_training(self.scheduler)
        scores = self.schedule_scores(runs, pretrained, prepared)
        self.scheduler.wait()
        prepared = {k: f.result() for k, f in prepared.items()}
        results = collect_results(self.plan, data, [f.result() for f in pretrained.values()], runs,
                                  [f.result() for f in tuned], prepared)
        return self.add_scores(results, runs, prepared, scores)


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


def collect_results(plan: Plan, data: dict, pre: list, runs: list, results: list, prepared: dict) -> dict:
    """results.json's common part: ``data`` (the part's data record), every pretraining run's record and every
    fine-tuning run's settings and scores (``prepared``: the data records by data folder)."""
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
