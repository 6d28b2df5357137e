"""Sentence-classification data for RoBERTa fine-tuning (fairseq ``sentence_prediction``), and scoring.

    python -m train_scripts.classification_data prepare --lm-data work/lm --csv-prefix ../shared/data/superbizarre/arxiv \\
        --out work/cls [--max-rows N] [--encode flota --flota-k 3 --noise-p 0.3]
    python -m train_scripts.classification_data score --checkpoint ckpt/checkpoint_best.pt --data work/cls --subset test

``prepare`` reads ``PREFIX_{train,dev,test}.csv`` (the Superbizarre sets: ``derivative,score,label``; the FLOTA
ArXiv sets: ``text,label``; the text is the first column, the label the ``label`` column), encodes the text
exactly as the pretrained model's data was encoded (``--lm-data``: the ``train_scripts.binarize --lm`` folder),
and binarises it with the pretrained dictionary into ``OUT/data-bin/{input0,label}`` (dev becomes ``valid``).
``--encode flota`` segments with FLOTA over the pretrained SentencePiece vocabulary instead (FLOTA is a
fine-tuning-time tokeniser: the model is pretrained with the standard segmentation; any scheme whose recipe class
has ``finetune_encoder`` is offered the same way); ``--noise-p`` drops spaces
between words with that probability in the ``--noise-splits`` (default: test only, i.e. evaluation time).

``score`` predicts a split with a fine-tuned checkpoint and reports accuracy and macro-F1.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys

from preprocess.cli import run_main
from preprocess.common import UserError, flatten_line
from preprocess.files.inputs import UTF8_HINT, read_lines, require_file
from preprocess.files.outputs import atomic_output, check_output_path
from preprocess.options import add_arguments, options_from
from preprocess.whitespace_noise import NoiseOptions
from train_scripts.fairseq_preprocess import COMMAND as PREPROCESS
from train_scripts.tools import run_tool

CSV_SPLITS = {"train": "train", "valid": "dev", "test": "test"}


class CsvRows(list):
    """:func:`read_csv`'s rows, ``(text, label)`` pairs, with the CSV's ``path``, the line each row ends on
    (``lines``) and the labels of every row of the file (``labels``, also of the rows after ``max_rows``)."""

    def __init__(self, path: str):
        super().__init__()
        self.path, self.lines, self.labels = path, [], set()


#: what undecodable text's message suggests (:func:`preprocess.files.inputs.read_lines`): this command has no ``--errors``
CSV_HINT = "save the CSV as UTF-8"


def read_csv(path: str, max_rows: int = 0) -> CsvRows:
    """The ``(text, label)`` rows of a classification CSV (see the module doc), strictly: undecodable UTF-8, a
    malformed row, a missing text or label, or a label with a space or a line break in it is one line naming the
    file and line; the whole file is checked, also with ``max_rows``.  A UTF-8 byte-order mark (Excel's CSV) is
    ignored; line breaks and runs of spaces in the text become one space."""
    require_file(path, "CSV")
    rows = CsvRows(path)
    lines = (line + "\n" for line in read_lines(path, hint=CSV_HINT))   # strict UTF-8, a corrupt line named (csv wants \n)
    reader = csv.DictReader(lines)
    try:
        fields = reader.fieldnames   # None for an empty file
        if fields and fields[0].startswith("\ufeff"):
            fields[0] = fields[0][1:]
        if not fields or "label" not in fields:
            raise UserError(f"{path}:1: expected a header with a 'label' column, got "
                            f"{', '.join(map(repr, fields)) if fields else 'an empty file'}")
        text_col = fields[0]
        if text_col == "label":
            raise UserError(f"{path}:1: the first column is the text, not 'label' (header: {', '.join(fields)})")
        for row in reader:   # a row's line: where it ends (a quoted field may span lines)
            text, label = row.get(text_col), row.get("label")
            if text is None or label is None or not label.strip():
                quote = " (a quote opened in this row is never closed?)" if label is None and "\n" in text else ""
                raise UserError(f"{path}:{reader.line_num}: missing text or label{quote}")
            label = label.strip()
            if len(label.split()) != 1:
                raise UserError(f"{path}:{reader.line_num}: label {label!r} has a space or a line break in it")
            rows.labels.add(label)
            if not max_rows or len(rows) < max_rows:
                rows.append((" ".join(flatten_line(text).split()), label))
                rows.lines.append(reader.line_num)
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.reader.line_num}: not a readable CSV row ({exc})") from None
    if not rows:
        raise UserError(f"{path}: no rows")
    return rows


def check_labels(data: dict) -> None:
    """Every label of the dev and test rows is one the training CSV has (in any of its rows: the first rows that
    ``--max-rows`` keeps of a shuffled many-class set may lack a class by chance): a label that the training data
    never has is a mistake in the data (another label scheme, a typo) that would silently add a class.  ``data``:
    :func:`read_csv`'s rows by split."""
    train = data["train"]
    for split in ("valid", "test"):
        rows = data[split]
        for (_, label), line in zip(rows, rows.lines):
            if label not in train.labels:
                known = sorted(train.labels, key=_label_key)
                shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
                raise UserError(f"{rows.path}:{line}: label {label!r} is not in the training split {train.path}, "
                                f"which has {shown}")


def check_out_folder(out_dir: str, lm_data: str) -> None:
    """Before any work: ``--out`` is a folder that can be made and written, and not the pretraining data's."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UserError(f"--out {out_dir} is a file, not a folder")
    check_output_path(os.path.join(out_dir, "classification.json"), "--out file")
    if os.path.isdir(out_dir) and os.path.isdir(lm_data) and os.path.samefile(out_dir, lm_data):
        raise UserError(f"--out {out_dir} is the --lm-data folder: give the fine-tuning data its own folder")


def _read_json(path: str):
    """The JSON in ``path``, or None when it cannot be read (a record edited by hand, or not UTF-8)."""
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):   # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None


def _label_key(label: str):
    return (0, int(label), "") if label.lstrip("-").isdigit() else (1, 0, label)


def finetune_recipes() -> dict:
    """``{name: recipe class}`` of the schemes with a fine-tuning-time encoding (``--encode NAME``), from the
    registry."""
    from preprocess import registry

    return {name: cls for name, cls in registry.recipes().items() if cls.finetune_options}


#: the fairseq subset of the noisy copy of the test split (``--noise-p``), scored beside the clean ``test``
NOISY_TEST = "test1"


def prepare(lm_data: str, csv_prefix: str, out_dir: str, max_rows: int = 0, encode: str = "model",
            encode_options=None, noise=None, noise_splits=(), workers: int = 1, quiet: bool = True,
            train_rows: int = 0) -> dict:
    """Write ``OUT/data-bin/{input0,label}`` and ``OUT/classification.json``; returns the latter's dict.

    ``max_rows``: the first N rows of every split (0: all); ``train_rows``: the first N training rows instead (a
    point of a learning curve, scored on the same ``max_rows`` dev and test rows; 0: ``max_rows``).
    ``encode``: ``model`` (as the pretraining data was encoded) or a scheme whose recipe class has a fine-tuning-time
    encoding over the pretrained vocabulary (:meth:`train_scripts.schemes.Scheme.finetune_encoder`: FLOTA's);
    ``encode_options``: that scheme's options (its options class, a dict or a namespace: the fields of the recipe's
    ``finetune_options`` are used); ``noise``: a
    :class:`preprocess.whitespace_noise.NoiseOptions` (or a dict, a namespace; None: no noise).  A noise ``noise_p``
    > 0 adds a noisy copy of the test split (subset ``test1``, :data:`NOISY_TEST`) beside the clean
    ``test``, so one fine-tuned model is scored in both conditions; ``noise_splits`` (``train``, ``valid``)
    perturbs those splits in place (training-time noise).  A folder already prepared with the same options and
    inputs is reused as it is (``"reused": true``): the seeds of a scheme share one encoding."""
    from preprocess.evaluate.noise import WHITESPACE, write_noisy
    from train_scripts.binarize import encode_file, scheme_from_info
    from train_scripts.evaluate import load_binarize_info
    noise = options_from(NoiseOptions, noise)
    noise_p, noise_seed = noise.noise_p, noise.noise_seed
    if not 0.0 <= noise_p <= 1.0:
        raise UserError(f"--noise-p must be between 0 and 1, not {noise_p}")
    bad = [s for s in noise_splits if s not in CSV_SPLITS]
    if bad:
        raise UserError(f"--noise-splits: unknown split {bad[0]!r} (choose from {', '.join(CSV_SPLITS)})")
    if max_rows < 0 or train_rows < 0:
        raise UserError(f"--max-rows and --train-rows must be 0 (all) or more, not {min(max_rows, train_rows)}")
    check_out_folder(out_dir, lm_data)
    # the CSVs, strictly, before anything else is read or written: a bad row or label is one line naming it
    data = {split: read_csv(f"{csv_prefix}_{name}.csv", train_rows if split == "train" and train_rows else max_rows)
            for split, name in CSV_SPLITS.items()}
    check_labels(data)
    lm = load_binarize_info(lm_data)
    if not lm.get("lm"):
        raise UserError(f"{lm_data} is not a `train_scripts.binarize --lm` folder")
    if encode == "model":
        model_factory = scheme_from_info(lm).encoder(lm["lang"], workers)
        described = {"scheme": lm["config"]["scheme"]}
    else:
        recipe = finetune_recipes().get(encode)
        if recipe is None:
            raise UserError(f"--encode must be one of {', '.join(['model', *finetune_recipes()])}, not {encode!r}")
        # the noise is written into the raw text (write_noisy below), not applied by the encoder
        described, model_factory = recipe.finetune_encoder(lm, options_from(recipe.Options, encode_options))

    out_dir = os.path.abspath(out_dir)
    key = {"lm_data": os.path.abspath(lm_data), "lm_dict_mtime": os.path.getmtime(lm["dict"]),
           "csv_prefix": os.path.abspath(csv_prefix), "max_rows": max_rows, "encoding": described,
           **({"train_rows": train_rows} if train_rows else {}),
           "noise_p": noise_p, "noise_seed": noise_seed, "noise_splits": sorted(noise_splits) if noise_p else []}
    done = os.path.join(out_dir, "classification.json")
    info = _read_json(done) if os.path.isfile(done) else None   # unreadable: not reused, written again
    if isinstance(info, dict) and info.get("key") == key and os.path.isdir(info.get("data", "")):
        return {**info, "reused": True}
    raw, tok = os.path.join(out_dir, "raw"), os.path.join(out_dir, "tok")
    os.makedirs(raw, exist_ok=True)
    os.makedirs(tok, exist_ok=True)
    labels = sorted({label for rows in data.values() for _, label in rows}, key=_label_key)
    subsets = list(data)                     # the fairseq subsets to encode
    for split, rows in data.items():
        with atomic_output(os.path.join(raw, f"{split}.input0")) as fh:
            fh.write("".join(text + "\n" for text, _ in rows))
        with atomic_output(os.path.join(raw, f"{split}.label")) as fh:
            fh.write("".join(label + "\n" for _, label in rows))
        if noise_p and split in noise_splits:
            clean = os.path.join(raw, f"{split}.clean.input0")
            os.replace(os.path.join(raw, f"{split}.input0"), clean)
            write_noisy(clean, os.path.join(raw, f"{split}.input0"), WHITESPACE, noise_p, noise_seed)
    if noise_p:
        # FLOTA's whitespace noise, seeded by noise_seed and each line's text: every encoding gets the same text
        write_noisy(os.path.join(raw, "test.input0"), os.path.join(raw, f"{NOISY_TEST}.input0"), WHITESPACE, noise_p,
                    noise_seed)
        shutil.copyfile(os.path.join(raw, "test.label"), os.path.join(raw, f"{NOISY_TEST}.label"))
        subsets.append(NOISY_TEST)
    for subset in subsets:
        encode_file(model_factory, os.path.join(raw, f"{subset}.input0"), os.path.join(tok, f"{subset}.input0"),
                    workers, quiet)
    label_dict = os.path.join(out_dir, "label.dict.txt")
    with atomic_output(label_dict) as fh:  # every label of every split, in a fixed order
        fh.write("".join(f"{label} 1\n" for label in labels))
    bin_dir = os.path.join(out_dir, "data-bin")
    tests = [t for t in subsets if t.startswith("test")]
    for name, folder, dictionary in (("input0", tok, lm["dict"]), ("label", raw, label_dict)):
        run_tool([*PREPROCESS, "--only-source", "--trainpref", os.path.join(folder, f"train.{name}"),
                  "--validpref", os.path.join(folder, f"valid.{name}"),
                  "--testpref", ",".join(os.path.join(folder, f"{t}.{name}") for t in tests),
                  "--destdir", os.path.join(bin_dir, name), "--srcdict", dictionary, "--workers", workers], quiet,
                 output=os.path.join(bin_dir, name))
    info = {"data": bin_dir, "num_classes": len(labels), "labels": labels, "encoding": described,
            "noise_p": noise_p, "noise_seed": noise_seed, "noise_splits": sorted(noise_splits) if noise_p else [],
            "test_subsets": {"clean": "test", **({"noisy": NOISY_TEST} if noise_p else {})},
            "csv_prefix": os.path.abspath(csv_prefix), "lm_data": os.path.abspath(lm_data),
            "rows": {split: len(rows) for split, rows in data.items()},
            "tokens_per_example": {s: _tokens_per_line(os.path.join(tok, f"{s}.input0")) for s in subsets},
            "key": key}
    with atomic_output(done) as fh:
        json.dump(info, fh, indent=1)
    return info


def _tokens_per_line(path: str) -> float:
    """Mean tokens per line of an encoded file (the sequence length the model sees, before <s> and </s>)."""
    lines = tokens = 0
    for line in read_lines(path, hint=UTF8_HINT):
        lines += 1
        tokens += len(line.split())
    return tokens / lines if lines else 0.0


#: the score file name of each fairseq subset (``SAVE/{name}_scores.json``)
SCORE_NAMES = {"valid": "dev", "test": "test", NOISY_TEST: "test_noisy"}


def score(checkpoint: str, data: str, subset: str = "test", cpu: bool = True, max_tokens: int = 8192) -> dict:
    """Predict ``subset`` with a fine-tuned sentence_prediction checkpoint: accuracy, macro-F1, predictions."""
    return score_subsets(checkpoint, data, [subset], cpu, max_tokens)[subset]


def score_subsets(checkpoint: str, data: str, subsets: list, cpu: bool = True, max_tokens: int = 8192) -> dict:
    """:func:`score` for several subsets with the model loaded once: ``{subset: scores}``."""
    import torch
    from fairseq import checkpoint_utils

    import fairseq_plugins  # noqa: F401  (checkpoint loading on torch >= 2.6)

    if os.path.isfile(os.path.join(data, "classification.json")):
        data = os.path.join(data, "data-bin")
    if not os.path.isfile(checkpoint):
        raise UserError(f"checkpoint not found: {checkpoint}")
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([checkpoint], arg_overrides={"data": data})
    model = models[0].eval()
    if not cpu and torch.cuda.is_available():
        model = model.cuda()
    head = cfg.criterion.classification_head_name if cfg.criterion else "sentence_classification_head"
    return {subset: _predict(model, task, head, subset, cpu, max_tokens, checkpoint) for subset in subsets}


def _predict(model, task, head: str, subset: str, cpu: bool, max_tokens: int, checkpoint: str) -> dict:
    import torch

    task.load_dataset(subset)
    dataset = task.dataset(subset)
    itr = task.get_batch_iterator(dataset, max_tokens=max_tokens, required_batch_size_multiple=1,
                                  ignore_invalid_inputs=False).next_epoch_itr(shuffle=False)
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
    from sklearn.metrics import accuracy_score, f1_score

    # macro F1 over the classes in the gold labels or the predictions (scikit-learn's default label set)
    macro_f1 = float(f1_score(gold, pred, average="macro", zero_division=0))
    names = [task.label_dictionary[c + task.label_dictionary.nspecial] for c in pred]
    return {"subset": subset, "examples": len(gold), "accuracy": float(accuracy_score(gold, pred)),
            "macro_f1": macro_f1,
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
    a.add_argument("--train-rows", type=int, default=0,
                   help="use the first N training rows instead (a learning curve; 0 = --max-rows)")
    recipes = finetune_recipes()
    a.add_argument("--encode", choices=["model", *recipes], default="model",
                   help="model: as the pretraining data; a scheme: its fine-tuning-time encoding over the pretrained "
                        "vocabulary (" + "; ".join(f"{n}: {r.label or n}" for n, r in recipes.items()) + ")")
    # each such scheme's options and the noise's, as their dataclasses declare them (preprocess.options)
    for name, recipe in recipes.items():
        add_arguments(a.add_argument_group(f"with --encode {name}"), recipe.Options, only=recipe.finetune_options,
                      aliases=False)
    add_arguments(a.add_argument_group("whitespace noise (FLOTA's Table 4), for either --encode: dropped in a copy "
                                       "of the test split (subset test1, scored beside the clean test)"),
                  NoiseOptions)
    a.add_argument("--noise-splits", default="",
                   help="comma-separated splits (train, valid) that also get the noise, in place (training-time "
                        "noise); the test split always keeps its clean copy")
    a.add_argument("--workers", type=int, default=1, help="encoder processes")
    s = sub.add_parser("score", help="accuracy and macro-F1 of a fine-tuned checkpoint")
    s.add_argument("--checkpoint", required=True, help="fine-tuned fairseq checkpoint")
    s.add_argument("--data", required=True, help="prepare's --out folder (or its data-bin)")
    s.add_argument("--subset", default="test",
                   help="fairseq subset to score, or several, comma-separated (the model is loaded once)")
    s.add_argument("--gpu", action="store_true", help="run on the GPU (default: CPU)")
    s.add_argument("--output", default=None,
                   help="also write the scores as JSON here; with several subsets a folder, where each subset's "
                        "scores go to NAME_scores.json (valid: dev, test: test, test1: test_noisy)")
    r = sub.add_parser("arch-args", help="print the architecture options of a pretrained checkpoint")
    r.add_argument("checkpoint")
    args = p.parse_args(argv)
    if args.command == "arch-args":
        print(" ".join(arch_args(args.checkpoint)))
        return 0
    if args.command == "prepare":
        recipe = finetune_recipes().get(args.encode)
        info = prepare(args.lm_data, args.csv_prefix, args.out, args.max_rows, args.encode,
                       options_from(recipe.Options, args) if recipe else None, options_from(NoiseOptions, args),
                       tuple(x for x in args.noise_splits.split(",") if x), args.workers, train_rows=args.train_rows)
        print(json.dumps({k: info.get(k) for k in ("data", "num_classes", "rows", "test_subsets", "reused")}))
    else:
        subsets = [x for x in args.subset.split(",") if x]
        results = score_subsets(args.checkpoint, args.data, subsets, cpu=not args.gpu)
        for subset, result in results.items():
            if args.output:
                path = args.output if len(subsets) == 1 else \
                    os.path.join(args.output, f"{SCORE_NAMES.get(subset, subset)}_scores.json")
                with atomic_output(path) as fh:
                    json.dump(result, fh, indent=1)
            print(json.dumps({k: result[k] for k in ("subset", "examples", "accuracy", "macro_f1")}))
    return 0



def cli() -> None:
    """Console-script entry point (see setup.py)."""
    sys.exit(run_main(main))


if __name__ == "__main__":
    cli()
