"""Checkpoint averaging: exact parameter means, last-N selection, clear errors, and a real fairseq checkpoint
average that loads in fairseq-generate."""
import sys

import pytest
import torch

from preprocess.common import UserError
from tests.conftest import TINY_TRANSFORMER_ARGS, multi30k_slice
from train_scripts.average_checkpoints import average_checkpoints, last_checkpoints, main


def _fake_checkpoint(path, seed, extra=None):
    g = torch.Generator().manual_seed(seed)
    model = {"w": torch.randn(4, 3, generator=g), "b": torch.randn(3, generator=g, dtype=torch.float64),
             "h": torch.randn(5, generator=g).half(), "version": torch.tensor([3])}
    model.update(extra or {})
    torch.save({"model": model, "cfg": {"seed": seed}, "last_optimizer_state": {"x": 1}}, path)
    return model


def test_average_is_exact_mean(tmp_path):
    models = [_fake_checkpoint(tmp_path / f"c{i}.pt", i) for i in range(3)]
    state = average_checkpoints([tmp_path / f"c{i}.pt" for i in range(3)])
    for key in ("w", "b", "h"):
        expected = (sum(m[key].double() for m in models) / 3).to(models[0][key].dtype)
        assert state["model"][key].dtype == models[0][key].dtype
        assert torch.equal(state["model"][key], expected), key
    assert torch.equal(state["model"]["version"], torch.tensor([3]))
    assert state["cfg"] == {"seed": 0}  # metadata of the first input
    assert state["last_optimizer_state"] is None
    # averaging a checkpoint with itself is the identity
    assert torch.equal(average_checkpoints([tmp_path / "c1.pt"])["model"]["w"], models[1]["w"])


def test_average_errors(tmp_path):
    _fake_checkpoint(tmp_path / "a.pt", 0)
    _fake_checkpoint(tmp_path / "b.pt", 1, {"extra": torch.zeros(2)})
    with pytest.raises(UserError, match="different parameters"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"])
    _fake_checkpoint(tmp_path / "c.pt", 2, {"w": torch.zeros(2, 2)})
    with pytest.raises(UserError, match="shape"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "c.pt"])
    _fake_checkpoint(tmp_path / "d.pt", 3, {"version": torch.tensor([4])})
    with pytest.raises(UserError, match="non-floating"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "d.pt"])
    with pytest.raises(UserError, match="not found"):
        average_checkpoints([tmp_path / "missing.pt"])
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(UserError, match="cannot read"):
        average_checkpoints([tmp_path / "junk.pt"])


def test_last_n_selection(tmp_path):
    for name in ("checkpoint1.pt", "checkpoint2.pt", "checkpoint10.pt", "checkpoint_best.pt",
                 "checkpoint_last.pt", "checkpoint_1_50.pt", "checkpoint_2_100.pt", "checkpoint_3_150.pt"):
        (tmp_path / name).touch()
    names = lambda paths: [p.rsplit("/", 1)[1] for p in paths]  # noqa: E731
    assert names(last_checkpoints(str(tmp_path), 2, "epoch")) == ["checkpoint10.pt", "checkpoint2.pt"]
    assert names(last_checkpoints(str(tmp_path), 2, "epoch", upper_bound=2)) == ["checkpoint2.pt", "checkpoint1.pt"]
    assert names(last_checkpoints(str(tmp_path), 2, "update")) == ["checkpoint_3_150.pt", "checkpoint_2_100.pt"]
    with pytest.raises(UserError, match="but found 3; .* can average with --num-epoch-checkpoints 3 or fewer"):
        last_checkpoints(str(tmp_path), 4, "update")


def _tiny_run(run_cli, root, n_train, n_valid, n_test, *train_options):
    """A Multi30k slice, its joined-dictionary data-bin and a tiny transformer trained on it: (bin, user dir, ckpt)."""
    data = multi30k_slice(root / "raw", n_train=n_train, n_valid=n_valid, n_test=n_test)
    bin_dir = root / "bin"
    run_cli(["fairseq-preprocess", "--source-lang", "en", "--target-lang", "de", "--trainpref", data / "train",
             "--validpref", data / "valid", "--testpref", data / "test", "--destdir", bin_dir,
             "--joined-dictionary", "--workers", "1"])
    user_dir = run_cli(["python", "-m", "fairseq_plugins"]).stdout.strip()
    ckpt = root / "ckpt"
    run_cli(["fairseq-train", bin_dir, "--user-dir", user_dir, *TINY_TRANSFORMER_ARGS, "--share-all-embeddings",
             "--save-dir", ckpt, *train_options])
    return bin_dir, user_dir, ckpt


