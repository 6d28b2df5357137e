"""Translate a test set with a trained model and score it.

    python -m train_scripts.evaluate --data work/spaces --checkpoint ckpt/avg.pt --out eval/spaces [--cpu]

1. ``fairseq-generate`` with beam 4 and length penalty 0.6 (``--beam``/``--lenpen``), decoding the output with
   the scheme's own decoder (the ``--bpe``/``--tokenizer`` arguments recorded by ``train_scripts.binarize`` in
   ``binarize.json``, or given with ``--generate-args``), so the hypotheses are plain text;
2. sacreBLEU BLEU and chrF on that detokenised text against the raw reference, with their signatures;
3. tokenised BLEU with compound splitting, as fairseq's WMT'14 En-De recipes report it: Moses-tokenise
   hypotheses and references, split hyphenated compounds (``a-b`` -> ``a ##AT##-##AT## b``), BLEU without
   further tokenisation.

Generation is bounded by default: at most ``1.2 * source length + 10`` target tokens (``--max-len-a``,
``--max-len-b``; fairseq's own default is a flat 200, which an undertrained model fills for every sentence) and
batches of at most 64 sentences and 4096 tokens (``--batch-size``, ``--max-tokens``).  Progress goes to stderr
while fairseq-generate runs.

The hypotheses stay aligned with the references: a hypothesis whose decoded text contains a line break (``\n``,
``\r``, U+2028 ... e.g. from SentencePiece's byte fallback) is joined into one line with spaces and counted in a
warning; empty hypotheses are counted in a warning, and a test set whose hypotheses are *all* empty is an error
(nothing was translated; a BLEU of 0.00 would hide it) unless ``--allow-empty`` is given.

Writes ``OUT/generate.txt`` (fairseq's output), ``OUT/hyp.txt`` (one hypothesis per test line, in order) and
``OUT/scores.json`` (the dict :func:`evaluate` returns, with the warnings), each complete or not at all.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from preprocess.cli import run_main
from preprocess.common import LINE_BREAKING, UserError, flatten_line
from preprocess.files.inputs import UTF8_HINT, read_lines
from preprocess.files.outputs import atomic_output, check_distinct, check_output_path
from train_scripts.tools import child_env, find_tool, plugins_dir

#: fairseq-generate's per-sentence records (S-, T-, H-, D-, P- ...) and its log lines; any other line that follows
#: a text record continues it (the decoded text contained a line break)
_RECORD = re.compile(r"^[A-Z]-\d+\t")
_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")

_COMPOUND = re.compile(r"(\S)-(\S)")
_SPEED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s \(([\d.]+) sentences/s, "
                    r"([\d.]+) tokens/s\)")


#: the default bound on generated length: at most ``MAX_LEN_A * source length + MAX_LEN_B`` target tokens (evaluation,
#: raw-text translation, the hub pair and the demo)
MAX_LEN_A, MAX_LEN_B = 1.2, 10


def add_length_args(p: argparse.ArgumentParser) -> None:
    """``--max-len-a``/``--max-len-b`` of the generating commands (evaluate, translate)."""
    p.add_argument("--max-len-a", type=float, default=MAX_LEN_A,
                   help="at most A * source length + B target tokens per hypothesis")
    p.add_argument("--max-len-b", type=int, default=MAX_LEN_B, help="see --max-len-a")


def load_binarize_info(path: str) -> dict:
    """``binarize.json`` of a ``train_scripts.binarize`` output folder (or the file itself), its paths where they
    are now (:func:`train_scripts.binarize.read_record`)."""
    from train_scripts.binarize import read_record
    return read_record(path, "give --data a train_scripts.binarize output folder, or --data-bin, --generate-args "
                             "and --ref")


def parse_generate_output(text: str) -> dict:
    """fairseq-generate stdout -> ``{"hyp": {id: detokenised text}, "hyp_tok": {id: tokens}, "speed": {...},
    "line_breaks": [ids]}``.

    Lines are split at ``\n`` only; a non-empty line that is neither a record (``X-<id>\t``) nor a log line
    continues the record before it, and is joined to it with a space, as are ``\r``, U+2028 and the other
    characters that would break a line elsewhere.  ``line_breaks`` lists the ids of the hypotheses that needed
    this."""
    records: list[list] = []   # [kind, id, text, continued]
    for line in text.split("\n"):
        if _RECORD.match(line):
            kind, rest = line.split("-", 1)
            idx, _, body = rest.partition("\t")
            records.append([kind, int(idx), body, False])
        elif _LOG.match(line):
            records.append(["log", None, line, False])
        elif line and records and records[-1][0] in ("D", "H", "T"):  # (an empty line adds nothing)
            records[-1][2] += " " + line
            records[-1][3] = True
    detok, tok = {}, {}
    broken: dict = {"D": set(), "H": set()}
    for kind, idx, body, continued in records:
        if kind in ("D", "H"):
            parts = body.split("\t", 1)
            hyp = parts[1] if len(parts) > 1 else ""
            if continued or any(c in hyp for c in LINE_BREAKING):
                broken[kind].add(idx)
                hyp = flatten_line(hyp)
            (detok if kind == "D" else tok)[idx] = hyp
    speed = {}
    m = _SPEED.search(text)
    if m:
        speed = {"sentences": int(m.group(1).replace(",", "")), "tokens": int(m.group(2).replace(",", "")),
                 "seconds": float(m.group(3)), "sentences_per_s": float(m.group(4)),
                 "tokens_per_s": float(m.group(5))}
    return {"hyp": detok or tok, "hyp_tok": tok, "speed": speed, "line_breaks": sorted(broken["D" if detok else "H"])}


def run_generate(cmd: list, total: int, progress: bool = True, copy_to=None) -> str:
    """Run fairseq-generate, reading its output as it comes (split at ``\n`` only, so no other character can
    break a record); every line is also written to ``copy_to`` (a file object).  With ``progress``, one line on
    stderr every 10% of the ``total`` sentences or 30 s.  Returns stdout (and the log) as one string; a failure
    is a :class:`UserError` with the end of the error output."""
    cmd = [str(c) for c in cmd]
    cmd[0] = find_tool(cmd[0])
    lines: list[str] = []
    done, start, last_time, last_share = 0, time.monotonic(), time.monotonic(), 0
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=child_env(), stdout=subprocess.PIPE, stderr=err)
        try:
            for raw in proc.stdout:
                line = raw.decode("utf-8", errors="replace")
                lines.append(line)
                if copy_to is not None:
                    copy_to.write(line)
                if line.startswith("S-"):
                    done += 1
                    now = time.monotonic()
                    share = done * 10 // max(total, 1)
                    if progress and (share > last_share or now - last_time >= 30):
                        print(f"evaluate: {done}/{total} sentences translated ({100 * done // max(total, 1)}%, "
                              f"{now - start:.0f} s)", file=sys.stderr, flush=True)
                        last_time, last_share = now, share
            proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
    stdout = "".join(lines)
    if proc.returncode != 0:
        tail = (stderr or stdout)[-3000:]
        raise UserError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}".rstrip())
    return stdout + "\n" + stderr


def compound_split(line: str) -> str:
    """fairseq's compound splitting for WMT En-De tokenised BLEU: ``a-b`` -> ``a ##AT##-##AT## b``."""
    return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", line)


