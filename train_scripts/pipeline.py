"""The comparison behind ``make demo``: every scheme through the recipes users run, on Multi30k En->De, one report.

The demo is a list of recipe configurations (:data:`ROWS`): each row is a configuration of the scheme registry
(``train_scripts/schemes``) and runs through exactly what a researcher runs on a cluster:
``train_scripts.binarize`` -> ``train_scripts/train_transformer_big.sh`` (with the budget preset's options)
-> ``train_scripts.average_checkpoints`` -> ``train_scripts.evaluate``, plus intrinsic metrics (sequence lengths,
vocabulary use, morph boundary P/R/F1, the scheme's own metrics).  Writes ``REPORT.md``, ``report.html``, plots
and ``results.json`` into ``--output``; every intermediate file stays under it.

Robustness (the BITE and FLOTA papers' threat models): the test source is perturbed twice
(``preprocess.evaluate.noise``, ``--noise-fraction``, ``--noise-seed``; written beside the report as
``test.infl.en`` and ``test.ws.en``), encoded with each row's learned scheme and translated by the same model in
one extra ``fairseq-generate`` per row, no extra training; the model-free counterpart is the similarity of clean
and perturbed encodings.  Every BLEU/chrF carries sacreBLEU's 95% CI and a paired test against ``--baseline``
(``train_scripts.significance``).  Budget: ``--preset cpu`` (default: 2,000 updates of a small Transformer, at
which the models learn; five rows, ``--schemes all`` for nine), ``fast`` (the 250-update smoke test) or ``gpu``
(Transformer-base to convergence with early stopping); ``--dry-run`` prints the commands.  SIGINT or SIGTERM
stops every process the pipeline started (each command runs in a process group of its own, and the pipeline is
the subreaper of whatever they leave); the interrupted stage is not recorded, so a rerun redoes it from a clean
folder and skips the finished ones.  See docs/demo.md.

Rows run side by side on a CPU machine (``--jobs``, default one per core, with ``--threads`` torch threads each,
default cores / jobs, so one): each row is this program again (``--row NAME``, its stage lines on the same
terminal), and the report is written when every row is done.  Why rows rather than threads: the demo's model is
small, so two torch threads on one training gain little, and while anything else runs on the machine they wait on
each other at every operation (measured here: 2 threads 2-4x slower than 1 beside one other busy process);
two rows of one thread each keep both cores busy whatever else runs.

Each stage is resumable: a stage whose record exists, whose outputs are there and whose options and inputs are
the same is skipped; a stage whose options or inputs changed reruns, and so does everything that depends on it
(the record keeps a fingerprint of them).  An interrupted stage is cleaned and rerun.  A failing step stops with
``pipeline stage <name> failed: ...`` and the path of its log.

    morphtok-demo --data ../shared/data/multi30k --output demo-output [--preset cpu|fast|gpu] \\
        [--schemes bpe unigram ... | all] [--baseline unigram] [--noise-fraction 0.3] [--noise-seed 1] [--dry-run]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from preprocess.common import REPO, UserError, count_lines, run_main
from preprocess.evaluate import noise as noise_eval
from preprocess.spm import SPACE_SYMBOL
from train_scripts import binarize as binarize_recipe
from train_scripts import evaluate as evaluate_recipe
from train_scripts.schemes import make_scheme
from train_scripts.train_log import validation_curve
from train_scripts.tools import SHARED_DATA, child_env


# --- the rows of the comparison ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One row of the comparison: a scheme configuration of the registry (``config``) and how to show it."""

    name: str
    label: str
    config: dict = field(default_factory=dict)
    note: str = ""


ROWS = {r.name: r for r in [
    Row("bpe", "BPE", {"scheme": "sentencepiece", "model_type": "bpe"}, "SentencePiece BPE, joint En+De"),
    Row("unigram", "Unigram", {"scheme": "sentencepiece", "model_type": "unigram"},
        "SentencePiece Unigram, joint En+De"),
    Row("bpe_prime", "BPE'", {"scheme": "spaces", "model_type": "bpe"}, "spaces always their own token"),
    Row("bpe_prime_nospace", "BPE' no spaces", {"scheme": "spaces", "model_type": "bpe", "spaces": "drop"},
        "space tokens dropped on the source; the target keeps them (a decoder must generate spaces)"),
    Row("unigram_prime", "Unigram'", {"scheme": "spaces", "model_type": "unigram"}, "spaces always their own token"),
    Row("unigram_prime_nospace", "Unigram' no spaces", {"scheme": "spaces", "model_type": "unigram", "spaces": "drop"},
        "space tokens dropped on the source; the target keeps them"),
    Row("bite_unigram", "BITE+Unigram", {"scheme": "bite", "model_type": "unigram"},
        "BITE on the English source, Unigram trained on BITE(en)+de with the inflection symbols"),
    Row("wordmap", "Wordmap", {"scheme": "wordmap", "model_type": "unigram"},
        "German target: verbs by Wordmap, other words by a German Unigram; English source: Unigram"),
    Row("flota", "FLOTA k=3", {"scheme": "flota", "model_type": "unigram", "flota_k": 3},
        "English source by FLOTA (k=3) over a joint Unigram model's vocabulary (the Unigram row's); target Unigram"),
]}


