"""The comparison pipeline behind ``make demo``: every scheme, end to end, on Multi30k En->De, one report.

For each scheme: learn the subword model(s), encode, ``fairseq-preprocess``, train the same tiny Transformer for
the same number of updates, average the last checkpoints, generate the test set, decode with the scheme's own
decoder and score with sacreBLEU; plus intrinsic metrics (sequence lengths, vocabulary use, morph boundary
P/R/F1, BITE coverage, FLOTA coverage).  Writes ``REPORT.md``, ``report.html``, plots and ``results.json`` into
``--output``; every intermediate file stays under it.

Each stage is resumable: a stage whose ``.done`` record exists (and whose outputs are there) is skipped; an
interrupted stage is cleaned and rerun.  A failing step stops with ``pipeline stage <name> failed: ...`` and the
path of its log.

    python -m train_scripts.pipeline --data ../shared/data/multi30k --output demo-output \\
        [--schemes bpe unigram ...] [--train-lines 8000] [--max-update 300]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

REPO = Path(__file__).resolve().parent.parent
SPACE = "\u2581"


# --- schemes -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scheme:
    """How one scheme turns the En->De corpus into fairseq input and how its output is decoded."""

    name: str
    label: str
    kind: str  # spm | bite | wordmap | flota
    model_type: str = "unigram"
    variant: str = "default"
    src_spaces: str = "keep"
    note: str = ""


SCHEMES = {s.name: s for s in [
    Scheme("bpe", "BPE", "spm", "bpe", "default", note="SentencePiece BPE, joint En+De"),
    Scheme("unigram", "Unigram", "spm", "unigram", "default", note="SentencePiece Unigram, joint En+De"),
    Scheme("bpe_prime", "BPE'", "spm", "bpe", "prime", note="spaces always their own token"),
    Scheme("bpe_prime_nospace", "BPE' no spaces", "spm", "bpe", "prime", "drop",
           note="space tokens dropped on the source; the target keeps them (a decoder must generate spaces)"),
    Scheme("unigram_prime", "Unigram'", "spm", "unigram", "prime", note="spaces always their own token"),
    Scheme("unigram_prime_nospace", "Unigram' no spaces", "spm", "unigram", "prime", "drop",
           note="space tokens dropped on the source; the target keeps them"),
    Scheme("bite_unigram", "BITE+Unigram", "bite", "unigram", "default",
           note="BITE on the English source, Unigram trained on BITE(en)+de with the inflection symbols"),
    Scheme("wordmap", "Wordmap", "wordmap", "unigram", "default",
           note="German target: verbs by Wordmap, other words by a German Unigram; English source: Unigram"),
    Scheme("flota", "FLOTA k=3", "flota", "unigram", "default",
           note="English source by FLOTA (k=3) over the Unigram baseline vocabulary; target Unigram"),
]}


class PipelineError(RuntimeError):
    pass


# --- running things --------------------------------------------------------------------------------------------

def tool_env() -> dict:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    shared_nltk = REPO.parent / "shared" / "data" / "nltk_data"
    env["NLTK_DATA"] = os.pathsep.join(p for p in (env.get("NLTK_DATA"), str(shared_nltk)) if p)
    return env


class Runner:
    """Runs commands with logs under the output directory and records them for the report."""

    def __init__(self, out: Path, threads: int):
        self.out = out
        self.commands: list[str] = []
        self.env = tool_env()
        self.env["OMP_NUM_THREADS"] = str(threads)

    def run(self, stage: str, args: list, log: Path, on_line=None) -> str:
        args = [str(a) for a in args]
        if args[0] == "python":
            args[0] = sys.executable
        shown = " ".join(shlex.quote(a) for a in args).replace(sys.executable, "python")
        self.commands.append(shown)
        with open(self.out / "commands.txt", "a", encoding="utf-8") as fh:  # survives resumed runs
            fh.write(shown + "\n")
        log.parent.mkdir(parents=True, exist_ok=True)
        err_log = log.with_suffix(".err")
        # stdout and stderr stay separate: merged, their buffers interleave mid-line and lines get lost
        with open(log, "w", encoding="utf-8") as fh, open(err_log, "w", encoding="utf-8") as err:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True, env=self.env, cwd=REPO)
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
    """Resumable stages: ``<out>/.stages/<name>.json`` records a finished stage and its result."""

    def __init__(self, out: Path):
        self.dir = out / ".stages"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.skipped: list[str] = []
        self.ran: list[str] = []

    def run(self, name: str, outputs: list[Path], fn):
        record = self.dir / f"{name.replace('/', '__')}.json"
        if record.exists() and all(Path(p).exists() for p in outputs):
            self.skipped.append(name)
            tqdm.write(f"[skip] {name} (done)", file=sys.stderr)
            return json.loads(record.read_text())["result"]
        for p in outputs:  # an interrupted stage restarts cleanly
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
        tmp.write_text(json.dumps({"result": result, "seconds": time.time() - t0}))
        os.replace(tmp, record)
        self.ran.append(name)
        return result


# --- data ---------------------------------------------------------------------------------------------------

def default_data() -> Path | None:
    shared = REPO.parent / "shared" / "data" / "multi30k"
    return shared if shared.exists() else None


def _read(path: Path, n: int) -> list[str]:
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


# --- one scheme ---------------------------------------------------------------------------------------------

class SchemeRun:
    def __init__(self, scheme: Scheme, args, runner: Runner, stages: Stages, raw: Path):
        self.s = scheme
        self.args = args
        self.runner = runner
        self.stages = stages
        self.raw = raw
        self.dir = args.output / "schemes" / scheme.name
        self.models = self.dir / "models"
        self.tok = self.dir / "tok"
        self.bin = self.dir / "bin"
        self.ckpt = self.dir / "checkpoints"
        self.logs = self.dir / "logs"

    def stage(self, what: str, outputs, fn):
        return self.stages.run(f"{self.s.name}/{what}", outputs, fn)

    def py(self, what: str, *args, log: str):
        return self.runner.run(f"{self.s.name}/{what}", ["python", "-m", *args], self.logs / log)

    # -- learn and encode -------------------------------------------------------------------------------
    def learn(self) -> dict:
        s, raw, m = self.s, self.raw, self.models
        m.mkdir(parents=True, exist_ok=True)
        vs = str(self.args.vocab_size)
        spm = ["preprocess.spaces", "train", "--model-type", s.model_type, "--vocab-size", vs, "--seed", "1",
               "--character-coverage", "1.0"]
        if s.kind in ("spm", "flota"):
            self.py("learn", *spm, "--variant", s.variant, "--input", raw / "train.en", raw / "train.de",
                    "--model-prefix", m / "joint", log="learn.log")
        elif s.kind == "bite":
            self.py("learn", "preprocess.encode", "--scheme", "bite", "--pretokenizer", "moses", "--tagger",
                    "nltk", "--inputs", raw / "train.en", "--outputs", m / "train.bite.en", "--workers",
                    str(self.args.workers), "--quiet", log="bite-train.log")
            self.py("learn", *spm, "--variant", s.variant, "--user-symbols", "bite", "--input",
                    m / "train.bite.en", raw / "train.de", "--model-prefix", m / "joint", log="learn.log")
        elif s.kind == "wordmap":
            self.py("learn", *spm, "--variant", "default", "--input", raw / "train.en",
                    "--model-prefix", m / "en", log="learn-en.log")
            self.py("learn", "preprocess.wordmap", "build", "--input", raw / "train.de", "--output",
                    m / "wordmap.txt", "--spm-prefix", m / "de", "--spm-vocab-size", vs, "--quiet",
                    log="learn-de.log")
        return {}

    def encoders(self) -> dict:
        """Per language: the preprocess.encode arguments; plus the generate-side decoding arguments."""
        s, m = self.s, self.models
        joint = ["--scheme", "spaces", "--model", m / "joint.model"]
        if s.kind == "spm":
            return {"en": joint + ["--spaces", s.src_spaces], "de": joint + ["--spaces", "keep"],
                    "decode": ["--bpe", "spaces", "--spaces-model", m / "joint.model", "--spaces", "keep"],
                    "joined": True}
        if s.kind == "bite":
            return {"en": ["--scheme", "bite", "--pretokenizer", "moses", "--tagger", "nltk", "--subword-model",
                           m / "joint.model"],
                    "de": joint + ["--spaces", "keep"],
                    "decode": ["--bpe", "spaces", "--spaces-model", m / "joint.model", "--spaces", "keep"],
                    "joined": True}
        if s.kind == "wordmap":
            wm = ["--wordmap-vocab", m / "wordmap.txt", "--wordmap-spm", m / "de.model"]
            return {"en": ["--scheme", "spaces", "--model", m / "en.model"], "de": ["--scheme", "wordmap", *wm],
                    "decode": ["--bpe", "wordmap", *wm], "joined": False}
        if s.kind == "flota":
            return {"en": ["--scheme", "flota", "--flota-vocab", m / "joint.model", "--flota-style",
                           "sentencepiece", "--flota-k", "3", "--flota-mode", "flota"],
                    "de": joint + ["--spaces", "keep"],
                    "decode": ["--bpe", "spaces", "--spaces-model", m / "joint.model", "--spaces", "keep"],
                    "joined": True}
        raise PipelineError(f"unknown scheme kind {s.kind}")

    def encode(self) -> dict:
        enc = self.encoders()
        self.tok.mkdir(parents=True, exist_ok=True)
        for lang in ("en", "de"):
            ins = [self.raw / f"{split}.{lang}" for split in ("train", "valid", "test")]
            outs = [self.tok / f"{split}.{lang}" for split in ("train", "valid", "test")]
            self.py("encode", "preprocess.encode", *enc[lang], "--inputs", *ins, "--outputs", *outs,
                    "--workers", str(self.args.workers), "--quiet", log=f"encode-{lang}.log")
        for split in ("train", "valid", "test"):
            n = [len(_read(self.tok / f"{split}.{lang}", 0)) for lang in ("en", "de")]
            n_raw = len(_read(self.raw / f"{split}.en", 0))
            if n != [n_raw, n_raw]:
                raise PipelineError(f"{self.s.name}: encoded {split} has {n} lines, raw has {n_raw}")
        return {}

    def binarize(self) -> dict:
        enc = self.encoders()
        args = ["fairseq-preprocess", "--source-lang", "en", "--target-lang", "de",
                "--trainpref", self.tok / "train", "--validpref", self.tok / "valid", "--testpref", self.tok / "test",
                "--destdir", self.bin, "--workers", str(self.args.workers)]
        if enc["joined"]:
            args += ["--joined-dictionary"]
        self.runner.run(f"{self.s.name}/binarize", args, self.logs / "preprocess.log")
        return {"dict_en": _count_lines(self.bin / "dict.en.txt"), "dict_de": _count_lines(self.bin / "dict.de.txt")}

    # -- train, average, generate ------------------------------------------------------------------------
    def train(self) -> dict:
        a = self.args
        user_dir = str(REPO / "fairseq_plugins")
        cmd = ["fairseq-train", self.bin, "--user-dir", user_dir, "--task", "translation",
               "--arch", "transformer", "--encoder-layers", str(a.layers), "--decoder-layers", str(a.layers),
               "--encoder-embed-dim", str(a.embed_dim), "--decoder-embed-dim", str(a.embed_dim),
               "--encoder-ffn-embed-dim", str(2 * a.embed_dim), "--decoder-ffn-embed-dim", str(2 * a.embed_dim),
               "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
               "--dropout", "0.1", "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--lr", str(a.lr),
               "--lr-scheduler", "inverse_sqrt", "--warmup-updates", str(a.warmup), "--clip-norm", "1.0",
               "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
               "--max-tokens", str(a.max_tokens), "--max-update", str(a.max_update),
               "--validate-interval-updates", str(a.valid_every), "--save-interval-updates", str(a.valid_every),
               "--keep-interval-updates", str(a.average), "--no-epoch-checkpoints", "--save-dir", self.ckpt,
               "--cpu", "--seed", "1", "--log-format", "json", "--log-interval", "10", "--no-progress-bar",
               "--num-workers", "0"]
        if self.encoders()["joined"]:
            cmd.append("--share-all-embeddings")
        curve: list[list[float]] = []
        bar = tqdm(total=a.max_update, desc=f"{self.s.name} train", unit="upd", leave=False, file=sys.stderr)

        def on_line(line: str):
            rec = _json_record(line)
            if rec is None:
                return
            if "valid_loss" in rec:
                curve.append([int(rec["valid_num_updates"]), float(rec["valid_loss"])])
            n = rec.get("num_updates") or rec.get("train_num_updates") or rec.get("valid_num_updates")
            if n is not None:
                bar.n = min(int(n), a.max_update)
                bar.refresh()

        t0 = time.time()
        try:
            self.runner.run(f"{self.s.name}/train", cmd, self.logs / "train.log", on_line)
        finally:
            bar.close()
        seconds = time.time() - t0
        (self.dir / "valid_curve.json").write_text(json.dumps(curve))
        return {"train_seconds": seconds, "valid_curve": curve, "final_valid_loss": curve[-1][1] if curve else None}

    def average(self) -> dict:
        ckpts = sorted(self.ckpt.glob("checkpoint_*_*.pt"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        chosen = ckpts[-self.args.average:] or [self.ckpt / "checkpoint_last.pt"]
        self.py("average", "train_scripts.average_checkpoints", "--inputs", *chosen, "--output",
                self.ckpt / "averaged.pt", log="average.log")
        return {"averaged": [p.name for p in chosen]}

    def generate(self) -> dict:
        enc = self.encoders()
        out = self.runner.run(
            f"{self.s.name}/generate",
            ["fairseq-generate", self.bin, "--user-dir", str(REPO / "fairseq_plugins"), "--task", "translation",
             "--path", self.ckpt / "averaged.pt", "--gen-subset", "test", "--beam", "4", "--lenpen", "0.6",
             "--max-len-a", "1.2", "--max-len-b", "10", "--batch-size", "64", "--cpu", *enc["decode"]],
            self.logs / "generate.log")
        hyps = {}
        for line in out.splitlines():
            if line.startswith("D-"):
                parts = line.split("\t")
                hyps[int(parts[0][2:])] = parts[2] if len(parts) > 2 else ""
        n = len(_read(self.raw / "test.de", 0))
        if sorted(hyps) != list(range(n)):
            raise PipelineError(f"{self.s.name}: generate produced {len(hyps)} hypotheses for {n} sentences")
        (self.dir / "hyp.de").write_text("\n".join(hyps[i] for i in range(n)) + "\n", encoding="utf-8")
        return {}

    def score(self) -> dict:
        import sacrebleu

        hyps = _read(self.dir / "hyp.de", 0)
        refs = _read(self.raw / "test.de", 0)
        bleu = sacrebleu.metrics.BLEU()
        chrf = sacrebleu.metrics.CHRF()
        b = bleu.corpus_score(hyps, [refs])
        c = chrf.corpus_score(hyps, [refs])
        leftover = sum(SPACE in h or "[VB" in h or "[NN" in h for h in hyps)
        return {"bleu": b.score, "chrf": c.score, "bleu_signature": str(bleu.get_signature()),
                "chrf_signature": str(chrf.get_signature()), "hyps_with_token_marks": leftover}

    # -- intrinsic ------------------------------------------------------------------------------------------
    def intrinsic(self) -> dict:
        from preprocess.evaluate import morph

        res: dict = {}
        raw_test = {lang: _read(self.raw / f"test.{lang}", 0) for lang in ("en", "de")}
        for lang, side in (("en", "src"), ("de", "tgt")):
            tok = _read(self.tok / f"test.{lang}", 0)
            n_tok = sum(len(t.split()) for t in tok)
            n_words = sum(len(t.split()) for t in raw_test[lang])
            res[f"{side}_tok_per_sent"] = n_tok / max(1, len(tok))
            res[f"{side}_tok_per_word"] = n_tok / max(1, n_words)
            train_types = {p for line in _read(self.tok / f"train.{lang}", 0) for p in line.split()}
            res.setdefault("vocab", {})[lang] = {"types_used_in_train": len(train_types)}
        gold_en = self.args.gold_en
        s, m = self.s, self.models
        if gold_en and gold_en.exists() and s.kind in ("spm", "bite", "flota"):
            gold = morph.read_gold(str(gold_en))
            if s.kind == "flota":
                from preprocess.flota import FlotaTokenizer

                ft = FlotaTokenizer(str(m / "joint.model"), "sentencepiece", k=3)
                seg = ft.tokenize_word
            else:
                seg = morph.spm_segmenter(str(m / "joint.model"), s.src_spaces)
            r = morph.evaluate(seg, gold)
            res["boundary"] = {k: r[k] for k in ("precision", "recall", "f1", "mean_pieces", "n_words")}
            res["boundary"]["gold"] = gold_en.name + (" (FLOTA drops uncovered characters: words whose pieces "
                                                       "do not spell them are skipped)" if s.kind == "flota" else "")
        if s.kind == "wordmap" and self.args.gold_de and self.args.gold_de.exists():
            res["boundary"] = _wordmap_boundary(m, self.args.gold_de)
        res["extra"] = self.extra_metrics(raw_test)
        examples = []
        tok_en = _read(self.tok / "test.en", 0)
        tok_de = _read(self.tok / "test.de", 0)
        for i in self.args.example_ids:
            if i < len(tok_en):
                examples.append({"raw": raw_test["en"][i], "tokens": tok_en[i], "raw_de": raw_test["de"][i],
                                 "tokens_de": tok_de[i]})
        res["examples"] = examples
        return res

    def extra_metrics(self, raw_test) -> dict:
        s, m = self.s, self.models
        extra = {}
        try:
            if s.kind == "bite":
                from preprocess.evaluate import bite as bite_eval

                train_en = _read(self.raw / "train.en", 0)
                cov = bite_eval.coverage_report(train_en, [500, 1000, 2000, 4000])
                extra["coverage"] = {k: cov[k] for k in ("types_unencoded", "types_bite", "coverage_unencoded",
                                                         "coverage_bite")}
                words = sorted({w for line in raw_test["en"] for w in line.split()})
                extra["symbol_complexity_lambda2"] = bite_eval.model_complexity(str(m / "joint.model"), words)
            if s.kind == "flota" and self.args.gold_en and self.args.gold_en.exists():
                from preprocess.evaluate import flota as flota_eval

                gold = flota_eval.read_two_morph_gold(str(self.args.gold_en))
                from preprocess.flota import load_vocab

                vocab = load_vocab(str(m / "joint.model"))
                tokens = frozenset(vocab.tokens) if hasattr(vocab, "tokens") else frozenset(vocab)
                words = flota_eval.select_words(gold, tokens, SPACE)
                if words:
                    extra["morph"] = flota_eval.morph_metrics(str(m / "joint.model"), "sentencepiece", "flota",
                                                              words)
                extra["n_two_morph_words"] = len(words)
            if s.kind == "wordmap":
                from preprocess.wordmap import WordmapVocabulary

                voc = WordmapVocabulary.load(str(m / "wordmap.txt"))
                extra["wordmap_vocabulary"] = {"functional": len(voc.functional), "lexemic": len(voc.lexemic)}
        except Exception as exc:  # intrinsic extras must not sink the whole comparison; say what happened
            extra["error"] = f"{type(exc).__name__}: {exc}"
        return extra

    def run_all(self) -> dict:
        row = {"name": self.s.name, "label": self.s.label, "note": self.s.note, "direction": "en-de"}
        self.stage("learn", [self.models], self.learn)
        self.stage("encode", [self.tok], self.encode)
        row["dict_sizes"] = self.stage("binarize", [self.bin], self.binarize)
        row.update(self.stage("train", [self.ckpt], self.train))
        row["averaged"] = self.stage("average", [self.ckpt / "averaged.pt"], self.average)["averaged"]
        self.stage("generate", [self.dir / "hyp.de"], self.generate)
        row.update(self.stage("score", [], self.score))
        row.update(self.stage("intrinsic", [], self.intrinsic))
        return row


def _wordmap_boundary(models: Path, gold_de: Path) -> dict:
    """Creutz boundary P/R/F1 of the scheme's Wordmap vocabulary on the German derivational verbs."""
    from preprocess import wordmap
    from preprocess.evaluate.morph import boundary_prf
    from preprocess.evaluate.wordmap import read_derivational_verbs

    vocab = wordmap.WordmapVocabulary.load(str(models / "wordmap.txt"))
    gold = read_derivational_verbs(str(gold_de))
    r = boundary_prf([wordmap.segment(w, vocab) for w, _ in gold], [m for _, m in gold])
    out = {k: r[k] for k in ("precision", "recall", "f1", "mean_pieces", "n_words")}
    out["gold"] = gold_de.name + " (German derivational verbs)"
    return out


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
    for mod in ("torch", "fairseq", "sentencepiece", "sacrebleu", "nltk", "lemminflect", "HanTa"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "installed")
        except Exception:  # noqa: BLE001 - report what is missing instead of failing
            out[mod] = "not installed"
    return out


