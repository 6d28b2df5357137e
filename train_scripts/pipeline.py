"""The comparison behind ``make demo``: every scheme through the recipes users run, on Multi30k En->De, one report.

The demo is a list of recipe configurations (:data:`ROWS`): each row is a configuration of the scheme registry
(``train_scripts/schemes``) and runs through exactly what a researcher runs on a cluster:
``train_scripts.binarize`` -> ``train_scripts/train_transformer_big.sh`` (with the CPU budget preset's options)
-> ``train_scripts.average_checkpoints`` -> ``train_scripts.evaluate``, plus intrinsic metrics (sequence lengths,
vocabulary use, morph boundary P/R/F1, the scheme's own metrics).  Writes ``REPORT.md``, ``report.html``, plots
and ``results.json`` into ``--output``; every intermediate file stays under it.

Each stage is resumable: a stage whose record exists, whose outputs are there and whose options and inputs are
the same is skipped; a stage whose options or inputs changed reruns, and so does everything that depends on it
(the record keeps a fingerprint of them).  An interrupted stage is cleaned and rerun.  A failing step stops with
``pipeline stage <name> failed: ...`` and the path of its log.

    morphtok-demo --data ../shared/data/multi30k --output demo-output [--schemes bpe unigram ...] \\
        [--train-lines 10000] [--max-update 250]
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

from preprocess.common import UserError
from preprocess.spm import SPACE_SYMBOL
from train_scripts import binarize as binarize_recipe
from train_scripts import evaluate as evaluate_recipe
from train_scripts.schemes import make_scheme
from train_scripts.train_log import validation_curve
from train_scripts.tools import REPO, SHARED_DATA, child_env


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
        (a tool that logs only to stderr), into the stdout stream."""
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
                                    text=True, env=self.env, cwd=REPO)
            lines = []
            try:
                for line in proc.stdout:
                    fh.write(line)
                    lines.append(line)
                    if on_line is not None:
                        on_line(line)
                rc = proc.wait()
            except BaseException:  # interrupted: never leave a training process running behind us
                proc.kill()
                proc.wait()
                raise
        if rc != 0:
            tail = "".join(lines[-4:]) + "".join(err_log.read_text(encoding="utf-8").splitlines(True)[-6:])
            raise PipelineError(f"pipeline stage {stage} failed (exit {rc}); logs: {log} {err_log}\n{tail.strip()}")
        return "".join(lines)


class Stages:
    """Resumable stages: ``<out>/.stages/<name>.json`` records a finished stage, the fingerprint of the options
    and inputs that produced it, and its result."""

    def __init__(self, out: Path):
        self.dir = out / ".stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.skipped: list[str] = []
        self.ran: list[str] = []
        self.fingerprints: dict[str, str] = {}

    def run(self, name: str, outputs: list[Path], fn, key=None, after: tuple[str, ...] = ()):
        """Run ``fn`` unless a record with the same fingerprint exists.  ``key``: the options and inputs of
        this stage (JSON-serialisable); ``after``: the stages whose results it uses (their fingerprints are part
        of this one, so a changed upstream stage reruns this one too)."""
        fingerprint = _fingerprint({"key": key, "after": [self.fingerprints[a] for a in after]})
        self.fingerprints[name] = fingerprint
        record = self.dir / f"{name.replace('/', '__')}.json"
        if record.exists() and all(Path(p).exists() for p in outputs):
            saved = json.loads(record.read_text())
            if saved.get("fingerprint") == fingerprint:
                self.skipped.append(name)
                tqdm.write(f"[skip] {name} (done with the same options)", file=sys.stderr)
                return saved["result"]
            tqdm.write(f"[rerun] {name}: its options or inputs changed", file=sys.stderr)
        for p in outputs:  # an interrupted or outdated stage restarts cleanly
            p = Path(p)
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
        tqdm.write(f"[run ] {name}", file=sys.stderr)
        t0 = time.time()
        try:
            result = fn()
        except PipelineError as exc:
            if str(exc).startswith("pipeline stage"):
                raise
            raise PipelineError(f"pipeline stage {name} failed: {exc}") from exc
        except Exception as exc:
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


# --- the CPU budget preset -----------------------------------------------------------------------------------------