def test_real_fairseq_checkpoints_average_and_generate(run_cli, tmp_path):
    """Two checkpoints of one tiny training run (updates 2 and 4): the CLI's average equals their mean, and
    fairseq-generate decodes the test set with it."""
    bin_dir, user_dir, ckpt = _tiny_run(run_cli, tmp_path, 300, 20, 12, "--max-update", "4",
                                        "--save-interval-updates", "2", "--max-tokens", "500")
    inputs = [ckpt / "checkpoint_1_2.pt", ckpt / "checkpoint_1_4.pt"]
    if not all(p.exists() for p in inputs):  # 300 pairs at 500 tokens may span an epoch boundary
        inputs = sorted(ckpt.glob("checkpoint_*_*.pt"))[-2:]
    assert len(inputs) == 2
    avg = tmp_path / "avg.pt"
    run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", ckpt,
             "--num-update-checkpoints", "2", "--output", avg])
    a, b, c = (torch.load(p, map_location="cpu", weights_only=False)["model"] for p in (*inputs, avg))
    assert a.keys() == c.keys()
    changed = 0
    for key in a:
        if a[key].is_floating_point():
            assert torch.equal(c[key], ((a[key].double() + b[key].double()) / 2).to(a[key].dtype)), key
            changed += not torch.equal(a[key], b[key])
    assert changed > 0  # the two checkpoints really differ, so the test can tell an average from a copy
    # the configuration compared before averaging: the architecture's options, not the run's training options
    from train_scripts.average_checkpoints import model_config

    config = model_config(torch.load(inputs[0], map_location="cpu", weights_only=False))
    assert config["arch"] == "transformer" and config["encoder_embed_dim"] == 32 and config["encoder_layers"] == 1
    assert "lr" not in config and "max_update" not in config and "save_dir" not in config
    gen = run_cli(["fairseq-generate", bin_dir, "--user-dir", user_dir, "--path", avg, "--gen-subset", "test",
                   "--beam", "2", "--max-len-a", "1", "--max-len-b", "5", "--cpu", "--batch-size", "16",
                   # fairseq-fixed drops a last batch that is not a multiple of this (8 by default)
                   "--required-batch-size-multiple", "1"])
    assert sum(line.startswith("H-") for line in gen.stdout.splitlines()) == 12

    # the CLI reports a bad request as one line with exit status 2
    bad = run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", ckpt,
                   "--num-epoch-checkpoints", "5", "--output", tmp_path / "x.pt"], check=False)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error:") and not (tmp_path / "x.pt").exists()
    assert main(["--inputs", str(inputs[0]), "--output", str(tmp_path / "one.pt")]) == 0