# --- main ---------------------------------------------------------------------------------------------------

def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m train_scripts.pipeline", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", type=Path, default=default_data(),
                    help="Multi30k folder (raw train/val/test_2016_flickr .en/.de[.gz])")
    ap.add_argument("--output", type=Path, default=Path("demo-output"), help="everything is written here")
    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(SCHEMES))
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
    ap.add_argument("--gold-en", type=Path, default=REPO.parent / "shared" / "data" / "morph_gold" / "eng.word.dev.tsv")
    ap.add_argument("--gold-de", type=Path,
                    default=REPO.parent / "shared" / "data" / "morph_gold" / "deu.derivational.v1.tsv")
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
    return args


def download_multi30k(dest: Path) -> Path | None:
    """The online download of the recipes (prepare_multi30k.sh); None when it fails (offline)."""
    if (dest / "train.en").exists():
        return dest
    print(f"no local Multi30k: downloading it into {dest}", file=sys.stderr)
    proc = subprocess.run(["bash", str(REPO / "train_scripts" / "prepare_multi30k.sh"), "--out", str(dest)],
                          env=tool_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr.strip()[-500:], file=sys.stderr)
        return None
    return dest


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)  # a killed pipeline stops its child processes too
    os.environ["NLTK_DATA"] = tool_env()["NLTK_DATA"]  # BITE's intrinsic metrics run in this process
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(out, args.threads)
    stages = Stages(out)
    raw = out / "raw"
    sizes = {"train": args.train_lines, "valid": args.valid_lines, "test": args.test_lines}
    t0 = time.time()
    try:
        counts = stages.run("data", [raw], lambda: prepare_raw(args.data, raw, sizes))
        rows = []
        for name in tqdm(args.schemes, desc="schemes", unit="scheme", file=sys.stderr):
            rows.append(SchemeRun(SCHEMES[name], args, runner, stages, raw).run_all())
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from train_scripts.report import write_report

    meta = {
        "dataset": f"Multi30k En->De ({args.data})",
        "summary": (f"{counts['train']} training pairs, {counts['valid']} validation, {counts['test']} test "
                    f"(test_2016_flickr). Every scheme: the same Transformer ({args.layers} layers, "
                    f"{args.embed_dim} dims) trained for {args.max_update} updates on CPU, the last "
                    f"{args.average} checkpoints averaged, beam 4, length penalty 0.6. "
                    "A tiny model: BLEU compares schemes under a fixed small budget, not their best quality."),
        "versions": versions(),
        "commands": [" ".join(shlex.quote(a) for a in ["python", "-m", "train_scripts.pipeline",
                                                        *(argv if argv is not None else sys.argv[1:])])]
                    + (out / "commands.txt").read_text(encoding="utf-8").splitlines(),
        "seconds": time.time() - t0,
        "skipped_stages": stages.skipped,
    }
    results = {"meta": meta, "schemes": rows}
    (out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    paths = write_report(results, str(out))
    print(f"report: {paths['markdown']} and {paths['html']} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