def train_options(a) -> list[str]:
    """fairseq-train options of the budget preset, appended to the Transformer recipe's own (so they win)."""
    return ["--arch", "transformer", "--encoder-layers", a.layers, "--decoder-layers", a.layers,
            "--encoder-embed-dim", a.embed_dim, "--decoder-embed-dim", a.embed_dim,
            "--encoder-ffn-embed-dim", 2 * a.embed_dim, "--decoder-ffn-embed-dim", 2 * a.embed_dim,
            "--encoder-attention-heads", 4, "--decoder-attention-heads", 4, "--dropout", 0.1,
            "--lr", a.lr, "--warmup-updates", a.warmup, "--clip-norm", 1.0, "--max-tokens", a.max_tokens,
            "--update-freq", 1, "--max-update", a.max_update, "--validate-interval-updates", a.valid_every,
            "--save-interval-updates", a.valid_every, "--keep-interval-updates", a.average,
            "--no-epoch-checkpoints", "--patience", -1, "--seed", 1, "--log-interval", 10, "--no-progress-bar",
            "--num-workers", 0]


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
        return {"dict_sizes": {lang: _count_lines(Path(path)) for lang, path in info["dicts"].items()}}

    def train(self) -> dict:
        a = self.args
        cmd = ["bash", REPO / "train_scripts" / "train_transformer_big.sh", "--data", self.work,
               "--save-dir", self.ckpt, "--cpu", "--gpus", 1, *train_options(a)]
        bar = tqdm(total=a.max_update, desc=f"{self.row.name} train", unit="upd", leave=False, file=sys.stderr)

        def on_line(line: str):
            rec = _json_record(line)
            if rec is None:
                return
            n = rec.get("num_updates") or rec.get("train_num_updates") or rec.get("valid_num_updates")
            if n is not None:
                bar.n = min(int(n), a.max_update)
                bar.refresh()

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
        return {"train_cpu_seconds": cpu, "updates_per_cpu_second": a.max_update / cpu if cpu else None,
                "valid_curve": curve, "final_valid_loss": curve[-1][1] if curve else None}

    def average(self) -> dict:
        self.runner.run(f"{self.row.name}/average",
                        ["python", "-m", "train_scripts.average_checkpoints", "--inputs", self.ckpt,
                         "--num-update-checkpoints", self.args.average, "--output", self.ckpt / "averaged.pt"],
                        self.logs / "average.log")
        return {"averaged": self.args.average}

    def evaluate(self) -> dict:
        res = evaluate_recipe.evaluate(str(self.ckpt / "averaged.pt"), str(self.work), subset="test", beam=4,
                                       lenpen=0.6, batch_size=64, cpu=True, out_dir=str(self.eval),
                                       extra_args=["--max-len-a", "1.2", "--max-len-b", "10"])
        hyps = _read(self.eval / "hyp.txt")
        leftover = sum(SPACE_SYMBOL in h or "[VB" in h or "[NN" in h for h in hyps)
        keep = ("bleu", "chrf", "bleu_signature", "chrf_signature", "tok_bleu", "sentences")
        return {**{k: res[k] for k in keep}, "hyps_with_token_marks": leftover}

    # -- intrinsic ------------------------------------------------------------------------------------------
    def intrinsic(self) -> dict:
        info = evaluate_recipe.load_binarize_info(str(self.work))
        scheme = make_scheme(info["config"], ("en", "de"), info["models_dir"])
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
        try:
            res["extra"] = scheme.intrinsic(raw, gold)
        except Exception as exc:  # noqa: BLE001 - extras must not sink the comparison; the report says why
            res["extra"] = {"error": f"{type(exc).__name__}: {exc}"}
        res["examples"] = [{"raw": raw["test.en"][i], "tokens": tok["en"][i], "raw_de": raw["test.de"][i],
                            "tokens_de": tok["de"][i]} for i in self.args.example_ids if i < len(tok["en"])]
        return res

    def run_all(self) -> dict:
        a = self.args
        row = {"name": self.row.name, "label": self.row.label, "note": self.row.note, "direction": "en-de",
               "config": self.config}
        row.update(self.stage("binarize", [self.work], self.binarize, key=self.config, after=()))
        row.update(self.stage("train", [self.ckpt], self.train, key=[str(x) for x in train_options(a)],
                              after=("binarize",)))
        self.stage("average", [self.ckpt / "averaged.pt"], self.average, key=a.average, after=("train",))
        row.update(self.stage("evaluate", [self.eval], self.evaluate, key="beam4-lenpen0.6", after=("average",)))
        row.update(self.stage("intrinsic", [], self.intrinsic,
                              key=[str(a.gold_en), str(a.gold_de), a.example_ids], after=("binarize",)))
        return row


