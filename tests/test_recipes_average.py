"""Checkpoint averaging: exact parameter means, last-N selection, clear errors, and a real fairseq checkpoint
average that loads in fairseq-generate."""
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
    with pytest.raises(UserError, match="has 3"):
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
    with pytest.raises(UserError, match="middle of an epoch"):
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
