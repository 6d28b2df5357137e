"""Translate a test set with a trained model and score it.

    python -m train_scripts.evaluate --data work/spaces --checkpoint ckpt/avg.pt --out eval/spaces [--cpu]

1. ``fairseq-generate`` with beam 4 and length penalty 0.6 (``--beam``/``--lenpen``), decoding the output with
   the scheme's own decoder (the ``--bpe``/``--tokenizer`` arguments recorded by ``train_scripts.binarize`` in
   ``binarize.json``, or given with ``--generate-args``), so the hypotheses are plain text;
2. sacreBLEU BLEU and chrF on that detokenised text against the raw reference, with their signatures;
3. tokenised BLEU with compound splitting, as fairseq's WMT'14 En-De recipes report it: Moses-tokenise
   hypotheses and references, split hyphenated compounds (``a-b`` -> ``a ##AT##-##AT## b``), BLEU without
   further tokenisation.

Writes ``OUT/generate.txt`` (fairseq's output), ``OUT/hyp.txt`` (one hypothesis per test line, in order) and
``OUT/scores.json`` (the dict :func:`evaluate` returns).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys

from preprocess.common import UserError, atomic_output, read_lines, run_main
from train_scripts.tools import plugins_dir, run_tool

_COMPOUND = re.compile(r"(\S)-(\S)")
_SPEED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s \(([\d.]+) sentences/s, "
                    r"([\d.]+) tokens/s\)")


def load_binarize_info(path: str) -> dict:
    """``binarize.json`` of a ``train_scripts.binarize`` output folder (or the file itself)."""
    path = os.path.join(path, "binarize.json") if os.path.isdir(path) else path
    if not os.path.isfile(path):
        raise UserError(f"no binarize.json at {path}: give --data a train_scripts.binarize output folder, "
                        "or --data-bin, --generate-args and --ref")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def parse_generate_output(text: str) -> dict:
    """fairseq-generate stdout -> {"hyp": {id: detokenised text}, "hyp_tok": {id: tokens}, "speed": {...}}."""
    detok, tok = {}, {}
    for line in text.splitlines():
        if line.startswith(("D-", "H-")):
            parts = line.split("\t")
            idx = int(parts[0][2:])
            hyp = parts[2] if len(parts) > 2 else ""
            (detok if line[0] == "D" else tok)[idx] = hyp
    speed = {}
    m = _SPEED.search(text)
    if m:
        speed = {"sentences": int(m.group(1).replace(",", "")), "tokens": int(m.group(2).replace(",", "")),
                 "seconds": float(m.group(3)), "sentences_per_s": float(m.group(4)),
                 "tokens_per_s": float(m.group(5))}
    return {"hyp": detok or tok, "hyp_tok": tok, "speed": speed}


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


def evaluate(checkpoint: str, data: str | None = None, *, data_bin: str | None = None,
             generate_args: list[str] | None = None, ref: str | None = None, tgt_lang: str | None = None,
             subset: str = "test", beam: int = 4, lenpen: float = 0.6, max_tokens: int = 4096,
             batch_size: int | None = None, cpu: bool = False, fp16: bool = False, out_dir: str | None = None,
             extra_args: list[str] | None = None, quiet: bool = True) -> dict:
    """Generate ``subset`` with ``checkpoint`` and score it; returns the scores and paths.

    ``data``: a ``train_scripts.binarize`` output folder (its binarize.json gives data-bin, decoder arguments,
    the raw reference and the target language); each can be overridden.  ``subset``: a fairseq subset
    (``test``, ``valid``, ``test1`` ...) or the name of a test set binarised with ``binarize --extra-test``.
    """
    info = load_binarize_info(data) if data else {}
    data_bin = data_bin or (info.get("data_bin") or [None])[0]
    if not data_bin:
        raise UserError("no data-bin folder: give --data (binarize output) or --data-bin")
    generate_args = list(generate_args if generate_args is not None else info.get("generate_args", []))
    tgt_lang = tgt_lang or info.get("tgt")
    if not tgt_lang:
        raise UserError("the target language is unknown: give --tgt-lang")
    names = {fairseq: name for name, fairseq in info.get("test_subsets", {}).items()}
    if subset in info.get("test_subsets", {}):
        subset, name = info["test_subsets"][subset], subset
    else:
        name = names.get(subset, subset)
    if ref is None and info:
        from train_scripts.binarize import raw_file

        ref = raw_file(info["raw_dir"], name, tgt_lang)
    if not ref or not os.path.isfile(ref):
        raise UserError(f"reference file not found: {ref}")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    refs = list(read_lines(ref))

    cmd = ["fairseq-generate", data_bin, "--user-dir", plugins_dir(), "--path", checkpoint,
           "--gen-subset", subset, "--beam", str(beam), "--lenpen", str(lenpen),
           # fairseq-fixed drops a last batch whose size is not a multiple of this: keep every test sentence
           "--required-batch-size-multiple", "1", *generate_args]
    cmd += ["--batch-size", str(batch_size)] if batch_size else ["--max-tokens", str(max_tokens)]
    if cpu:
        cmd.append("--cpu")
    if fp16:
        cmd.append("--fp16")
    cmd += list(extra_args or [])
    proc = run_tool(cmd, quiet)
    parsed = parse_generate_output(proc.stdout + "\n" + proc.stderr)
    hyp_map = parsed["hyp"]
    if sorted(hyp_map) != list(range(len(refs))):
        missing = sorted(set(range(len(refs))) - set(hyp_map))[:5]
        raise UserError(f"fairseq-generate produced {len(hyp_map)} hypotheses for {len(refs)} reference lines "
                        f"(missing ids {missing}...): the binarised {subset} set and {ref} do not match")
    hyps = [hyp_map[i] for i in range(len(refs))]
    result = {"checkpoint": os.path.abspath(checkpoint), "data_bin": data_bin, "subset": subset, "name": name,
              "ref": ref,
              "tgt_lang": tgt_lang, "beam": beam, "lenpen": lenpen, "generate_args": generate_args,
              "sentences": len(hyps), **score(hyps, refs, tgt_lang), "speed": parsed["speed"]}
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with atomic_output(os.path.join(out_dir, "generate.txt")) as fh:
            fh.write(proc.stdout)
        with atomic_output(os.path.join(out_dir, "hyp.txt")) as fh:
            fh.write("".join(h + "\n" for h in hyps))
        result["hyp_file"] = os.path.join(out_dir, "hyp.txt")
        with atomic_output(os.path.join(out_dir, "scores.json")) as fh:
            json.dump(result, fh, indent=1)
    return result


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
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--lenpen", type=float, default=0.6)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--out", help="write generate.txt, hyp.txt and scores.json here")
    args, extra = p.parse_known_args(argv)

    result = evaluate(args.checkpoint, args.data, data_bin=args.data_bin,
                      generate_args=shlex.split(args.generate_args) if args.generate_args is not None else None,
                      ref=args.ref, tgt_lang=args.tgt_lang, subset=args.subset, beam=args.beam,
                      lenpen=args.lenpen, max_tokens=args.max_tokens, batch_size=args.batch_size, cpu=args.cpu,
                      fp16=args.fp16, out_dir=args.out, extra_args=extra)
    print(f"BLEU {result['bleu']:.2f} ({result['bleu_signature']})")
    print(f"chrF {result['chrf']:.2f} ({result['chrf_signature']})")
    print(f"tokenised BLEU with compound splitting {result['tok_bleu']:.2f}")
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