def _epoch_state(path, epoch, updates, iterations_in_epoch=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    torch.save({"model": {"w": torch.randn(3, generator=g)}, "optimizer_history": [{"num_updates": updates}],
                "extra_state": {"train_iterator": {"epoch": epoch + 1 if iterations_in_epoch == 0 else epoch,
                                                   "iterations_in_epoch": iterations_in_epoch}}}, path)


@pytest.fixture(scope="module")
def fifteen_epochs(tmp_path_factory):
    """A real tiny training run of 15 epochs (every epoch checkpoint kept), its data-bin and user dir."""
    from tests.conftest import run_command

    root = tmp_path_factory.mktemp("epochs")
    return (root, *_tiny_run(run_command, root, 120, 10, 9, "--max-epoch", "15", "--max-tokens", "1000"))


def test_best_and_previous_nine_on_a_real_run(run_cli, fifteen_epochs, tmp_path):
    """15 epoch checkpoints, the best is epoch 12: --best-and-previous 9 averages epochs 3-12 exactly (float64
    mean of the ten), and fairseq-generate decodes with the result."""
    import shutil

    root, bin_dir, user_dir, ckpt = fifteen_epochs
    run = tmp_path / "run"
    shutil.copytree(ckpt, run)
    assert sorted(int(p.stem[len("checkpoint"):]) for p in run.glob("checkpoint[0-9]*.pt")) == list(range(1, 16))
    shutil.copy(run / "checkpoint12.pt", run / "checkpoint_best.pt")  # as if epoch 12 had the best valid loss
    avg = tmp_path / "avg.pt"
    proc = run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", run, "--best-and-previous", "9",
                    "--output", avg])
    expected_inputs = [str(run / f"checkpoint{e}.pt") for e in range(3, 13)]
    assert proc.stderr.splitlines()[0] == f"averaging 10 checkpoints: {' '.join(expected_inputs)}"
    states = [torch.load(p, map_location="cpu", weights_only=False)["model"] for p in expected_inputs]
    result = torch.load(avg, map_location="cpu", weights_only=False)
    for key, value in result["model"].items():
        if value.is_floating_point():
            mean = sum(s[key].double() for s in states) / 10
            assert torch.equal(value, mean.to(value.dtype)), key
    # the ten really differ, so an average of fewer or other epochs would not pass the check above
    key = "encoder.embed_tokens.weight"
    assert not torch.equal(states[0][key], states[-1][key])
    assert not torch.equal(result["model"][key], (sum(s[key].double() for s in states[1:]) / 9).float())
    gen = run_cli(["fairseq-generate", bin_dir, "--user-dir", user_dir, "--path", avg, "--gen-subset", "test",
                   "--beam", "2", "--max-len-a", "1", "--max-len-b", "5", "--cpu", "--batch-size", "16",
                   "--required-batch-size-multiple", "1"])
    assert sum(line.startswith("H-") for line in gen.stdout.splitlines()) == 9

    # a folder without all ten: one line naming what is missing and what to do; nothing written
    (run / "checkpoint3.pt").unlink()
    (run / "checkpoint5.pt").unlink()
    bad = run_cli(["python", "-m", "train_scripts.average_checkpoints", "--inputs", run, "--best-and-previous", "9",
                   "--output", tmp_path / "x.pt"], check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "lacks checkpoint3.pt, checkpoint5.pt" in bad.stderr and "--keep-last-epochs" in bad.stderr
    assert not (tmp_path / "x.pt").exists()


def test_best_and_previous_errors(tmp_path):
    from train_scripts.average_checkpoints import best_and_previous, best_epoch

    for e in range(1, 6):
        _epoch_state(tmp_path / f"checkpoint{e}.pt", e, 10 * e, seed=e)
    with pytest.raises(UserError, match="no checkpoint_best.pt"):
        best_and_previous(str(tmp_path), 2)
    _epoch_state(tmp_path / "checkpoint_best.pt", 4, 40)
    assert best_epoch(str(tmp_path)) == (4, 40)
    assert [p.rsplit("/", 1)[1] for p in best_and_previous(str(tmp_path), 2)] == \
        ["checkpoint2.pt", "checkpoint3.pt", "checkpoint4.pt"]
    with pytest.raises(UserError, match="no 9 epochs before it"):
        best_and_previous(str(tmp_path), 9)
    _epoch_state(tmp_path / "checkpoint_best.pt", 4, 41)  # not the run's epoch 4
    with pytest.raises(UserError, match="mixes runs"):
        best_and_previous(str(tmp_path), 2)
    _epoch_state(tmp_path / "checkpoint_best.pt", 4, 37, iterations_in_epoch=7)  # saved mid-epoch
    with pytest.raises(UserError, match="middle of epoch 4 .* no checkpoint_E_U.pt of update 37"):
        best_and_previous(str(tmp_path), 2)


def test_num_best_checkpoints_like_fairseq(tmp_path):
    """fairseq's --num-best-checkpoints: the N lowest values of --keep-best-checkpoints' file names."""
    from train_scripts.average_checkpoints import best_checkpoints

    for i, value in enumerate(("4.512", "3.9071", "5.0002", "3.9503")):
        _epoch_state(tmp_path / f"checkpoint.best_loss_{value}.pt", i + 1, i, seed=i)
    _epoch_state(tmp_path / "checkpoint3.pt", 3, 3)
    assert [p.rsplit("/", 1)[1] for p in best_checkpoints([str(tmp_path)], 2)] == \
        ["checkpoint.best_loss_3.9071.pt", "checkpoint.best_loss_3.9503.pt"]
    assert main(["--inputs", *map(str, sorted(tmp_path.glob("checkpoint.best_*"))), "--num-best-checkpoints", "3",
                 "--output", str(tmp_path / "avg.pt")]) == 0
    with pytest.raises(UserError, match="found 4"):
        best_checkpoints([str(tmp_path)], 5)


# --- what is averaged is checked ------------------------------------------------------------------------------

def _configured(path, seed, model_cfg=None, args=None):
    """A fake checkpoint with the same tensor shapes whatever its saved configuration."""
    g = torch.Generator().manual_seed(seed)
    state = {"model": {"w": torch.randn(4, 3, generator=g)}, "cfg": {"model": model_cfg}, "args": args}
    torch.save(state, path)


def test_model_configurations_must_agree(tmp_path):
    base = {"_name": "transformer", "encoder_layers": 1, "dropout": 0.1, "share_all_embeddings": True}
    _configured(tmp_path / "a.pt", 0, base)
    _configured(tmp_path / "b.pt", 1, dict(base))
    assert average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"])["model"]["w"].shape == (4, 3)
    # another architecture whose tensors have the same shapes: refused, naming the architecture first
    _configured(tmp_path / "c.pt", 2, {**base, "_name": "transformer_iwslt_de_en", "dropout": 0.3})
    with pytest.raises(UserError, match=r"another model configuration .*\(arch: 'transformer' vs "
                                        r"'transformer_iwslt_de_en'\)"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "c.pt"])
    _configured(tmp_path / "d.pt", 3, {**base, "dropout": 0.3})
    with pytest.raises(UserError, match=r"\(dropout: 0.1 vs 0.3\)"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "d.pt"])
    _configured(tmp_path / "e.pt", 4, {k: v for k, v in base.items() if k != "share_all_embeddings"})
    with pytest.raises(UserError, match=r"share_all_embeddings: True vs \(not set\)"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "e.pt"])
    _configured(tmp_path / "f.pt", 5, None)
    with pytest.raises(UserError, match="saved model configuration"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "f.pt"])