def tokenized_bleu(hyps: list[str], refs: list[str], lang: str):
    """BLEU of Moses-tokenised, compound-split text (as ``compound_split_bleu.sh`` + ``multi-bleu``)."""
    import sacrebleu
    from sacremoses import MosesTokenizer

    mt = MosesTokenizer(lang=lang)

    def prep(lines):
        return [compound_split(mt.tokenize(line, return_str=True, escape=False)) for line in lines]

    return sacrebleu.metrics.BLEU(tokenize="none", force=True).corpus_score(prep(hyps), [prep(refs)])


def score(hyps: list[str], refs: list[str], tgt_lang: str) -> dict:
    """sacreBLEU BLEU + chrF (with signatures) on detokenised text, and compound-split tokenised BLEU."""
    import sacrebleu

    if len(hyps) != len(refs):
        raise UserError(f"{len(hyps)} hypotheses for {len(refs)} references")
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(hyps, [refs])
    c = chrf.corpus_score(hyps, [refs])
    t = tokenized_bleu(hyps, refs, tgt_lang)
    return {"bleu": b.score, "bleu_signature": str(bleu.get_signature()), "bleu_detail": str(b),
            "chrf": c.score, "chrf_signature": str(chrf.get_signature()),
            "tok_bleu": t.score, "tok_bleu_detail": str(t),
            "tok_bleu_method": "sacremoses tokenizer + compound splitting (##AT##), BLEU with tokenize=none"}


