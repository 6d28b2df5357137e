"""Space-as-token end to end through the real fairseq CLIs: train model -> encode -> preprocess -> train ->
restore -> validate -> generate/interactive with --bpe spaces -> sacreBLEU.  Asserts what must hold, not a BLEU."""
import sacrebleu

from preprocess.models.spm import SPACE_SYMBOL as SPACE
from tests.conftest import TINY_TRANSFORMER_ARGS, multi30k_slice


def test_space_as_token_end_to_end(run_cli, tmp_path):
    data = multi30k_slice(tmp_path / "raw")
    sp = tmp_path / "sp"
    run_cli(["python", "-m", "preprocess.schemes.spaces", "train", "--input", data / "train.en", data / "train.de",
             "--model-prefix", sp, "--model-type", "unigram", "--variant", "prime", "--vocab-size", "1000",
             "--seed", "1"])
    for split in ("train", "valid", "test"):
        run_cli(["python", "-m", "preprocess.encode", "--scheme", "spaces", "--model", f"{sp}.model",
                 "--spaces", "keep", "--workers", "2", "--quiet",
                 "--inputs", data / f"{split}.en", data / f"{split}.de",
                 "--outputs", tmp_path / f"{split}.tok.en", tmp_path / f"{split}.tok.de"])
        n_raw = len((data / f"{split}.en").read_text().splitlines())
        for lang in ("en", "de"):
            assert len((tmp_path / f"{split}.tok.{lang}").read_text().split("\n")) - 1 == n_raw

    bin_dir = tmp_path / "bin"
    run_cli(["fairseq-preprocess", "--source-lang", "en", "--target-lang", "de",
             "--trainpref", tmp_path / "train.tok", "--validpref", tmp_path / "valid.tok",
             "--testpref", tmp_path / "test.tok", "--destdir", bin_dir, "--joined-dictionary",
             "--srcdict", f"{sp}.dict.txt", "--workers", "2"])
    # the produced dictionary is used as is: fairseq's 4 specials + every entry of ours
    assert len((bin_dir / "dict.en.txt").read_text().splitlines()) == \
        len((tmp_path / "sp.dict.txt").read_text().splitlines())

    user_dir = run_cli(["python", "-m", "fairseq_plugins"]).stdout.strip()
    ckpt = tmp_path / "ckpt"
    train = ["fairseq-train", bin_dir, "--user-dir", user_dir, *TINY_TRANSFORMER_ARGS,
             "--share-all-embeddings", "--save-dir", ckpt]
    run_cli([*train, "--max-update", "6"])
    assert (ckpt / "checkpoint_last.pt").exists()
    # the checkpoint reloads (torch >= 2.6 weights_only default is handled by the plugin) and training resumes
    out = run_cli([*train, "--max-update", "9", "--restore-file", "checkpoint_last.pt"])
    assert "Loaded checkpoint" in out.stdout + out.stderr and "@ 6 updates" in out.stdout + out.stderr
    run_cli(["fairseq-validate", bin_dir, "--user-dir", user_dir, "--task", "translation", "--path",
             ckpt / "checkpoint_last.pt", "--cpu", "--max-tokens", "2000", "--valid-subset", "valid"])

    gen = run_cli(["fairseq-generate", bin_dir, "--user-dir", user_dir, "--path", ckpt / "checkpoint_last.pt",
                   "--gen-subset", "test", "--beam", "4", "--lenpen", "0.6", "--max-len-a", "1", "--max-len-b", "5",
                   "--bpe", "spaces", "--spaces-model", f"{sp}.model", "--spaces", "keep", "--cpu",
                   "--batch-size", "16"])
    hyps = {}
    for line in gen.stdout.splitlines():
        if line.startswith("D-"):
            idx, _score, text = line.split("\t", 2) if line.count("\t") >= 2 else (line.split("\t")[0], "", "")
            hyps[int(idx[2:])] = text
    refs = (data / "test.de").read_text(encoding="utf-8").splitlines()
    assert sorted(hyps) == list(range(len(refs)))  # one hypothesis per test sentence
    assert not any(SPACE in h for h in hyps.values())  # decoded by the scheme's own decoder
    bleu = sacrebleu.corpus_bleu([hyps[i] for i in range(len(refs))], [refs])
    assert 0.0 <= bleu.score <= 100.0

    inter = run_cli(["fairseq-interactive", bin_dir, "--user-dir", user_dir, "--path", ckpt / "checkpoint_last.pt",
                     "--bpe", "spaces", "--spaces-model", f"{sp}.model", "--cpu", "--beam", "2",
                     "--max-len-a", "1", "--max-len-b", "5"],
                    input="A dog runs.\nTwo men sit on a bench.\n")
    assert sum(line.startswith("D-") for line in inter.stdout.splitlines()) == 2