def test_legacy_args_compare_the_models_own_options(tmp_path):
    """An ``args`` namespace holds every option of the run: only the architecture's own options must agree, so
    a run resumed with another learning rate or --max-update still averages."""
    from argparse import Namespace

    from train_scripts.average_checkpoints import model_config

    common = dict(arch="transformer", encoder_embed_dim=32, encoder_ffn_embed_dim=64, dropout=0.1)
    _configured(tmp_path / "a.pt", 0, args=Namespace(**common, lr=[0.001], max_update=100))
    _configured(tmp_path / "b.pt", 1, args=Namespace(**common, lr=[0.0005], max_update=200))
    config = model_config(torch.load(tmp_path / "a.pt", weights_only=False))
    assert config["arch"] == "transformer" and config["encoder_ffn_embed_dim"] == 64 and "lr" not in config
    average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"])
    _configured(tmp_path / "c.pt", 2, args=Namespace(**{**common, "encoder_ffn_embed_dim": 48}, lr=[0.001]))
    with pytest.raises(UserError, match=r"encoder_ffn_embed_dim: 64 vs 48"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "c.pt"])


def test_inputs_compared_as_files(tmp_path):
    _fake_checkpoint(tmp_path / "a.pt", 0)
    _fake_checkpoint(tmp_path / "b.pt", 1)
    (tmp_path / "link.pt").symlink_to(tmp_path / "a.pt")
    with pytest.raises(UserError, match="are the same file"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "link.pt"])
    (tmp_path / "sub").mkdir()
    with pytest.raises(UserError, match="are the same file"):
        average_checkpoints([tmp_path / "a.pt", tmp_path / "sub" / ".." / "a.pt"])


def _cli(args):
    from tests.conftest import run_command

    return run_command(["python", "-m", "train_scripts.average_checkpoints", *args], check=False)