def _subset_and_name(info: dict, subset: str) -> tuple:
    """The fairseq subset and the test set's name for ``subset``, either of them (binarize.json's ``test_subsets``
    maps the names of ``--extra-test`` sets to their fairseq subsets)."""
    names = {fairseq: name for name, fairseq in info.get("test_subsets", {}).items()}
    if subset in info.get("test_subsets", {}):
        return info["test_subsets"][subset], subset
    return subset, names.get(subset, subset)


def _output_paths(out_dir: str, ref: str, checkpoint: str) -> dict:
    """generate.txt, hyp.txt and scores.json in ``out_dir``, checked (writable, none of them an input)."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UserError(f"--out {out_dir} is a file, not a folder")
    outputs = {key: os.path.join(out_dir, f"{key}.{ext}")
               for key, ext in (("generate", "txt"), ("hyp", "txt"), ("scores", "json"))}
    for path in outputs.values():
        check_output_path(path)
    check_distinct([(p, "output") for p in outputs.values()],
                   [(ref, "reference"), (checkpoint, "checkpoint")])
    return outputs


def _generate_command(data_bin: str, checkpoint: str, subset: str, *, beam: int, lenpen: float, max_len_a: float,
                      max_len_b: int, generate_args: list, max_tokens: int | None, batch_size: int | None,
                      cpu: bool, fp16: bool, extra_args: list | None) -> list:
    """fairseq-generate's command line (``extra_args`` last, so they override everything)."""
    cmd = ["fairseq-generate", data_bin, "--user-dir", plugins_dir(), "--path", checkpoint,
           "--gen-subset", subset, "--beam", str(beam), "--lenpen", str(lenpen),
           "--max-len-a", str(max_len_a), "--max-len-b", str(max_len_b),
           # fairseq-fixed drops a last batch whose size is not a multiple of this: keep every test sentence
           "--required-batch-size-multiple", "1", *generate_args]
    if max_tokens:
        cmd += ["--max-tokens", str(max_tokens)]
    if batch_size:
        cmd += ["--batch-size", str(batch_size)]
    if cpu:
        cmd.append("--cpu")
    if fp16:
        cmd.append("--fp16")
    cmd += list(extra_args or [])
    return cmd


def _hypotheses_in_order(hyp_map: dict, n_refs: int, subset: str, ref: str) -> list[str]:
    """One hypothesis per reference line, in order; a UserError if fairseq-generate left some out."""
    if sorted(hyp_map) != list(range(n_refs)):
        missing = sorted(set(range(n_refs)) - set(hyp_map))[:5]
        raise UserError(f"fairseq-generate produced {len(hyp_map)} hypotheses for {n_refs} reference lines "
                        f"(missing ids {missing}...): the binarised {subset} set and {ref} do not match")
    return [hyp_map[i] for i in range(n_refs)]