def _json_record(line: str):
    start = line.find("{")
    if start < 0:
        return None
    try:
        rec = json.loads(line[start:])
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def _count_lines(path: Path) -> int:
    with open(path, encoding="utf-8") as fh:
        return sum(1 for _ in fh)


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
    ap = argparse.ArgumentParser(prog="morphtok-demo", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", type=Path, default=default_data(),
                    help="Multi30k folder (raw train/val/test_2016_flickr .en/.de[.gz])")
    ap.add_argument("--output", type=Path, default=Path("demo-output"), help="everything is written here")
    ap.add_argument("--schemes", nargs="+", default=list(ROWS), choices=list(ROWS), help="rows of the comparison")
    ap.add_argument("--train-lines", type=int, default=10000)
    ap.add_argument("--valid-lines", type=int, default=300)
    ap.add_argument("--test-lines", type=int, default=500)
    ap.add_argument("--vocab-size", type=int, default=4000)
    ap.add_argument("--max-update", type=int, default=250)
    ap.add_argument("--valid-every", type=int, default=50, help="validate and save every N updates")
    ap.add_argument("--average", type=int, default=3, help="average the last N update checkpoints")
    ap.add_argument("--max-tokens", type=int, default=2048)
    ap.add_argument("--embed-dim", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="torch threads for training/generation")
    ap.add_argument("--gold-en", type=Path, default=SHARED_DATA / "morph_gold" / "eng.word.dev.tsv")
    ap.add_argument("--gold-de", type=Path, default=SHARED_DATA / "morph_gold" / "deu.derivational.v1.tsv")
    ap.add_argument("--example-ids", type=int, nargs="+", default=[0, 7, 21])
    args = ap.parse_args(argv)
    args.output = args.output.resolve()
    if args.data is None:
        args.data = download_multi30k(args.output / "multi30k-download")
    if args.data is None:
        ap.error("no data: ../shared/data/multi30k is not there and the online download failed. Pass --data DIR "
                 "with Multi30k's raw train/val/test_2016_flickr .en/.de files (github.com/multi30k/dataset, "
                 "data/task1/raw), or run train_scripts/prepare_multi30k.sh --out DIR when online")
    if not args.data.is_dir():
        ap.error(f"--data {args.data} is not a directory")
    for name in args.schemes:  # a bad scheme option is an error before any work starts
        make_scheme(ROWS[name].config, ("en", "de"), str(args.output))
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


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)  # a killed pipeline stops its child processes too
    os.environ["NLTK_DATA"] = child_env()["NLTK_DATA"]  # BITE runs in this process (binarize, metrics)
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(out, args.threads)
    stages = Stages(out)
    raw = out / "raw"
    sizes = {"train": args.train_lines, "valid": args.valid_lines, "test": args.test_lines}
    t0 = time.time()
    try:
        counts = stages.run("data", [raw], lambda: prepare_raw(args.data, raw, sizes),
                            key={"data": str(args.data), **sizes})
        rows = []
        for name in tqdm(args.schemes, desc="schemes", unit="scheme", file=sys.stderr):
            rows.append(RowRun(ROWS[name], args, runner, stages, raw).run_all())
    except (PipelineError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from train_scripts.report import write_report

    meta = {
        "dataset": f"Multi30k En->De ({args.data})",
        "summary": (f"{counts['train']} training pairs, {counts['valid']} validation, {counts['test']} test "
                    f"(test_2016_flickr). Every scheme: the same Transformer ({args.layers} layers, "
                    f"{args.embed_dim} dims) trained for {args.max_update} updates on CPU, the last "
                    f"{args.average} checkpoints averaged, beam 4, length penalty 0.6, with the recipes users run "
                    "(binarize, train_transformer_big.sh, average_checkpoints, evaluate). "
                    "A tiny model: BLEU compares schemes under a fixed small budget, not their best quality."),
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


if __name__ == "__main__":
    sys.exit(main())
