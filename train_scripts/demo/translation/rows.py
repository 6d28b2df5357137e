"""The translation part's rows (``morphtok-demo --part translation``): what each row is and how it runs.

:data:`ROWS` (each a scheme configuration of the registry), the budget :data:`PRESETS`, the data of the
comparison (Multi30k slices, the perturbed copies of the test source) and :class:`RowRun`: one row through the
recipes users run (binarize -> train -> average -> evaluate, the perturbed test sets, the intrinsic metrics) as
resumable stages (``train_scripts.demo.stages``).
"""
from __future__ import annotations

import gzip
import json
import shlex
import sys
import time
from pathlib import Path

from tqdm import tqdm

from preprocess.common import REPO, UserError
from preprocess.evaluate import noise as noise_eval
from preprocess.files.inputs import count_lines
from preprocess.files.outputs import atomic_output
from preprocess.models.spm import SPACE_SYMBOL
from train_scripts import binarize as binarize_recipe
from train_scripts import evaluate as evaluate_recipe
from train_scripts.demo.rows import ROWS, Row  # noqa: F401  (the rows this part runs)
from train_scripts.demo.stages import PipelineError, Runner, Stages, say
from train_scripts.schemes import make_scheme
from train_scripts.tools import SHARED_DATA
from train_scripts.train_log import validation_curve

#: the perturbed copies of the test source: every kind of preprocess.evaluate.noise (BITE's and FLOTA's threat models)
NOISE_KINDS = noise_eval.KINDS
#: generation options of every evaluation (clean and noisy): beam 4, length penalty 0.6 and these
GENERATE_EXTRA = ("--max-len-a", str(evaluate_recipe.MAX_LEN_A), "--max-len-b", str(evaluate_recipe.MAX_LEN_B))


def noisy_test_file(out: Path, kind: str) -> Path:
    """Where a perturbed test source is written: beside the report, for inspection."""
    return out / f"test.{kind}.en"


def make_noise(args, raw: Path) -> dict:
    """Write the perturbed copies of the test source (same line count) and return their counts."""
    stats = {}
    for kind in NOISE_KINDS:
        stats[kind] = noise_eval.write_noisy(str(raw / "test.en"), str(noisy_test_file(args.output, kind)), kind,
                                             args.noise_fraction, args.noise_seed)
        stats[kind]["output"] = noisy_test_file(args.output, kind).name
    return stats


# --- data ---------------------------------------------------------------------------------------------------

def default_data() -> Path | None:
    shared = SHARED_DATA / "multi30k"
    return shared if shared.exists() else None



def tokenizer_scores(tok: dict, raw: dict) -> dict:
    """The field's tokeniser scores of a row's test encodings per side (``preprocess.evaluate.intrinsic``: Rényi
    efficiency, fertility, pieces per word); ``{"error": ...}`` where tokenization-scorer (the ``hf`` extra) is
    missing, so the report says why the columns are empty."""
    from preprocess.common import UserError
    from preprocess.evaluate.intrinsic import text_scores

    try:
        return {side: text_scores(tok[lang], raw[f"test.{lang}"]) for lang, side in (("en", "src"), ("de", "tgt"))}
    except UserError as exc:
        return {"error": str(exc)}

def hyps_with_token_marks(hyps: list[str], scheme) -> int:
    """How many decoded hypotheses still hold a token mark: SentencePiece's ``▁``, or one of the marks the scheme
    names in ``token_marks()`` (BITE's inflection symbols and spacing marks): none should survive decoding."""
    marks = (SPACE_SYMBOL, *scheme.token_marks())
    return sum(any(mark in h for mark in marks) for h in hyps)


def read_text_lines(path: Path, n: int = 0) -> list[str]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig") as fh:   # (a byte-order mark at the start is no text)
        lines = []
        for line in fh:
            lines.append(line.rstrip("\n"))
            if n and len(lines) >= n:
                break
    return lines