def test_output_policy(tmp_path):
    _fake_checkpoint(tmp_path / "a.pt", 0)
    _fake_checkpoint(tmp_path / "b.pt", 1)
    before = (tmp_path / "b.pt").read_bytes()
    # the output is one of the inputs (another spelling, or a link to it): refused before any work
    (tmp_path / "out-link.pt").symlink_to(tmp_path / "b.pt")
    for output in (str(tmp_path / "sub" / ".." / "b.pt"), str(tmp_path / "out-link.pt")):
        (tmp_path / "sub").mkdir(exist_ok=True)
        bad = _cli(["--inputs", tmp_path / "a.pt", tmp_path / "b.pt", "--output", output])
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "same file as input checkpoint" in bad.stderr
        assert (tmp_path / "b.pt").read_bytes() == before
    # a folder as --output: one line, nothing created
    for output in (tmp_path / "newdir", tmp_path / "sub"):
        bad = _cli(["--inputs", tmp_path / "a.pt", tmp_path / "b.pt", "--output", f"{output}/"])
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "is a directory" in bad.stderr, bad.stderr
    assert not (tmp_path / "newdir").exists() and list((tmp_path / "sub").iterdir()) == []
    # the output follows the umask, like any file the user creates
    from tests.conftest import run_command

    proc = run_command(["bash", "-c", 'umask 027 && "$0" -m train_scripts.average_checkpoints --inputs "$1" "$2" '
                        '--output "$3"', sys.executable, tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "avg.pt"])
    assert proc.returncode == 0
    assert (tmp_path / "avg.pt").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# --- what the messages advise -------------------------------------------------------------------------------

def _tiny_folder(path):
    """What a short --max-update run leaves: checkpoint_best.pt and checkpoint_last.pt, saved mid-epoch."""
    path.mkdir()
    _epoch_state(path / "checkpoint_best.pt", 1, 30, iterations_in_epoch=30)
    _epoch_state(path / "checkpoint_last.pt", 1, 30, iterations_in_epoch=30)
    return path


def test_messages_name_what_is_missing(tmp_path):
    run = _tiny_folder(tmp_path / "tiny")
    bad = _cli(["--inputs", run, "--best-and-previous", "9", "--output", tmp_path / "x.pt"])
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    err = bad.stderr
    assert "middle of epoch 1 (after update 30" in err and "holds checkpoint_best.pt, checkpoint_last.pt" in err
    assert "nothing to average there" in err
    # never advice that finds nothing
    assert "--num-update-checkpoints" not in err and "--num-epoch-checkpoints" not in err
    for mode in ("--num-update-checkpoints", "--num-epoch-checkpoints"):
        bad = _cli(["--inputs", run, mode, "2", "--output", tmp_path / "x.pt"])
        assert bad.returncode == 2 and "found 0" in bad.stderr and "nothing to average there" in bad.stderr
    # with update checkpoints in the folder, the message names the mode and the count that work
    for updates in (10, 20):
        _epoch_state(run / f"checkpoint_1_{updates}.pt", 1, updates, iterations_in_epoch=updates, seed=updates)
    bad = _cli(["--inputs", run, "--num-epoch-checkpoints", "2", "--output", tmp_path / "x.pt"])
    assert "found 0" in bad.stderr and "it can average with --num-update-checkpoints 2 or fewer" in bad.stderr
    assert not (tmp_path / "x.pt").exists()


def test_best_and_previous_with_update_checkpoints(tmp_path):
    """A best checkpoint saved mid-epoch (--save-interval-updates) is averaged with the update checkpoints
    before it."""
    from train_scripts.average_checkpoints import best_and_previous

    run = tmp_path / "run"
    run.mkdir()
    for updates in (8, 16, 24, 32):
        _epoch_state(run / f"checkpoint_1_{updates}.pt", 1, updates, iterations_in_epoch=updates, seed=updates)
    _epoch_state(run / "checkpoint_best.pt", 1, 24, iterations_in_epoch=24)
    assert [p.rsplit("/", 1)[1] for p in best_and_previous(str(run), 2)] == \
        ["checkpoint_1_8.pt", "checkpoint_1_16.pt", "checkpoint_1_24.pt"]
    with pytest.raises(UserError, match="with 2 update checkpoints before it, not 3"):
        best_and_previous(str(run), 3)
    assert main(["--inputs", str(run), "--best-and-previous", "1", "--output", str(tmp_path / "avg.pt")]) == 0


def test_copies_of_one_checkpoint_are_named(tmp_path, capsys):
    """checkpoint_best.pt and checkpoint_last.pt of a short run are two files with one content: averaged, with a
    warning that says so."""
    import shutil

    _fake_checkpoint(tmp_path / "a.pt", 0)
    _fake_checkpoint(tmp_path / "b.pt", 1)
    shutil.copy(tmp_path / "a.pt", tmp_path / "a-copy.pt")
    average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt"])
    assert "warning" not in capsys.readouterr().err
    average_checkpoints([tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "a-copy.pt"])
    err = capsys.readouterr().err
    assert f"{tmp_path / 'a-copy.pt'} holds the same parameters as {tmp_path / 'a.pt'}" in err
