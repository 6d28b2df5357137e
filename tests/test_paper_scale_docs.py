"""The paper-scale pages, run as written at toy size, offline: every ``bash`` block of
``docs/paper-scale-bite-wmt.md`` and ``docs/paper-scale-roberta.md`` carries a ``<!-- toy-test -->`` marker, and
the marked blocks run in order from a folder laid out like the repository root (``../shared`` beside it), with
a few exact substitutions for size (a Multi30k fixture in place of the WMT download, a Wikipedia dump made here,
a few hundred pieces in place of 32k/16k, ``--dry-run`` for the multi-GPU commands, a stand-in ``sbatch``, a
``--tiny`` model so that averaging, scoring and fine-tuning have a checkpoint).  Every substitution must find its
text, and the commands keep their options, so a renamed option or a changed page makes the test fail."""
from __future__ import annotations

import bz2
import gzip
import json
import os
import re
import subprocess
from xml.sax.saxutils import escape

import pytest

from conftest import REPO, SHARED, cli_env, require_shared

pytestmark = pytest.mark.slow

MARK = "<!-- toy-test -->"
FAKE_SBATCH = """#!/bin/sh
cat "$1" >> "$RECORD"
echo "Submitted batch job 4242"
"""


def page_script(page: str) -> str:
    """The page's marked bash blocks, in order; every bash block of the page must be marked."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    marked = re.findall(rf"^{re.escape(MARK)}\n```bash\n(.*?)^```", text, re.S | re.M)
    assert marked, f"{page} has no {MARK} blocks"
    assert len(marked) == len(re.findall(r"^```bash\n", text, re.M)), f"{page}: a bash block is not marked {MARK}"
    return "".join(marked)


def substitute(script: str, subs: list[tuple[str, str]]) -> str:
    for old, new in subs:
        assert old in script, f"the page no longer has {old!r}"
        script = script.replace(old, new)
    return script


def checkout(tmp_path):
    """A folder laid out like the repository root (links to its files), ../shared beside it, a stand-in sbatch."""
    root = tmp_path / "checkout"
    root.mkdir()
    for name in os.listdir(REPO):
        if name != ".git":
            os.symlink(REPO / name, root / name)
    os.symlink(SHARED.parent, tmp_path / "shared")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sbatch").write_text(FAKE_SBATCH)
    (fake / "srun").write_text("#!/bin/sh\nexit 1\n")
    for tool in ("sbatch", "srun"):
        os.chmod(fake / tool, 0o755)
    env = cli_env()
    env.update(PATH=f"{fake}{os.pathsep}{env['PATH']}", RECORD=str(tmp_path / "sbatch-scripts"),
               OMP_NUM_THREADS="1")
    return root, env


def run_script(script: str, root, env):
    run = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=root, env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, f"page commands failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return run


def head(path, n):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [next(fh) for _ in range(n)]


def test_bite_wmt_page_runs_at_toy_size(tmp_path):
    multi30k = require_shared("multi30k")
    require_shared("nltk_data")
    # the download's stand-in: WMT'16's three corpora and newstest2013/2014, as --from DIR finds them
    fixture = tmp_path / "wmt-copies"
    fixture.mkdir()
    for lang in ("en", "de"):
        train = head(multi30k / f"train.{lang}.gz", 240)
        for i, corpus in enumerate(("europarl-v7", "commoncrawl", "news-commentary-v11")):
            (fixture / f"{corpus}.de-en.{lang}").write_text("".join(train[80 * i:80 * (i + 1)]), encoding="utf-8")
        (fixture / f"newstest2013.{lang}").write_text("".join(head(multi30k / f"val.{lang}.gz", 40)), encoding="utf-8")
        (fixture / f"newstest2014.{lang}").write_text(
            "".join(head(multi30k / f"test_2016_flickr.{lang}.gz", 40)), encoding="utf-8")
    tiny = ("bash train_scripts/train_transformer_big.sh --data work/wmt16-bite --save-dir ckpt/wmt16-bite --tiny "
            "--max-update 20\n")
    script = substitute(page_script("paper-scale-bite-wmt.md"), [
        ("--wmt16 --no-clean --out data/wmt16-raw", f"--wmt16 --no-clean --out data/wmt16-raw --from {fixture}"),
        ("--vocab-size 32000", "--vocab-size 500"),
        ("--workers 16", "--workers 2"),
        ("--gpus 8\n", "--gpus 8 --dry-run\n"),
        ("for V in bpe bite; do", tiny + "for V in bite; do"),          # one row trained, the loop's commands kept
        ("--best-and-previous 9", "--best-and-previous 1"),
        ("--fp16\n", "--cpu\n"),
    ])
    root, env = checkout(tmp_path)
    run = run_script(script, root, env)

    prepared = json.loads((root / "data" / "wmt16" / "prepare.json").read_text())
    assert prepared, "prepare.json is empty"
    n_test = len((root / "data" / "wmt16" / "test.en").read_text(encoding="utf-8").splitlines())
    assert n_test == 40                                                   # newstest2014 is never cleaned
    for v in ("bpe", "bite"):
        assert (root / "work" / f"wmt16-{v}" / "binarize.json").exists()
    # the dry runs: the paper's 8-GPU layout, and node 0 of 2
    assert "--nproc-per-node 8" in run.stdout and "--update-freq 16" in run.stdout
    assert "--nnodes 2 --node-rank 0 --master-addr node0" in run.stdout
    sbatch = (tmp_path / "sbatch-scripts").read_text()
    assert "#SBATCH --gpus-per-node=8" in sbatch and "#SBATCH --partition=gpu" in sbatch
    assert (root / "ckpt" / "wmt16-bite" / "average.pt").stat().st_size > 0
    scores = json.loads((root / "eval" / "wmt16-bite" / "scores.json").read_text())
    assert {"tok_bleu", "bleu", "bleu_signature"} <= set(scores)


def make_dump(path, n_articles=100):
    """A small English Wikipedia dump in the export layout (namespaced XML, siteinfo), Multi30k sentences as text."""
    from tests.test_prepare_wikipedia import FOOTER, HEADER

    lines = [line.strip() for line in head(SHARED / "multi30k" / "train.en.gz", 6 * n_articles)]
    pages = []
    for i in range(n_articles):
        text = "\n\n".join(" ".join(lines[6 * i + j:6 * i + j + 2]) for j in (0, 2, 4))
        pages.append(f"  <page>\n    <title>Article {i}</title>\n    <ns>0</ns>\n    <id>{i + 1}</id>\n"
                     f"    <revision><id>{i + 1}</id><text xml:space=\"preserve\">{escape(text)}</text></revision>\n"
                     "  </page>\n")
    with bz2.open(path, "wt", encoding="utf-8") as fh:
        fh.write(HEADER + "".join(pages) + FOOTER)


def test_roberta_page_runs_at_toy_size(tmp_path):
    for name in ("multi30k", "space_models", "superbizarre"):
        require_shared(name)
    dump = tmp_path / "enwiki-toy-pages-articles.xml.bz2"
    make_dump(dump)
    script = page_script("paper-scale-roberta.md")
    # the toy runs one model type and one task (the loops' commands are kept), one seed, one scheme
    script = substitute(script, [
        ("--dump enwiki-latest-pages-articles.xml.bz2 --out text --workers 16",
         f"--dump {dump} --out text --workers 16 --valid-fraction 0.2"),
        ("--vocab-size 16000", "--vocab-size 400"),
        ("--workers 16", "--workers 2"),
        ("for T in bpe unigram; do", "for T in unigram; do"),
        ("for V in bpe bpe-prime bpe-prime-nospace unigram unigram-prime unigram-prime-nospace; do",
         "for V in unigram unigram-prime-nospace; do"),
        ("--gpus 8\n", "--gpus 8 --dry-run\n"),
        ("NNODES=2 NODE_RANK=0",
         "bash train_scripts/pretrain_roberta.sh --data work/lm-unigram --save-dir ckpt/lm-unigram --tiny\n"
         "NNODES=2 NODE_RANK=0"),
        ("for TASK in arxiv reddit; do", "for TASK in arxiv; do"),
        ("--seeds 10", "--seeds 1"),
        ("-- --gpus 1\n", "-- --gpus 1 --cpu --tiny --max-rows 40 --epochs 1\n"),
        ("--seed 1 --gpus 1\n", "--seed 1 --gpus 1 --cpu --max-rows 40 --dry-run\n"),
    ])
    kept = [line for line in script.splitlines(keepends=True)
            if not re.match(r"\s+--scheme (bpe|unigram-prime)", line)]
    assert len(script.splitlines()) - len(kept) == 5                     # the five other rows of the paper
    root, env = checkout(tmp_path)
    run = run_script("".join(kept), root, env)

    for split in ("train", "valid"):
        assert (root / "text510" / f"{split}.en").stat().st_size > 0
    for v in ("unigram", "unigram-prime", "unigram-prime-nospace", "published-unigram-prime-nospace"):
        assert (root / "work" / f"lm-{v}" / "binarize.json").exists(), v
    # the 8-GPU dry run keeps the paper's 2,048 sequences; node 0 of 2; the SLURM job asks for 2 x 8 GPUs
    assert "2,048 sequences per update = 8 process(es)" in run.stderr
    assert "--nnodes 2 --node-rank 0 --master-addr node0" in run.stdout
    sbatch = (tmp_path / "sbatch-scripts").read_text()
    assert "#SBATCH --nodes=2" in sbatch and "#SBATCH --gpus-per-node=8" in sbatch
    report = json.loads((root / "ft" / "arxiv" / "multiseed.json").read_text())
    assert "unigram" in json.dumps(report)
    assert "--random-init" in run.stdout                                 # the control's launch command, dry run
    assert "pretrain_roberta.sh" in run.stdout and "finetune_classification.sh" in run.stdout   # the demo's plan