def evaluate(checkpoint: str, data: str | None = None, *, data_bin: str | None = None,
             generate_args: list[str] | None = None, ref: str | None = None, tgt_lang: str | None = None,
             subset: str = "test", beam: int = 4, lenpen: float = 0.6, max_tokens: int | None = 4096,
             batch_size: int | None = 64, max_len_a: float = MAX_LEN_A, max_len_b: int = MAX_LEN_B, cpu: bool = False,
             fp16: bool = False, out_dir: str | None = None, extra_args: list[str] | None = None,
             quiet: bool = True, progress: bool = False, allow_empty: bool = False) -> dict:
    """Generate ``subset`` with ``checkpoint`` and score it; returns the scores and paths.

    ``data``: a ``train_scripts.binarize`` output folder (its binarize.json gives data-bin, decoder arguments,
    the raw reference and the target language); each can be overridden.  ``subset``: a fairseq subset
    (``test``, ``valid``, ``test1`` ...) or the name of a test set binarised with ``binarize --extra-test``.
    ``max_len_a``/``max_len_b`` bound each hypothesis to ``a * source length + b`` tokens; ``extra_args`` come
    last on fairseq-generate's command line, so they override everything.  ``progress``: report on stderr while
    generating.  ``allow_empty``: score a test set whose hypotheses are all empty instead of refusing it.
    """
    info = load_binarize_info(data) if data else {}
    data_bin = data_bin or (info.get("data_bin") or [None])[0]
    if not data_bin:
        raise UserError("no data-bin folder: give --data (binarize output) or --data-bin")
    generate_args = list(generate_args if generate_args is not None else info.get("generate_args", []))
    tgt_lang = tgt_lang or info.get("tgt")
    if not tgt_lang:
        raise UserError("the target language is unknown: give --tgt-lang")
    subset, name = _subset_and_name(info, subset)
    if ref is None and info:
        from train_scripts.binarize import raw_file

        ref = raw_file(info["raw_dir"], name, tgt_lang)
    if not ref or not os.path.isfile(ref):
        raise UserError(f"reference file not found: {ref}")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    outputs = _output_paths(out_dir, ref, checkpoint) if out_dir else {}
    refs = list(read_lines(ref, hint=UTF8_HINT))

    cmd = _generate_command(data_bin, checkpoint, subset, beam=beam, lenpen=lenpen, max_len_a=max_len_a,
                            max_len_b=max_len_b, generate_args=generate_args, max_tokens=max_tokens,
                            batch_size=batch_size, cpu=cpu, fp16=fp16, extra_args=extra_args)
    if not quiet:
        print("+ " + " ".join(map(str, cmd)), file=sys.stderr)
    if progress:
        where = f"; generate.txt, hyp.txt and scores.json go to {out_dir}/ when it is done" if out_dir else ""
        print(f"evaluate: translating {len(refs)} sentences ({name}) with {checkpoint}, beam {beam}, at most "
              f"{max_len_a:g} * source length + {max_len_b} tokens each{where}", file=sys.stderr, flush=True)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with atomic_output(outputs["generate"]) as fh:
            output = run_generate(cmd, len(refs), progress, copy_to=fh)
    else:
        output = run_generate(cmd, len(refs), progress)
    parsed = parse_generate_output(output)
    hyps = _hypotheses_in_order(parsed["hyp"], len(refs), subset, ref)
    warnings = hypothesis_warnings(hyps, parsed["line_breaks"], allow_empty)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    result = {"checkpoint": os.path.abspath(checkpoint), "data_bin": data_bin, "subset": subset, "name": name,
              "ref": ref, "tgt_lang": tgt_lang, "beam": beam, "lenpen": lenpen, "max_len_a": max_len_a,
              "max_len_b": max_len_b, "generate_args": generate_args, "sentences": len(hyps),
              "empty_hypotheses": sum(not h.strip() for h in hyps), "joined_line_breaks": len(parsed["line_breaks"]),
              "warnings": warnings, **score(hyps, refs, tgt_lang), "speed": parsed["speed"]}
    if out_dir:
        with atomic_output(outputs["hyp"]) as fh:
            fh.write("".join(h + "\n" for h in hyps))
        result["hyp_file"] = outputs["hyp"]
        with atomic_output(outputs["scores"]) as fh:
            json.dump(result, fh, indent=1)
    return result