def find_split(data: Path, split: str, lang: str) -> Path:
    names = {"train": ["train"], "valid": ["val", "valid"], "test": ["test_2016_flickr", "test"]}[split]
    for name in names:
        for suffix in (f"{name}.{lang}.gz", f"{name}.{lang}"):
            if (data / suffix).exists():
                return data / suffix
    raise PipelineError(
        f"no {split} file for '{lang}' in {data}. Get Multi30k with train_scripts/prepare_multi30k.sh "
        f"(online) or pass --mt-data ../shared/data/multi30k")


def prepare_raw(data: Path, raw: Path, sizes: dict) -> dict:
    raw.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, n in sizes.items():
        en = read_text_lines(find_split(data, split, "en"), n)
        de = read_text_lines(find_split(data, split, "de"), n)
        if len(en) != len(de):
            raise PipelineError(f"misaligned {split}: {len(en)} English vs {len(de)} German lines")
        for lang, lines in (("en", en), ("de", de)):
            (raw / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        counts[split] = len(en)
    return counts


# --- budget presets ----------------------------------------------------------------------------------------------

#: Every option a preset sets; an option given on the command line wins over its preset.  Sizes 0 = the whole split.
PRESETS = {
    "cpu": {"note": "the default: a small Transformer (2 layers, 64 dimensions) trained for a fixed 2,000 updates on "
                    "10,000 pairs, the last 3 checkpoints (100 updates apart) averaged; at this budget the models "
                    "learn (the Unigram baseline reaches about 15-20 BLEU), so BLEU compares the schemes as "
                    "translators, not only how fast they start to learn",
            "device": "cpu", "train_lines": 10000, "valid_lines": 300, "test_lines": 500, "vocab_size": 4000,
            "max_update": 2000, "valid_every": 100, "average": 3, "max_tokens": 2048, "embed_dim": 64,
            "ffn_dim": 128, "heads": 4, "layers": 2, "dropout": 0.1, "lr": 2e-3, "warmup": 100, "patience": -1},
    "gpu": {"note": "one GPU: a Transformer-base-sized model (6+6 layers, 512 dimensions, 8 heads, FFN 2048, "
                    "dropout 0.3) on all 29,000 Multi30k pairs, trained to convergence with early stopping on the "
                    "validation loss (patience 10 validations of 500 updates, at most 30,000 updates), the best "
                    "checkpoint averaged with the 4 before it, fp16",
            "device": "gpu", "train_lines": 0, "valid_lines": 0, "test_lines": 0, "vocab_size": 8000,
            "max_update": 30000, "valid_every": 500, "average": 5, "max_tokens": 4096, "embed_dim": 512,
            "ffn_dim": 2048, "heads": 8, "layers": 6, "dropout": 0.3, "lr": 5e-4, "warmup": 4000, "patience": 10},
}
#: a smoke test: the cpu preset's model and data, for only 250 updates
PRESETS["fast"] = {**PRESETS["cpu"], "max_update": 250, "valid_every": 50,
                   "note": "a smoke test (the old quick run): the same model for only 250 updates; BLEU 0.5-6, so it "
                           "shows that everything runs and how fast each scheme starts to learn, not translation "
                           "quality"}
PRESETS = {name: PRESETS[name] for name in ("cpu", "fast", "gpu")}   # the order --help lists them in
#: the rows a plain run compares (one per scheme, plus the baseline's own scheme); ``--mt-schemes all`` runs every row
#: the presets' recorded figures: one core's seconds per stage of each kind (``estimate.py``). cpu: the stages of the
#: whole make demo of 2026-11-29 that ran on an idle machine (Unigram and Unigram' trained in 850 and 857 s, evaluated
#: in 53 and 80 s: bench/results/2026-11-29-whole-demo.md); Wordmap's training at the 1.8x of the idle run of
#: 2026-11-27 (592 against 326 s: docs/demo.md). Earlier idle days were up to 2x faster; the gpu preset has none.
FIGURES = {
    "cpu": {"data": 5, "noise": 15, "binarize": 25, "train": 850, "train/wordmap": 1550, "average": 10,
            "evaluate": 55, "binarize_noisy": 15, "evaluate_noisy": 80, "intrinsic": 5},
    "fast": {"data": 5, "noise": 15, "binarize": 40, "train": 60, "train/wordmap": 90, "average": 10,
             "evaluate": 30, "binarize_noisy": 20, "evaluate_noisy": 30, "intrinsic": 20},
}
DEFAULT_ROWS = ("unigram", "unigram_prime", "bite_unigram", "wordmap", "flota")
PRESET_OPTIONS = [k for k in PRESETS["cpu"] if k not in ("note", "device")]
#: the help of the preset options that is more than "the preset's value" (train_scripts/demo/presets.py)
PRESET_HELP = {"valid_every": "validate and save every N updates",
               "average": "average the last N update checkpoints (ending at the best one with early stopping)",
               "patience": "early stopping after N validations without improvement (-1: off)"}


def train_options(a) -> list[str]:
    """fairseq-train options of the budget preset, appended to the Transformer recipe's own (so they win).
    With early stopping (``patience`` > 0) the checkpoints before the best one must survive the ``patience``
    validations after it, so that the average can end at the best checkpoint."""
    keep = a.average + max(0, a.patience)
    # with early stopping, validate on the update interval only (not also at epoch ends): patience then counts
    # validations that are valid_every updates apart
    cadence = ["--validate-interval", 1_000_000] if a.patience > 0 else []
    return [*cadence, "--arch", "transformer", "--encoder-layers", a.layers, "--decoder-layers", a.layers,
            "--encoder-embed-dim", a.embed_dim, "--decoder-embed-dim", a.embed_dim,
            "--encoder-ffn-embed-dim", a.ffn_dim, "--decoder-ffn-embed-dim", a.ffn_dim,
            "--encoder-attention-heads", a.heads, "--decoder-attention-heads", a.heads, "--dropout", a.dropout,
            "--lr", a.lr, "--warmup-updates", a.warmup, "--clip-norm", 1.0, "--max-tokens", a.max_tokens,
            "--update-freq", 1, "--max-update", a.max_update, "--validate-interval-updates", a.valid_every,
            "--save-interval-updates", a.valid_every, "--keep-interval-updates", keep,
            "--no-epoch-checkpoints", "--patience", a.patience, "--seed", 1, "--log-interval", 10,
            "--no-progress-bar", "--num-workers", 0]


# --- one row ------------------------------------------------------------------------------------------------

class RowRun:
    def __init__(self, row: Row, args, runner: Runner, stages: Stages, raw: Path):
        self.row = row
        self.args = args
        self.runner = runner
        self.stages = stages
        self.raw = raw
        self.dir = args.output / "schemes" / row.name
        self.work = self.dir / "binarized"  # the binarize recipe's --out
        self.ckpt = self.dir / "checkpoints"
        self.eval = self.dir / "eval"
        self.noisy = self.dir / "noisy"     # the perturbed test sets, encoded and binarised
        self.logs = self.dir / "logs"

    @property
    def config(self) -> dict:
        return {"vocab_size": self.args.vocab_size, "seed": 1, "character_coverage": 1.0, **self.row.config}

    def stage(self, what: str, outputs, fn, key=None, after=()):
        """A stage of this row; ``after``: this row's stages it depends on (the first depends on the data)."""
        upstream = tuple(f"{self.row.name}/{a}" for a in after) or ("data",)
        return self.stages.run(f"{self.row.name}/{what}", outputs, fn, key, upstream)

    # -- the recipes -----------------------------------------------------------------------------------------
    def binarize(self) -> dict:
        info = binarize_recipe.binarize(self.config, str(self.raw), str(self.work), "en", "de",
                                        workers=self.args.workers, quiet=True)
        return {"dict_sizes": {lang: count_lines(path) for lang, path in info["dicts"].items()}}

    def train_command(self) -> list:
        device = ["--cpu"] if self.args.device == "cpu" else []   # on a GPU the recipe adds --fp16 itself
        return ["bash", REPO / "train_scripts" / "train_transformer_big.sh", "--data", self.work,
                "--save-dir", self.ckpt, *device, "--gpus", 1, *train_options(self.args)]

    def train(self) -> dict:
        a = self.args
        cmd = self.train_command()
        # beside other rows, a bar per row would garble the terminal: a line every quarter instead
        beside = min(a.jobs, len(a.schemes)) > 1
        bar = tqdm(total=a.max_update, desc=f"{self.row.name} train", unit="upd", leave=False, file=sys.stderr,
                   disable=beside or None)   # (None: none in a log file either)
        t0, told = time.time(), [0]

        def on_line(line: str):
            rec = _json_record(line)
            if rec is None:
                return
            n = rec.get("num_updates") or rec.get("train_num_updates") or rec.get("valid_num_updates")
            if n is not None:
                bar.n = min(int(n), a.max_update)
                bar.refresh()
                quarter = 4 * bar.n // max(1, a.max_update)
                if beside and quarter > told[0]:
                    told[0] = quarter
                    say(f"[....] {self.row.name}/train: {bar.n}/{a.max_update} updates "
                        f"({time.time() - t0:.0f} s)")

        stage = f"{self.row.name}/train"
        try:
            self.runner.run(stage, cmd, self.logs / "train.log", on_line, merge_stderr=True)
        finally:
            bar.close()
        cpu = self.runner.cpu_seconds.get(stage)   # measured where the command ran (the process, the SLURM job)
        curve = [[r["update"], r["valid_loss"]] for r in validation_curve(str(self.ckpt / "train.log"))
                 if r.get("update") is not None and r.get("valid_loss") is not None]
        (self.dir / "valid_curve.json").write_text(json.dumps(curve))
        updates = curve[-1][0] if curve else a.max_update   # fewer than --mt-max-update after early stopping
        best = min(curve, key=lambda c: c[1])[0] if curve else None
        return {"train_cpu_seconds": cpu, "num_updates": updates, "best_update": best,
                "updates_per_cpu_second": updates / cpu if cpu else None,
                "valid_curve": curve, "final_valid_loss": curve[-1][1] if curve else None}

    def average_command(self, best_update=None, n: int | None = None) -> list:
        """Average the last ``average`` update checkpoints; with early stopping the ones ending at the best
        (the BITE paper averages the selected checkpoint with the previous nine)."""
        cmd = ["python", "-m", "train_scripts.average_checkpoints", "--inputs", self.ckpt,
               "--num-update-checkpoints", n or self.args.average, "--output", self.ckpt / "averaged.pt"]
        if self.args.patience > 0:
            cmd += ["--checkpoint-upper-bound", best_update if best_update is not None else "BEST_UPDATE"]
        return cmd

    def average(self, best_update=None) -> dict:
        """A run that stops (or is told to stop) before ``average`` checkpoints exist averages the ones there are,
        and the row says so (``averaged`` < ``averaged_requested``): never silently fewer."""
        bound = best_update if self.args.patience > 0 and best_update is not None else None
        updates = [int(p.stem.rsplit("_", 1)[1]) for p in self.ckpt.glob("checkpoint_*_*.pt")]
        n = min(self.args.average, max(1, len([u for u in updates if bound is None or u <= bound])))
        if n < self.args.average:
            say(f"note: {self.row.name}: only {n} checkpoints to average (asked for {self.args.average})")
        self.runner.run(f"{self.row.name}/average", self.average_command(best_update, n), self.logs / "average.log")
        return {"averaged": n, "averaged_requested": self.args.average}

    def _evaluate(self, out_dir: Path, **kwargs) -> dict:
        return evaluate_recipe.evaluate(str(self.ckpt / "averaged.pt"), str(self.work), beam=4, lenpen=0.6,
                                        batch_size=64, cpu=self.args.device == "cpu", out_dir=str(out_dir),
                                        extra_args=list(GENERATE_EXTRA), **kwargs)

    def scheme(self, info: dict | None = None):
        """The row's learned scheme, as its ``binarize.json`` (``info``, read when not given) records it."""
        info = info or evaluate_recipe.load_binarize_info(str(self.work))
        return make_scheme(info["config"], ("en", "de"), info["models_dir"])

    def evaluate(self) -> dict:
        res = self._evaluate(self.eval, subset="test")
        leftover = hyps_with_token_marks(read_text_lines(self.eval / "hyp.txt"), self.scheme())
        keep = ("bleu", "chrf", "bleu_signature", "chrf_signature", "tok_bleu", "sentences")
        return {**{k: res[k] for k in keep}, "hyps_with_token_marks": leftover}

    # -- intrinsic ------------------------------------------------------------------------------------------
    def intrinsic(self) -> dict:
        info = evaluate_recipe.load_binarize_info(str(self.work))
        scheme = self.scheme(info)
        tok_dir = Path(info["tok_dir"])
        res: dict = {}
        raw = {f"{split}.{lang}": read_text_lines(self.raw / f"{split}.{lang}") for split in ("train", "test")
               for lang in ("en", "de")}
        tok = {lang: read_text_lines(tok_dir / f"test.{lang}") for lang in ("en", "de")}
        for lang, side in (("en", "src"), ("de", "tgt")):
            n_tok = sum(len(t.split()) for t in tok[lang])
            n_words = sum(len(t.split()) for t in raw[f"test.{lang}"])
            res[f"{side}_tok_per_sent"] = n_tok / max(1, len(tok[lang]))
            res[f"{side}_tok_per_word"] = n_tok / max(1, n_words)
            train_types = {p for line in read_text_lines(tok_dir / f"train.{lang}") for p in line.split()}
            res.setdefault("vocab", {})[lang] = {"types_used_in_train": len(train_types)}
        gold = {"en": str(self.args.gold_en) if self.args.gold_en and self.args.gold_en.exists() else None,
                "de_verbs": str(self.args.gold_de) if self.args.gold_de and self.args.gold_de.exists() else None}
        res["boundary"] = scheme.boundary(gold)
        res["tokenizer_scores"] = tokenizer_scores(tok, raw)
        try:
            res["extra"] = scheme.intrinsic(raw, gold)
        except Exception as exc:  # noqa: BLE001 - extras must not sink the comparison; the report says why
            res["extra"] = {"error": f"{type(exc).__name__}: {exc}"}
        res["examples"] = [{"raw": raw["test.en"][i], "tokens": tok["en"][i], "raw_de": raw["test.de"][i],
                            "tokens_de": tok["de"][i]} for i in self.args.example_ids if i < len(tok["en"])]
        return res

    # -- robustness: the perturbed test sets through the same model ----------------------------------------------
    def binarize_noisy(self) -> dict:
        """Encode the perturbed sources with the row's learned scheme and binarise them with its dictionaries
        (``binarize.binarize_test_sets``: nothing is learned again) as one fairseq test subset (``noisy``: the
        inflection-noise sentences, then the whitespace-noise ones, so that one fairseq-generate translates both);
        targets and references are the clean ones, twice.  Also the model-free similarity of the clean and
        perturbed source encodings."""
        info = evaluate_recipe.load_binarize_info(str(self.work))
        src, tgt, clean = info["src"], info["tgt"], Path(info["tok_dir"])
        raw_dir = self.noisy / "raw"
        raw_dir.mkdir(parents=True, exist_ok=True)
        noisy = {kind: read_text_lines(noisy_test_file(self.args.output, kind)) for kind in NOISE_KINDS}
        _write(raw_dir / f"noisy.{src}", [line for kind in NOISE_KINDS for line in noisy[kind]])
        _write(raw_dir / f"noisy.{tgt}", read_text_lines(self.raw / f"test.{tgt}") * len(NOISE_KINDS))
        _write(self.noisy / f"ref.{tgt}", read_text_lines(self.raw / f"test.{tgt}") * len(NOISE_KINDS))
        binarize_recipe.binarize_test_sets(info, str(raw_dir), ["noisy"], str(self.noisy), self.args.workers)
        encoded = read_text_lines(self.noisy / "tok" / f"noisy.{src}")
        clean_raw, clean_tok = read_text_lines(self.raw / f"test.{src}"), read_text_lines(clean / f"test.{src}")
        n = len(clean_raw)
        robustness = {kind: noise_eval.mean_similarity(clean_tok, encoded[i * n:(i + 1) * n], clean_raw, noisy[kind])
                      for i, kind in enumerate(NOISE_KINDS)}
        return {"robustness": robustness}

    def evaluate_noisy(self) -> dict:
        """One fairseq-generate for both perturbed test sets with the row's averaged model; each half scored
        against the clean references (``eval_infl/hyp.txt``, ``eval_ws/hyp.txt``)."""
        self._evaluate(self.dir / "eval_noisy", data_bin=str(self.noisy / "data-bin"), subset="test",
                       ref=str(self.noisy / "ref.de"))
        hyps, refs = read_text_lines(self.dir / "eval_noisy" / "hyp.txt"), read_text_lines(self.raw / "test.de")
        scores = {}
        for i, kind in enumerate(NOISE_KINDS):
            part = hyps[i * len(refs):(i + 1) * len(refs)]
            _write(self.dir / f"eval_{kind}" / "hyp.txt", part)
            res = evaluate_recipe.score(part, refs, "de")
            scores[kind] = {"bleu": res["bleu"], "chrf": res["chrf"]}
        return {"noisy_scores": scores}

    def hypotheses(self) -> dict:
        """{test set: detokenised hypotheses} for the significance tests."""
        files = {"clean": self.eval / "hyp.txt", **{k: self.dir / f"eval_{k}" / "hyp.txt" for k in NOISE_KINDS}}
        return {k: read_text_lines(f) for k, f in files.items() if f.exists()}

    def run_all(self) -> dict:
        a = self.args
        row = {"name": self.row.name, "label": self.row.label, "note": self.row.note, "direction": "en-de",
               "config": self.config}
        row.update(self.stage("binarize", [self.work], self.binarize, key=self.config, after=()))
        row.update(self.stage("train", [self.ckpt], self.train, key=[str(x) for x in self.train_command()],
                              after=("binarize",)))
        row.update(self.stage("average", [self.ckpt / "averaged.pt"], lambda: self.average(row.get("best_update")),
                              key=[str(x) for x in self.average_command(row.get("best_update"))], after=("train",)))
        row.update(self.stage("evaluate", [self.eval], self.evaluate, key=[a.device, *GENERATE_EXTRA],
                              after=("average",)))
        name = self.row.name
        row.update(self.stages.run(f"{name}/binarize_noisy", [self.noisy], self.binarize_noisy, key=None,
                                   after=(f"{name}/binarize", "noise")))
        row.update(self.stages.run(f"{name}/evaluate_noisy",
                                   [self.dir / "eval_noisy", *(self.dir / f"eval_{k}" for k in NOISE_KINDS)],
                                   self.evaluate_noisy, key=[a.device, *GENERATE_EXTRA],
                                   after=(f"{name}/average", f"{name}/binarize_noisy")))
        row.update(self.stage("intrinsic", [], self.intrinsic,
                              key=[str(a.gold_en), str(a.gold_de), a.example_ids], after=("binarize",)))
        row["budget"] = self.budget()
        return row

    def budget(self) -> dict:
        """What the training saw, from fairseq's log (read on every run, so older outputs get it too): updates,
        sentences (pairs) and target tokens summed over the epochs (each epoch record's mean batch x its updates),
        epochs, and source tokens estimated from the mean encoded length of the training source."""
        info = evaluate_recipe.load_binarize_info(str(self.work))
        return budget_seen(str(self.ckpt / "train.log"), Path(info["tok_dir"]) / f"train.{info['src']}",
                           Path(info["tok_dir"]) / f"train.{info['tgt']}")

    def plan(self) -> list[str]:
        """The commands this row runs, for ``--dry-run`` (Python recipes shown as their command lines)."""
        a, work = self.args, self.work
        options = [x for k, v in self.config.items() if k != "scheme"
                   for x in (f"--{k.replace('_', '-')}", v)]
        noisy = [noisy_test_file(a.output, k) for k in NOISE_KINDS]
        cmds = [["python", "-m", "train_scripts.binarize", "--scheme", self.config["scheme"], "--data", self.raw,
                 "--src", "en", "--tgt", "de", "--out", work, "--workers", a.workers, *options],
                self.train_command(), self.average_command()]
        evaluate = ["python", "-m", "train_scripts.evaluate", "--checkpoint", self.ckpt / "averaged.pt", "--data",
                    work, "--beam", 4, "--lenpen", 0.6, "--batch-size", 64, *(["--cpu"] if a.device == "cpu" else [])]
        cmds.append([*evaluate, "--subset", "test", "--out", self.eval, *GENERATE_EXTRA])
        cmds.append(f"# binarize_noisy: {', '.join(str(p) for p in noisy)} encoded with the learned scheme and "
                    f"concatenated, then fairseq-preprocess --testpref {self.noisy / 'tok' / 'noisy'} with the row's "
                    f"dictionaries into {self.noisy / 'data-bin'}")
        cmds.append([*evaluate, "--data-bin", self.noisy / "data-bin", "--subset", "test", "--ref",
                     self.noisy / "ref.de", "--out", self.dir / "eval_noisy", *GENERATE_EXTRA])
        return [c if isinstance(c, str) else " ".join(shlex.quote(str(x)) for x in c) for c in cmds]


def budget_seen(train_log: str, train_src: Path, train_tgt: Path) -> dict:
    """Updates, sentence pairs, target and (estimated) source tokens a training run saw (see RowRun.budget)."""
    from train_scripts.train_log import log_records

    updates = sentences = tgt_tokens = 0.0
    try:
        records = [r for r in log_records(train_log) if "train_num_updates" in r and "train_bsz" in r]
    except UserError:
        records = []
    for r in records:  # one record per (possibly partial) epoch, means over its updates; num_updates cumulative
        n = float(r["train_num_updates"]) - updates
        sentences += n * float(r["train_bsz"])
        tgt_tokens += n * float(r["train_wpb"])
        updates = float(r["train_num_updates"])
    if not records:
        return {}
    src_lens = [len(line.split()) for line in read_text_lines(train_src)]
    tgt_lens = [len(line.split()) for line in read_text_lines(train_tgt)]
    pairs = len(src_lens)
    return {"updates": int(updates), "sentences": round(sentences), "tgt_tokens": round(tgt_tokens),
            "src_tokens_est": round(sentences * sum(src_lens) / max(1, pairs)),
            "epochs": sentences / max(1, pairs), "train_pairs": pairs,
            "train_src_tokens_per_pair": sum(src_lens) / max(1, pairs),
            "train_tgt_tokens_per_pair": sum(tgt_lens) / max(1, pairs)}


def _json_record(line: str):
    start = line.find("{")
    if start < 0:
        return None
    try:
        rec = json.loads(line[start:])
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def _write(path: Path, lines: list[str]) -> None:
    with atomic_output(path) as fh:   # its folder is made too
        fh.write("".join(line + "\n" for line in lines))
