"""Sentence-classification data for RoBERTa fine-tuning (fairseq ``sentence_prediction``), and scoring.

    python -m train_scripts.classification_data prepare --lm-data work/lm --csv-prefix ../shared/data/superbizarre/arxiv \\
        --out work/cls [--max-rows N] [--encode flota --flota-k 3 --noise-p 0.3]
    python -m train_scripts.classification_data score --checkpoint ckpt/checkpoint_best.pt --data work/cls --subset test

``prepare`` reads ``PREFIX_{train,dev,test}.csv`` (the Superbizarre sets: ``derivative,score,label``; the FLOTA
ArXiv sets: ``text,label``; the text is the first column, the label the ``label`` column), encodes the text
exactly as the pretrained model's data was encoded (``--lm-data``: the ``train_scripts.binarize --lm`` folder),
and binarises it with the pretrained dictionary into ``OUT/data-bin/{input0,label}`` (dev becomes ``valid``).
``--encode flota`` segments with FLOTA over the pretrained SentencePiece vocabulary instead (FLOTA is a
fine-tuning-time tokeniser: the model is pretrained with the standard segmentation); ``--noise-p`` drops spaces
between words with that probability in the ``--noise-splits`` (default: test only, i.e. evaluation time).

``score`` predicts a split with a fine-tuned checkpoint and reports accuracy and macro-F1.
"""
from __future__ import annotations

import argparse
import csv
import functools
import json
import os
import sys

from preprocess import flota
from preprocess.common import UserError, atomic_output, flatten_line, run_main
from train_scripts.tools import run_tool

CSV_SPLITS = {"train": "train", "valid": "dev", "test": "test"}


def read_csv(path: str, max_rows: int = 0) -> list[tuple[str, str]]:
    if not os.path.isfile(path):
        raise UserError(f"CSV not found: {path}")
    rows = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or "label" not in reader.fieldnames:
            raise UserError(f"{path}: expected a header with a 'label' column, got {reader.fieldnames}")
        text_col = reader.fieldnames[0]
        for lineno, row in enumerate(reader, 2):
            text, label = row.get(text_col), row.get("label")
            if text is None or label is None or not label.strip():
                raise UserError(f"{path}:{lineno}: missing text or label")
            rows.append((" ".join(flatten_line(text).split()), label.strip()))
            if max_rows and len(rows) >= max_rows:
                break
    if not rows:
        raise UserError(f"{path}: no rows")
    return rows


def _label_key(label: str):
    return (0, int(label), "") if label.lstrip("-").isdigit() else (1, 0, label)