class PipelineError(RuntimeError):
    pass


#: the perturbed copies of the test source (preprocess.evaluate.noise): BITE's and FLOTA's threat models
NOISE_KINDS = ("infl", "ws")
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


def say(message: str) -> None:
    """One status line on stderr in one ``write``: rows running side by side share the stream, and
    ``tqdm.write`` writes the text and its newline separately, so two rows' lines ran together."""
    line = message + "\n"
    with tqdm.external_write_mode(file=sys.stderr):
        sys.stderr.flush()
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError):   # a stream without a descriptor (captured): one write call there
            sys.stderr.write(line)
            return
        os.write(fd, line.encode("utf-8", "replace"))


def _fingerprint(key) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


# --- running things --------------------------------------------------------------------------------------------

class Runner:
    """Runs commands with logs under the output directory and records them for the report."""

    def __init__(self, out: Path, threads: int):
        self.out = out
        self.env = child_env(threads)

    def run(self, stage: str, args: list, log: Path, on_line=None, merge_stderr: bool = False) -> str:
        """Run ``args``, stdout to ``log`` (and ``on_line``), stderr to ``log.err`` or, with ``merge_stderr``
        (a tool that logs only to stderr), into the stdout stream.  The command runs in a process group of its
        own: an interrupted pipeline (SIGINT, SIGTERM) stops the whole group (:func:`stop_group`), so no
        training process outlives it."""
        args = [str(a) for a in args]
        if args[0] == "python":
            args[0] = sys.executable
        shown = " ".join(shlex.quote(a) for a in args).replace(sys.executable, "python")
        with open(self.out / "commands.txt", "a", encoding="utf-8") as fh:  # survives resumed runs
            fh.write(shown + "\n")
        log.parent.mkdir(parents=True, exist_ok=True)
        err_log = log.with_suffix(".err")
        # stdout and stderr stay separate: merged, their buffers interleave mid-line and lines get lost
        with open(log, "w", encoding="utf-8") as fh, open(err_log, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else err,
                                    text=True, env=self.env, cwd=REPO, start_new_session=True)
            lines = []
            try:
                for line in proc.stdout:
                    fh.write(line)
                    lines.append(line)
                    if on_line is not None:
                        on_line(line)
                rc = proc.wait()
            except BaseException:  # interrupted: never leave a training process running behind us
                stop_group(proc)
                raise
        if rc != 0:
            tail = "".join(lines[-4:]) + "".join(err_log.read_text(encoding="utf-8").splitlines(True)[-6:])
            raise PipelineError(f"pipeline stage {stage} failed (exit {rc}); logs: {log} {err_log}\n{tail.strip()}")
        return "".join(lines)


#: seconds a stopped command's process group gets to finish (a checkpoint being written completes) before SIGKILL
STOP_GRACE = 20.0