def hypothesis_warnings(hyps: list[str], line_breaks: list[int], allow_empty: bool = False) -> list[str]:
    """The warnings about what the hypotheses hold (line breaks joined, empty lines); all empty is a
    :class:`UserError` unless ``allow_empty``."""
    def ids(numbers):
        shown = ", ".join(map(str, numbers[:10]))
        return shown + (", ..." if len(numbers) > 10 else "")

    warnings = []
    if line_breaks:
        warnings.append(f"{len(line_breaks)} of {len(hyps)} hypotheses contained a line break (\\n, \\r, U+2028 "
                        f"...) and were joined into one line with spaces (ids {ids(line_breaks)})")
    empty = [i for i, h in enumerate(hyps) if not h.strip()]
    if empty and len(empty) == len(hyps) and hyps:
        if not allow_empty:
            raise UserError(f"all {len(hyps)} hypotheses are empty: the model translated nothing (an untrained or "
                            f"broken model, or a decoder that drops everything); pass --allow-empty to score it "
                            f"anyway")
        warnings.append(f"all {len(hyps)} hypotheses are empty (scored because --allow-empty was given)")
    elif empty:
        warnings.append(f"{len(empty)} of {len(hyps)} hypotheses are empty (ids {ids(empty)})")
    return warnings


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="morphtok-evaluate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--checkpoint", required=True, help="model to evaluate (e.g. an averaged checkpoint)")
    p.add_argument("--data", help="train_scripts.binarize output folder (with binarize.json)")
    p.add_argument("--data-bin", help="binarised data folder (default: from --data)")
    p.add_argument("--generate-args", default=None,
                   help="decoder options for fairseq-generate as one string, e.g. '--bpe spaces --spaces-model M' "
                        "(default: from binarize.json)")
    p.add_argument("--ref", help="raw reference file (default: RAW/SUBSET.TGT from binarize.json)")
    p.add_argument("--tgt-lang", help="target language, for Moses tokenisation (default: from binarize.json)")
    p.add_argument("--subset", default="test", help="fairseq subset, or a --extra-test name of binarize")
    p.add_argument("--beam", type=int, default=4, help="beam size")
    p.add_argument("--lenpen", type=float, default=0.6, help="length penalty")
    add_length_args(p)
    p.add_argument("--max-tokens", type=int, default=4096, help="tokens per batch (0: no limit)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences per batch (0: no limit)")
    p.add_argument("--cpu", action="store_true", help="generate on the CPU")
    p.add_argument("--fp16", action="store_true", help="generate in half precision (GPU)")
    p.add_argument("--out", help="write generate.txt, hyp.txt and scores.json here")
    p.add_argument("--allow-empty", action="store_true",
                   help="score a test set whose hypotheses are all empty (by default an error)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    args, extra = p.parse_known_args(argv)
    if not args.max_tokens and not args.batch_size:
        raise UserError("give --max-tokens or --batch-size (or both): fairseq needs one of them")

    result = evaluate(args.checkpoint, args.data, data_bin=args.data_bin,
                      generate_args=shlex.split(args.generate_args) if args.generate_args is not None else None,
                      ref=args.ref, tgt_lang=args.tgt_lang, subset=args.subset, beam=args.beam,
                      lenpen=args.lenpen, max_tokens=args.max_tokens, batch_size=args.batch_size,
                      max_len_a=args.max_len_a, max_len_b=args.max_len_b, cpu=args.cpu, fp16=args.fp16,
                      out_dir=args.out, extra_args=extra, progress=not args.no_progress,
                      allow_empty=args.allow_empty)
    print(f"BLEU {result['bleu']:.2f} ({result['bleu_signature']})")
    print(f"chrF {result['chrf']:.2f} ({result['chrf_signature']})")
    print(f"tokenised BLEU with compound splitting {result['tok_bleu']:.2f}")
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