def prepare(lm_data: str, csv_prefix: str, out_dir: str, max_rows: int = 0, encode: str = "model",
            flota_k: int = 3, flota_mode: str = "flota", noise_p: float = 0.0, noise_seed: int = 0,
            noise_splits=("test",), workers: int = 1, quiet: bool = True) -> dict:
    """Write ``OUT/data-bin/{input0,label}`` and ``OUT/classification.json``; returns the latter's dict."""
    from train_scripts.binarize import encode_file, scheme_from_info
    from train_scripts.evaluate import load_binarize_info

    lm = load_binarize_info(lm_data)
    if not lm.get("lm"):
        raise UserError(f"{lm_data} is not a `train_scripts.binarize --lm` folder")
    if encode == "model":
        factory = scheme_from_info(lm).encoder(lm["lang"], workers)
        described = {"scheme": lm["config"]["scheme"]}
        if noise_p:
            raise UserError("--noise-p needs --encode flota (whitespace noise is FLOTA's robustness test)")
    elif encode == "flota":
        vocab = lm.get("subword_model") or lm["config"].get("flota_vocab")
        if not vocab:
            raise UserError("the pretrained model has no subword vocabulary for FLOTA")
        style = "sentencepiece" if vocab.endswith(".model") else lm["config"].get("flota_style", "auto")
        described = {"scheme": "flota", "flota_vocab": vocab, "flota_style": style, "flota_k": flota_k,
                     "flota_mode": flota_mode}
    else:
        raise UserError(f"--encode must be model or flota, not {encode!r}")

    out_dir = os.path.abspath(out_dir)
    raw, tok = os.path.join(out_dir, "raw"), os.path.join(out_dir, "tok")
    os.makedirs(raw, exist_ok=True)
    os.makedirs(tok, exist_ok=True)
    data = {split: read_csv(f"{csv_prefix}_{name}.csv", max_rows) for split, name in CSV_SPLITS.items()}
    labels = sorted({label for rows in data.values() for _, label in rows}, key=_label_key)
    for split, rows in data.items():
        with atomic_output(os.path.join(raw, f"{split}.input0")) as fh:
            fh.write("".join(text + "\n" for text, _ in rows))
        with atomic_output(os.path.join(raw, f"{split}.label")) as fh:
            fh.write("".join(label + "\n" for _, label in rows))
        if encode == "flota":
            noisy = noise_p if split in noise_splits else 0.0
            factory = functools.partial(flota.make_encoder, flota.FlotaOptions(
                flota_vocab=vocab, flota_style=style, flota_k=flota_k, flota_mode=flota_mode), noisy, noise_seed)
        encode_file(factory, os.path.join(raw, f"{split}.input0"), os.path.join(tok, f"{split}.input0"), workers,
                    quiet)
    label_dict = os.path.join(out_dir, "label.dict.txt")
    with atomic_output(label_dict) as fh:  # every label of every split, in a fixed order
        fh.write("".join(f"{label} 1\n" for label in labels))
    bin_dir = os.path.join(out_dir, "data-bin")
    for name, folder, dictionary in (("input0", tok, lm["dict"]), ("label", raw, label_dict)):
        run_tool(["fairseq-preprocess", "--only-source", "--trainpref", os.path.join(folder, f"train.{name}"),
              "--validpref", os.path.join(folder, f"valid.{name}"), "--testpref", os.path.join(folder, f"test.{name}"),
              "--destdir", os.path.join(bin_dir, name), "--srcdict", dictionary, "--workers", workers], quiet)
    info = {"data": bin_dir, "num_classes": len(labels), "labels": labels, "encoding": described,
            "noise_p": noise_p, "noise_splits": list(noise_splits) if noise_p else [],
            "csv_prefix": os.path.abspath(csv_prefix), "lm_data": os.path.abspath(lm_data),
            "rows": {split: len(rows) for split, rows in data.items()}}
    with atomic_output(os.path.join(out_dir, "classification.json")) as fh:
        json.dump(info, fh, indent=1)
    return info


def score(checkpoint: str, data: str, subset: str = "test", cpu: bool = True, max_tokens: int = 8192) -> dict:
    """Predict ``subset`` with a fine-tuned sentence_prediction checkpoint: accuracy, macro-F1, predictions."""
    import torch

    import fairseq_plugins  # noqa: F401  (checkpoint loading on torch >= 2.6)
    from fairseq import checkpoint_utils

    if os.path.isfile(os.path.join(data, "classification.json")):
        data = os.path.join(data, "data-bin")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([checkpoint], arg_overrides={"data": data})
    model = models[0].eval()
    if not cpu and torch.cuda.is_available():
        model = model.cuda()
    task.load_dataset(subset)
    dataset = task.dataset(subset)
    itr = task.get_batch_iterator(dataset, max_tokens=max_tokens, required_batch_size_multiple=1,
                                  ignore_invalid_inputs=False).next_epoch_itr(shuffle=False)
    head = cfg.criterion.classification_head_name if cfg.criterion else "sentence_classification_head"
    predictions, targets = {}, {}
    with torch.no_grad():
        for sample in itr:
            if not cpu and torch.cuda.is_available():
                from fairseq import utils

                sample = utils.move_to_cuda(sample)
            logits, _ = model(**sample["net_input"], features_only=True, classification_head_name=head)
            for i, p, t in zip(sample["id"].tolist(), logits.argmax(-1).tolist(), sample["target"].view(-1).tolist()):
                predictions[i], targets[i] = p, t
    if len(predictions) != len(dataset):
        raise UserError(f"predicted {len(predictions)} of {len(dataset)} {subset} examples")
    order = sorted(predictions)
    pred, gold = [predictions[i] for i in order], [targets[i] for i in order]
    accuracy = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    f1s = []
    for c in sorted(set(gold) | set(pred)):
        tp = sum(p == c and g == c for p, g in zip(pred, gold))
        fp = sum(p == c and g != c for p, g in zip(pred, gold))
        fn = sum(p != c and g == c for p, g in zip(pred, gold))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    names = [task.label_dictionary[c + task.label_dictionary.nspecial] for c in pred]
    return {"subset": subset, "examples": len(gold), "accuracy": accuracy, "macro_f1": sum(f1s) / len(f1s),
            "predictions": names, "checkpoint": os.path.abspath(checkpoint)}