def stop_group(proc: subprocess.Popen, grace: float = STOP_GRACE) -> None:
    """Stop ``proc`` and every process of its group (it was started with ``start_new_session``): SIGTERM (the
    recipes pass it on to fairseq, which finishes a checkpoint it is writing), then SIGKILL after ``grace``
    seconds to whatever is left of the group."""
    def signal_group(sig) -> bool:
        try:
            os.killpg(proc.pid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the clean-up short
        signal.signal(sig, signal.SIG_IGN)
    signal_group(signal.SIGTERM)
    deadline = time.time() + grace
    while time.time() < deadline:
        _reap()  # processes of the group orphaned on the way are re-parented to this (subreaper) process
        if proc.poll() is not None and not signal_group(0):
            break
        time.sleep(0.1)
    signal_group(signal.SIGKILL)
    proc.wait()


def _reap() -> None:
    """Collect exited children (orphans re-parented to this subreaper), so that they leave the process table."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


class Stages:
    """Resumable stages: ``<out>/.stages/<name>.json`` records a finished stage, the fingerprint of the options
    and inputs that produced it, and its result."""

    def __init__(self, out: Path):
        self.dir = out / ".stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.skipped: list[str] = []
        self.ran: list[str] = []
        self.fingerprints: dict[str, str] = {}

    def run(self, name: str, outputs: list[Path], fn, key=None, after: tuple[str, ...] = (), quiet: bool = False,
            announce: bool = True):
        """Run ``fn`` unless a record with the same fingerprint exists.  ``key``: the options and inputs of
        this stage (JSON-serialisable); ``after``: the stages whose results it uses (their fingerprints are part
        of this one, so a changed upstream stage reruns this one too); ``quiet``: a skip is neither shown nor
        listed (a ``--row`` process passing over the data stages its pipeline has just run); ``announce``: say
        ``[run ]`` here (False: ``fn`` says it when its work really starts, e.g. once it has a free core)."""
        fingerprint = _fingerprint({"key": key, "after": [self.fingerprints[a] for a in after]})
        self.fingerprints[name] = fingerprint
        record = self.dir / f"{name.replace('/', '__')}.json"
        if record.exists() and all(Path(p).exists() for p in outputs):
            saved = json.loads(record.read_text())
            if saved.get("fingerprint") == fingerprint:
                if not quiet:
                    self.skipped.append(name)
                    say(f"[skip] {name} (done with the same options)")
                return saved["result"]
            say(f"[rerun] {name}: its options or inputs changed")
        for p in outputs:  # an interrupted or outdated stage restarts cleanly
            p = Path(p)
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
        if announce:
            say(f"[run ] {name}")
        t0 = time.time()
        try:
            result = fn()
        except PipelineError as exc:
            if str(exc).startswith("pipeline stage"):
                raise
            raise PipelineError(f"pipeline stage {name} failed: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - any stage failure is re-raised, named, with its cause chained
            raise PipelineError(f"pipeline stage {name} failed: {type(exc).__name__}: {exc}") from exc
        missing = [str(p) for p in outputs if not Path(p).exists()]
        if missing:
            raise PipelineError(f"pipeline stage {name} finished without its outputs: {missing}")
        tmp = record.with_suffix(".tmp")
        tmp.write_text(json.dumps({"result": result, "fingerprint": fingerprint, "key": key,
                                   "seconds": time.time() - t0}, default=str))
        os.replace(tmp, record)
        self.ran.append(name)
        return result


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


def _read(path: Path, n: int = 0) -> list[str]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
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
        f"(online) or pass --data ../shared/data/multi30k")


def prepare_raw(data: Path, raw: Path, sizes: dict) -> dict:
    raw.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, n in sizes.items():
        en = _read(find_split(data, split, "en"), n)
        de = _read(find_split(data, split, "de"), n)
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
    "fast": {"note": "a smoke test (the old quick run): the same model for only 250 updates; BLEU 0.5-6, so it shows "
                     "that everything runs and how fast each scheme starts to learn, not translation quality",
             "device": "cpu", "train_lines": 10000, "valid_lines": 300, "test_lines": 500, "vocab_size": 4000,
             "max_update": 250, "valid_every": 50, "average": 3, "max_tokens": 2048, "embed_dim": 64,
             "ffn_dim": 128, "heads": 4, "layers": 2, "dropout": 0.1, "lr": 2e-3, "warmup": 100, "patience": -1},
    "gpu": {"note": "one GPU: a Transformer-base-sized model (6+6 layers, 512 dimensions, 8 heads, FFN 2048, "
                    "dropout 0.3) on all 29,000 Multi30k pairs, trained to convergence with early stopping on the "
                    "validation loss (patience 10 validations of 500 updates, at most 30,000 updates), the best "
                    "checkpoint averaged with the 4 before it, fp16",
            "device": "gpu", "train_lines": 0, "valid_lines": 0, "test_lines": 0, "vocab_size": 8000,
            "max_update": 30000, "valid_every": 500, "average": 5, "max_tokens": 4096, "embed_dim": 512,
            "ffn_dim": 2048, "heads": 8, "layers": 6, "dropout": 0.3, "lr": 5e-4, "warmup": 4000, "patience": 10},
}
#: the rows a plain run compares (one per scheme, plus the baseline's own scheme); ``--schemes all`` runs every row
DEFAULT_ROWS = ("unigram", "unigram_prime", "bite_unigram", "wordmap", "flota")
PRESET_OPTIONS = [k for k in PRESETS["cpu"] if k not in ("note", "device")]


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
        # beside other rows (--row), a bar per process would garble the terminal: a line every quarter instead
        beside = a.row is not None
        bar = tqdm(total=a.max_update, desc=f"{self.row.name} train", unit="upd", leave=False, file=sys.stderr,
                   disable=beside)
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

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            self.runner.run(f"{self.row.name}/train", cmd, self.logs / "train.log", on_line, merge_stderr=True)
        finally:
            bar.close()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        curve = [[r["update"], r["valid_loss"]] for r in validation_curve(str(self.ckpt / "train.log"))
                 if r.get("update") is not None and r.get("valid_loss") is not None]
        (self.dir / "valid_curve.json").write_text(json.dumps(curve))
        updates = curve[-1][0] if curve else a.max_update   # fewer than --max-update after early stopping
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
        leftover = hyps_with_token_marks(_read(self.eval / "hyp.txt"), self.scheme())
        keep = ("bleu", "chrf", "bleu_signature", "chrf_signature", "tok_bleu", "sentences")
        return {**{k: res[k] for k in keep}, "hyps_with_token_marks": leftover}

    # -- intrinsic ------------------------------------------------------------------------------------------
    def intrinsic(self) -> dict:
        info = evaluate_recipe.load_binarize_info(str(self.work))
        scheme = self.scheme(info)
        tok_dir = Path(info["tok_dir"])
        res: dict = {}
        raw = {f"{split}.{lang}": _read(self.raw / f"{split}.{lang}") for split in ("train", "test")
               for lang in ("en", "de")}
        tok = {lang: _read(tok_dir / f"test.{lang}") for lang in ("en", "de")}
        for lang, side in (("en", "src"), ("de", "tgt")):
            n_tok = sum(len(t.split()) for t in tok[lang])
            n_words = sum(len(t.split()) for t in raw[f"test.{lang}"])
            res[f"{side}_tok_per_sent"] = n_tok / max(1, len(tok[lang]))
            res[f"{side}_tok_per_word"] = n_tok / max(1, n_words)
            train_types = {p for line in _read(tok_dir / f"train.{lang}") for p in line.split()}
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
        noisy = {kind: _read(noisy_test_file(self.args.output, kind)) for kind in NOISE_KINDS}
        _write(raw_dir / f"noisy.{src}", [line for kind in NOISE_KINDS for line in noisy[kind]])
        _write(raw_dir / f"noisy.{tgt}", _read(self.raw / f"test.{tgt}") * len(NOISE_KINDS))
        _write(self.noisy / f"ref.{tgt}", _read(self.raw / f"test.{tgt}") * len(NOISE_KINDS))
        binarize_recipe.binarize_test_sets(info, str(raw_dir), ["noisy"], str(self.noisy), self.args.workers)
        encoded = _read(self.noisy / "tok" / f"noisy.{src}")
        clean_raw, clean_tok = _read(self.raw / f"test.{src}"), _read(clean / f"test.{src}")
        n = len(clean_raw)
        robustness = {kind: noise_eval.mean_similarity(clean_tok, encoded[i * n:(i + 1) * n], clean_raw, noisy[kind])
                      for i, kind in enumerate(NOISE_KINDS)}
        return {"robustness": robustness}

    def evaluate_noisy(self) -> dict:
        """One fairseq-generate for both perturbed test sets with the row's averaged model; each half scored
        against the clean references (``eval_infl/hyp.txt``, ``eval_ws/hyp.txt``)."""
        self._evaluate(self.dir / "eval_noisy", data_bin=str(self.noisy / "data-bin"), subset="test",
                       ref=str(self.noisy / "ref.de"))
        hyps, refs = _read(self.dir / "eval_noisy" / "hyp.txt"), _read(self.raw / "test.de")
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
        return {k: _read(f) for k, f in files.items() if f.exists()}

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
    src_lens = [len(line.split()) for line in _read(train_src)]
    tgt_lens = [len(line.split()) for line in _read(train_tgt)]
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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def versions() -> dict:
    out = {"python": platform.python_version()}
    from importlib import metadata

    for dist in ("torch", "fairseq-fixed", "sentencepiece", "sacrebleu", "sacremoses", "nltk", "lemminflect",
                 "HanTa"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out



# --- main ---------------------------------------------------------------------------------------------------

def parse_args(argv=None):
    """Options; a bad preset, scheme, baseline or noise fraction is a :class:`UserError` before any work."""
    ap = argparse.ArgumentParser(prog="morphtok-demo", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", type=Path, default=default_data(),
                    help="Multi30k folder (raw train/val/test_2016_flickr .en/.de[.gz])")
    ap.add_argument("--output", type=Path, default=Path("demo-output"), help="everything is written here")
    ap.add_argument("--part", choices=PARTS, default="all",
                    help="translation (this comparison), pretraining (RoBERTa pretraining -> fine-tuning, "
                         "OUTPUT/pretraining/; its options start with --lm-: morphtok-demo --part pretraining --help), "
                         "or all: both, one report")
    ap.add_argument("--preset", default="cpu",
                    help="budget: " + "; ".join(f"{k}: {v['note']}" for k, v in PRESETS.items())
                         + ". The size, model and training options below default to the preset's")
    ap.add_argument("--schemes", nargs="+", default=list(DEFAULT_ROWS),
                    help=f"rows of the comparison ({', '.join(ROWS)}), or 'all' for every row")
    ap.add_argument("--baseline", default=None,
                    help="row every other row is tested against (default: unigram when it runs, else the first)")
    ap.add_argument("--noise-fraction", default="0.3",
                    help="probability that an inflectable word is re-inflected (inflection noise) and that a space "
                         "between words is dropped (whitespace noise) in the perturbed test sets (FLOTA: 0.3)")
    ap.add_argument("--noise-seed", type=int, default=1, help="seed of both perturbations")
    ap.add_argument("--dry-run", action="store_true", help="print the commands every row would run, run nothing")
    g = ap.add_argument_group("preset options (default: the preset's value; 0 lines = the whole split)")
    for name, kind in (("train_lines", int), ("valid_lines", int), ("test_lines", int), ("vocab_size", int),
                       ("max_update", int), ("valid_every", int), ("average", int), ("max_tokens", int),
                       ("embed_dim", int), ("ffn_dim", int), ("heads", int), ("layers", int), ("dropout", float),
                       ("lr", float), ("warmup", int), ("patience", int)):
        g.add_argument("--" + name.replace("_", "-"), type=kind, default=None,
                       help={"valid_every": "validate and save every N updates",
                             "average": "average the last N update checkpoints (ending at the best one with "
                                        "early stopping)",
                             "patience": "early stopping after N validations without improvement (-1: off)"
                             }.get(name, "preset's value"))
    ap.add_argument("--workers", type=int, default=2, help="encoder processes")
    ap.add_argument("--jobs", type=int, default=None,
                    help="rows run at the same time (default: one per CPU core, at most one per row; 1 with the gpu "
                         "preset)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads of each row's training and generation (default: CPU cores / jobs)")
    ap.add_argument("--row", default=None, metavar="NAME",
                    help="run this one row of --schemes and write its results to schemes/NAME/row.json (what the "
                         "pipeline runs for each row when rows run side by side)")
    ap.add_argument("--gold-en", type=Path, default=SHARED_DATA / "morph_gold" / "eng.word.dev.tsv",
                    help="English gold morphology (boundary scores)")
    ap.add_argument("--gold-de", type=Path, default=SHARED_DATA / "morph_gold" / "deu.derivational.v1.tsv",
                    help="German derivational verbs (Wordmap boundary scores)")
    ap.add_argument("--example-ids", type=int, nargs="+", default=[0, 7, 21],
                    help="test sentences shown encoded in the report")
    args = ap.parse_args(argv)
    if args.preset not in PRESETS:
        raise UserError(f"unknown preset {args.preset!r} (choose from {', '.join(PRESETS)})")
    if "all" in args.schemes:
        args.schemes = list(ROWS)
    unknown = [n for n in args.schemes if n not in ROWS]
    if unknown:
        raise UserError(f"unknown scheme {unknown[0]!r} in --schemes (choose from {', '.join(ROWS)})")
    if args.baseline is None:
        args.baseline = "unigram" if "unigram" in args.schemes else args.schemes[0]
    elif args.baseline not in args.schemes:
        raise UserError(f"--baseline {args.baseline!r} is not among --schemes ({', '.join(args.schemes)})")
    args.noise_fraction = noise_eval.check_fraction(args.noise_fraction)
    preset = PRESETS[args.preset]
    for name in PRESET_OPTIONS:
        if getattr(args, name) is None:
            setattr(args, name, preset[name])
    args.device = preset["device"]
    args.output = args.output.resolve()
    if args.row is not None and args.row not in args.schemes:
        raise UserError(f"--row {args.row!r} is not among --schemes ({', '.join(args.schemes)})")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if args.jobs is None:
        args.jobs = 1 if args.device == "gpu" else max(1, min(cores, len(args.schemes)))
    if args.jobs < 1 or (args.threads is not None and args.threads < 1):
        raise UserError("--jobs and --threads must be at least 1")
    if args.threads is None:
        args.threads = max(1, cores // args.jobs)
    for name in args.schemes:  # a bad scheme option is an error before any work starts
        make_scheme(ROWS[name].config, ("en", "de"), str(args.output))
    if args.dry_run:
        return args
    if args.data is None:
        args.data = download_multi30k(args.output / "multi30k-download")
    if args.data is None:
        ap.error("no data: ../shared/data/multi30k is not there and the online download failed. Pass --data DIR "
                 "with Multi30k's raw train/val/test_2016_flickr .en/.de files (github.com/multi30k/dataset, "
                 "data/task1/raw), or run train_scripts/prepare_multi30k.sh --out DIR when online")
    if not args.data.is_dir():
        ap.error(f"--data {args.data} is not a directory")
    return args


def download_multi30k(dest: Path) -> Path | None:
    """The online download of the recipes (prepare_multi30k.sh); None when it fails (offline)."""
    if (dest / "train.en").exists():
        return dest
    print(f"no local Multi30k: downloading it into {dest}", file=sys.stderr)
    proc = subprocess.run(["bash", str(REPO / "train_scripts" / "prepare_multi30k.sh"), "--out", str(dest)],
                          env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr.strip()[-500:], file=sys.stderr)
        return None
    return dest


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def _become_subreaper() -> None:
    """Linux: orphans of this process's descendants (e.g. the worker pool of a killed fairseq-preprocess) are
    re-parented to this process instead of init, so :func:`stop_descendants` still finds them."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (read from /proc; empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":  # zombies are already gone; they only wait to be reaped
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop_descendants(grace: float = STOP_GRACE) -> None:
    """The pipeline's last act when interrupted: SIGTERM to every process still below it (a tool run in-process
    stages started), SIGKILL to those left after ``grace`` seconds; zombies reaped."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    deadline = time.time() + grace
    sent = signal.SIGTERM
    while True:
        left = descendants(os.getpid())
        if not left:
            break
        if time.time() > deadline:
            sent = signal.SIGKILL
        for pid in left:
            try:
                os.kill(pid, sent)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.1)
        _reap()


ROW_RESULT = "row.json"


def run_one_row(args, runner: Runner, stages: Stages, raw: Path) -> int:
    """``--row NAME``: run that row's stages and write its results (and the stages it ran or skipped) to
    ``schemes/NAME/row.json`` for the pipeline that started it."""
    run = RowRun(ROWS[args.row], args, runner, stages, raw)
    row = run.run_all()
    path = run.dir / ROW_RESULT
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"row": row, "ran": stages.ran, "skipped": stages.skipped}, default=str))
    os.replace(tmp, path)
    return 0


def run_rows_side_by_side(args, argv: list[str], stages: Stages) -> list[dict]:
    """Run every row as ``morphtok-demo ARGV --row NAME``, ``args.jobs`` at a time, in the order of
    ``--schemes``; their stage lines go to this terminal.  A failing row lets the running ones finish (their stages
    are recorded, so a rerun skips them) and starts no other; then the pipeline stops with the row's name.  The
    rows' results come back in ``schemes/NAME/row.json``."""
    pending, running, failed = list(args.schemes), {}, []
    env = child_env()
    bar = tqdm(total=len(pending), desc=f"schemes ({args.jobs} at a time)", unit="scheme", file=sys.stderr)
    try:
        while pending or running:
            while pending and len(running) < args.jobs and not failed:
                name = pending.pop(0)
                (args.output / "schemes" / name / ROW_RESULT).unlink(missing_ok=True)
                cmd = [sys.executable, "-m", "train_scripts.pipeline", *map(str, argv), "--row", name,
                       "--jobs", "1", "--threads", str(args.threads)]
                running[name] = subprocess.Popen(cmd, env=env)
            time.sleep(0.2)
            for name, proc in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                bar.update()
                if proc.returncode != 0:
                    failed.append(f"{name} (exit {proc.returncode})")
    finally:
        bar.close()
    if failed:
        raise PipelineError(f"row {', '.join(failed)} failed: its error is above; a rerun skips the stages that "
                            "finished")
    rows = []
    for name in args.schemes:
        saved = json.loads((args.output / "schemes" / name / ROW_RESULT).read_text())
        stages.ran += saved["ran"]
        stages.skipped += saved["skipped"]
        rows.append(saved["row"])
    return rows


def significance(rows: list, row_runs: list, raw: Path, baseline: str) -> dict:
    """sacreBLEU's CIs and paired tests against the baseline row, per test set, into each row's ``tests``."""
    from train_scripts.significance import compare_test_sets

    hyps: dict = {}
    for run in row_runs:
        for test_set, lines in run.hypotheses().items():
            hyps.setdefault(test_set, {})[run.row.name] = lines
    res = compare_test_sets(hyps, _read(raw / "test.de"), baseline)
    for row in rows:
        row["tests"] = res["systems"].get(row["name"], {})
    return res["settings"]


def summary(args, counts: dict) -> str:
    budget = (f"trained with early stopping (patience {args.patience} validations, at most {args.max_update} "
              f"updates) on {args.device.upper()}, the best checkpoint averaged with the {args.average - 1} before "
              "it" if args.patience > 0 else
              f"trained for {args.max_update} updates of at most {args.max_tokens} tokens on {args.device.upper()} "
              f"(the same budget for every row; what each row saw in sentence pairs and tokens: Training budget), "
              f"the last {args.average} checkpoints averaged")
    return (f"{counts['train']} training pairs, {counts['valid']} validation, {counts['test']} test "
            f"(test_2016_flickr). Every scheme: the same Transformer ({args.layers} layers, {args.embed_dim} "
            f"dimensions, {args.heads} heads) {budget}, beam 4, length penalty 0.6, with the recipes users run "
            "(binarize, train_transformer_big.sh, average_checkpoints, evaluate)."
            + (f" Rows ran {min(args.jobs, len(args.schemes))} at a time, {args.threads} torch "
               f"thread{'s' if args.threads > 1 else ''} each." if args.device == "cpu" else ""))


#: ``--part``: the translation comparison (this module), RoBERTa pretraining -> fine-tuning
#: (``train_scripts/lm_demo.py``), or both, one report
PARTS = ("all", "translation", "pretraining")
#: options both parts take (the pretraining part's own options all start with ``--lm-``)
SHARED_OPTIONS = {"--output": 1, "--dry-run": 0, "--jobs": 1, "--threads": 1}


def split_parts(argv: list) -> tuple:
    """``--part`` and the options of each part: ``(part, translation argv, pretraining argv)``."""
    part, rest, i = "all", [], 0
    while i < len(argv):
        if argv[i] == "--part" and i + 1 < len(argv):
            part, i = argv[i + 1], i + 2
        elif argv[i].startswith("--part="):
            part, i = argv[i].split("=", 1)[1], i + 1
        else:
            rest.append(argv[i])
            i += 1
    if part not in PARTS:
        raise UserError(f"--part must be one of {', '.join(PARTS)}, not {part!r}")
    if "--row" in rest:         # one row of the translation part, started by the pipeline itself
        return "translation", rest, rest
    translation, lm, i = [], [], 0
    while i < len(rest):
        token = rest[i]
        name = token.split("=", 1)[0]
        if name.startswith("--lm-"):
            j = i + 1
            while j < len(rest) and not rest[j].startswith("--"):
                j += 1
            lm += rest[i:j]
        elif name in SHARED_OPTIONS:
            j = i + 1 + (SHARED_OPTIONS[name] if "=" not in token else 0)
            translation += rest[i:j]
            lm += rest[i:j]
        else:
            j = i + 1
            translation.append(token)
        i = j
    return part, translation, lm


def main(argv=None) -> int:
    """``morphtok-demo``: the translation part, the pretraining part, or both (``--part``, default all)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        part, translation, lm = split_parts(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from train_scripts import lm_demo, lm_report

    shared = {a for a in argv if a.split("=", 1)[0] in SHARED_OPTIONS}
    unused = [a for a in (lm if part == "translation" else translation if part == "pretraining" else [])
              if a.startswith("--") and a not in shared]
    if unused:   # e.g. make demo's --data with --part pretraining
        say(f"note: --part {part} does not use {' '.join(unused)}")
    status = 0
    if part in ("all", "translation"):
        status = translation_main(translation)
    if part in ("all", "pretraining") and status == 0:
        status = lm_demo.main(lm)
    if status == 0 and "--dry-run" not in argv and "--row" not in argv:   # one report with both parts
        out = _output_option(argv)
        if lm_report.attach_to_demo_report(str(out)):
            say(f"report: {out / 'REPORT.md'} and {out / 'report.html'} (both parts)")
    return status


def _output_option(argv: list) -> Path:
    """The ``--output`` of a command line (default: demo-output), resolved."""
    out = "demo-output"
    for i, token in enumerate(argv):
        if token == "--output" and i + 1 < len(argv):
            out = argv[i + 1]
        elif token.startswith("--output="):
            out = token.split("=", 1)[1]
    return Path(out).resolve()


def translation_main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.output
    raw = out / "raw"
    if args.dry_run:  # before anything is written
        print(f"# preset {args.preset} ({args.device}): " + ", ".join(f"{k.replace('_', '-')} {getattr(args, k)}"
                                                                 for k in PRESET_OPTIONS) + " (0 lines: all)")
        print(" ".join(["python", "-m", "preprocess.evaluate.noise", "perturb", "--kind", "KIND", "--fraction",
                        str(args.noise_fraction), "--seed", str(args.noise_seed), "--input", str(raw / "test.en"),
                        "--output", str(noisy_test_file(out, "KIND"))]))
        for name in args.schemes:
            print(f"# {name}")
            print("\n".join(RowRun(ROWS[name], args, None, None, raw).plan()))
        return 0
    signal.signal(signal.SIGTERM, _terminate)  # a killed pipeline stops its child processes too
    _become_subreaper()
    os.environ["NLTK_DATA"] = child_env()["NLTK_DATA"]  # BITE runs in this process (binarize, metrics)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(out, args.threads)
    stages = Stages(out)
    sizes = {"train": args.train_lines, "valid": args.valid_lines, "test": args.test_lines}
    t0 = time.time()
    try:
        row = args.row is not None   # the pipeline that started this row has just run the data stages
        counts = stages.run("data", [raw], lambda: prepare_raw(args.data, raw, sizes),
                            key={"data": str(args.data), **sizes}, quiet=row)
        noise_stats = stages.run("noise", [noisy_test_file(out, k) for k in NOISE_KINDS],
                                 lambda: make_noise(args, raw),
                                 key={"fraction": args.noise_fraction, "seed": args.noise_seed}, after=("data",),
                                 quiet=row)
        if row:
            return run_one_row(args, runner, stages, raw)
        runs = [RowRun(ROWS[name], args, runner, stages, raw) for name in args.schemes]
        if args.jobs > 1 and len(runs) > 1:
            rows = run_rows_side_by_side(args, argv if argv is not None else sys.argv[1:], stages)
        else:
            rows = [run.run_all() for run in tqdm(runs, desc="schemes", unit="scheme", file=sys.stderr)]
        sig = significance(rows, runs, raw, args.baseline)
    except (PipelineError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BaseException:  # interrupted (SIGINT, SIGTERM): nothing this run started may outlive it
        stop_descendants()
        raise
    from train_scripts.report import write_report

    meta = {
        "dataset": f"Multi30k En->De ({args.data})",
        "summary": summary(args, counts),
        "preset": args.preset, "preset_note": PRESETS[args.preset]["note"],
        "options": {k: getattr(args, k) for k in PRESET_OPTIONS},
        "preset_overrides": {k: getattr(args, k) for k in PRESET_OPTIONS
                             if getattr(args, k) != PRESETS[args.preset][k]},
        "max_update": args.max_update, "baseline": args.baseline,
        "parallel": {"jobs": min(args.jobs, len(args.schemes)), "threads": args.threads,
                     "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()},
        "noise": {"fraction": args.noise_fraction, "seed": args.noise_seed,
                  "files": {k: noisy_test_file(out, k).name for k in NOISE_KINDS}, "stats": noise_stats},
        "significance": sig,
        "versions": versions(),
        "commands": [" ".join(shlex.quote(a) for a in ["morphtok-demo",
                                                        *(argv if argv is not None else sys.argv[1:])])]
                    + (out / "commands.txt").read_text(encoding="utf-8").splitlines(),
        "seconds": time.time() - t0,
        "skipped_stages": stages.skipped,
        "rerun_stages": stages.ran,
    }
    results = {"meta": meta, "schemes": rows}
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    paths = write_report(results, str(out))
    print(f"report: {paths['markdown']} and {paths['html']} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