def arch_args(checkpoint: str) -> list[str]:
    """fairseq-train options that rebuild the encoder of a pretrained RoBERTa checkpoint (for --restore-file)."""
    import torch

    if not os.path.isfile(checkpoint):
        raise UserError(f"pretrained checkpoint not found: {checkpoint}")
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    model = state["cfg"]["model"] if state.get("cfg") is not None else state["args"]
    get = (lambda k: model.get(k)) if isinstance(model, dict) or hasattr(model, "get") else \
        (lambda k: getattr(model, k, None))
    args = ["--arch", str(get("arch") or get("_name"))]
    for key in ("encoder_layers", "encoder_embed_dim", "encoder_ffn_embed_dim", "encoder_attention_heads",
                "max_positions"):
        if get(key) is not None:
            args += ["--" + key.replace("_", "-"), str(get(key))]
    return args


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train_scripts.classification_data",
                                description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("prepare", help="CSV sets -> fairseq sentence_prediction data",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a.add_argument("--lm-data", required=True, help="train_scripts.binarize --lm output folder of the pretraining")
    a.add_argument("--csv-prefix", required=True, help="reads PREFIX_train.csv, PREFIX_dev.csv, PREFIX_test.csv")
    a.add_argument("--out", required=True, help="output folder (fairseq sentence_prediction data)")
    a.add_argument("--max-rows", type=int, default=0, help="use the first N rows of each CSV (0 = all)")
    a.add_argument("--encode", choices=["model", "flota"], default="model",
                   help="model: as the pretraining data; flota: FLOTA over the pretrained vocabulary")
    a.add_argument("--flota-k", type=int, default=3, help="with --encode flota: FLOTA's k (pieces per word)")
    a.add_argument("--flota-mode", choices=["flota", "first", "longest"], default="flota",
                   help="with --encode flota: FLOTA's mode")
    a.add_argument("--noise-p", type=float, default=0.0, help="FLOTA whitespace noise probability")
    a.add_argument("--noise-seed", type=int, default=0, help="seed of the whitespace noise")
    a.add_argument("--noise-splits", default="test", help="comma-separated splits that get the noise")
    a.add_argument("--workers", type=int, default=1, help="encoder processes")
    s = sub.add_parser("score", help="accuracy and macro-F1 of a fine-tuned checkpoint")
    s.add_argument("--checkpoint", required=True, help="fine-tuned fairseq checkpoint")
    s.add_argument("--data", required=True, help="prepare's --out folder (or its data-bin)")
    s.add_argument("--subset", default="test", help="fairseq subset to score")
    s.add_argument("--gpu", action="store_true", help="run on the GPU (default: CPU)")
    s.add_argument("--output", default=None, help="also write the scores as JSON here")
    r = sub.add_parser("arch-args", help="print the architecture options of a pretrained checkpoint")
    r.add_argument("checkpoint")
    args = p.parse_args(argv)
    if args.command == "arch-args":
        print(" ".join(arch_args(args.checkpoint)))
        return 0
    if args.command == "prepare":
        info = prepare(args.lm_data, args.csv_prefix, args.out, args.max_rows, args.encode, args.flota_k,
                       args.flota_mode, args.noise_p, args.noise_seed,
                       tuple(x for x in args.noise_splits.split(",") if x), args.workers)
        print(json.dumps({k: info[k] for k in ("data", "num_classes", "rows")}))
    else:
        result = score(args.checkpoint, args.data, args.subset, cpu=not args.gpu)
        if args.output:
            with atomic_output(args.output) as fh:
                json.dump(result, fh, indent=1)
        print(json.dumps({k: result[k] for k in ("subset", "examples", "accuracy", "macro_f1")}))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
