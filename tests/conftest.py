"""Shared test fixtures: where the shared data lives and how to run the real command-line tools."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from preprocess.common import REPO

SHARED = Path(os.environ.get("SHARED_DATA", REPO.parent / "shared" / "data"))
REQUIRE_SHARED = os.environ.get("REQUIRE_SHARED_DATA") == "1"
BIN = Path(sys.executable).parent


def require_shared(relpath: str) -> Path:
    """``../shared/data/<relpath>``; skips the test when it is missing (fails under REQUIRE_SHARED_DATA=1).
    The plain function, for module-scoped fixtures; tests take the ``shared_path`` fixture."""
    path = SHARED / relpath
    if not path.exists():
        if REQUIRE_SHARED:
            pytest.fail(f"shared data missing (REQUIRE_SHARED_DATA=1): {path}")
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture
def shared_path():
    """``shared_path("multi30k/train.en.gz")`` -> Path; skips (or fails under REQUIRE_SHARED_DATA=1) if absent."""
    return require_shared


def cli_env() -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    nltk_dirs = [p for p in (env.get("NLTK_DATA"), str(BIN.parent / "nltk_data"), str(SHARED / "nltk_data")) if p]
    env["NLTK_DATA"] = os.pathsep.join(nltk_dirs)
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    return env


def run_command(args, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Run a command as ``run_cli`` does (the plain function, for module-scoped fixtures)."""
    args = [str(a) for a in args]
    if args[0] == "python":
        args[0] = sys.executable
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("cwd", REPO)
    proc = subprocess.run(args, env=cli_env(), **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"command failed ({proc.returncode}): {' '.join(args)}\n"
                             f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture
def small_disk(tmp_path):
    """``small_disk(bytes)``: a fresh tmpfs of that size (a real ENOSPC), unmounted afterwards; skipped where mount
    is refused (not root) or missing."""
    mounts = []

    def make(size: int) -> Path:
        mount = tmp_path / f"disk{len(mounts)}"
        mount.mkdir()
        try:
            proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                                  capture_output=True, text=True)
        except FileNotFoundError:
            pytest.skip("no mount command here")
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here (needs root): {proc.stderr.strip()}")
        mounts.append(mount)
        return mount

    yield make
    for mount in mounts:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture
def run_cli():
    """``run_cli(["fairseq-train", ...])``: venv bin first on PATH, NLTK_DATA set; asserts exit 0 by default."""
    return run_command


# NLTK data for in-process tests (BITE): the venv's download, else the shared copy
os.environ["NLTK_DATA"] = cli_env()["NLTK_DATA"]


#: a transformer small enough to train a few updates on one CPU core in seconds
TINY_TRANSFORMER_ARGS = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1",
    "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
    "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
    "--optimizer", "adam", "--lr", "0.001", "--criterion", "label_smoothed_cross_entropy",
    "--label-smoothing", "0.1", "--max-tokens", "2000", "--cpu", "--no-progress-bar", "--log-format", "simple",
    "--seed", "1",
]


def multi30k_slice(dest: Path, n_train: int = 1500, n_valid: int = 60, n_test: int = 37) -> Path:
    """Write raw ``{train,valid,test}.{en,de}`` slices of the shared Multi30k into ``dest``."""
    import gzip

    sources = {"train": ("train", n_train), "valid": ("val", n_valid), "test": ("test_2016_flickr", n_test)}
    dest.mkdir(parents=True, exist_ok=True)
    for split, (name, n) in sources.items():
        for lang in ("en", "de"):
            with gzip.open(require_shared(f"multi30k/{name}.{lang}.gz"), "rt", encoding="utf-8") as fh:
                lines = [next(fh) for _ in range(n)]
            (dest / f"{split}.{lang}").write_text("".join(lines), encoding="utf-8")
    return dest


def console_scripts() -> dict[str, str]:
    """name -> module of every console script setup.py installs: its CONSOLE_SCRIPTS and each scheme's own (read,
    not executed: preprocess/scheme_scripts.py, which setup.py runs)."""
    import runpy

    return runpy.run_path(str(REPO / "preprocess" / "scheme_scripts.py"))["console_scripts"](str(REPO))


# --- the fast loop: `make test-fast` = `pytest -m "not slow"` --------------------------------------------------

#: tests marked ``slow`` here rather than by a decorator in each file, so that one list says what the fast loop
#: leaves out: real fairseq training (tiny transformer / RoBERTa), the demo pipeline, end-to-end binarize runs
#: (SentencePiece training + tagging + fairseq-preprocess per test), equivalences over a whole corpus and commands
#: that read other packages' sources.  The fast loop (about 2 minutes on 2 cores) checks each behaviour at least
#: once; ``make test`` runs everything.  Name a test function (all its parameters)
#: as ``file::function``; a name that no longer exists in a collected file is an error, so the list stays true.
#: A test may also carry ``@pytest.mark.slow`` itself.
SLOW_TESTS = {
    # fairseq training end to end
    "test_spaces_fairseq.py::test_space_as_token_end_to_end",
    "test_wordmap_fairseq.py::test_wordmap_de_en_end_to_end",
    "test_bite_fairseq.py::test_bite_on_english_source_en_de",
    "test_bite_fairseq.py::test_bite_on_english_target_de_en",
    "test_flota_gpt2_ids.py::test_finetune_an_official_style_checkpoint_with_bpe_flota",
    "test_hub.py::test_translate",
    "test_hub.py::test_fill_mask_spaces",
    "test_hub.py::test_classification_head",
    "test_masked_lm_words.py::test_tiny_pretraining_with_whole_word_masking",
    "test_masked_lm_words.py::test_two_shard_lm_data_trains_round_robin",
    "test_multiseed.py::test_runner_runs_each_seed_once_and_reports",
    "test_recipes_average.py::test_best_and_previous_nine_on_a_real_run",
    "test_recipes_average.py::test_real_fairseq_checkpoints_average_and_generate",
    "test_recipes_roberta.py::test_pretrain_tiny",
    "test_recipes_roberta.py::test_finetune_superbizarre_tiny",
    "test_recipes_roberta.py::test_finetuning_data_noise_only_in_a_test_copy",
    "test_lm_demo.py::test_pretraining_part_end_to_end_stop_and_resume",
    "test_recipes_translation.py::test_tiny_train_average_evaluate",
    "test_recipes_translation.py::test_two_process_gloo_training_keeps_ranks_identical",
    "test_launch.py::test_two_shards_two_jobs_then_training_on_both",
    "test_binarize.py::test_a_new_scheme_is_one_file",
    # the demo pipeline
    "test_pipeline.py::test_pipeline_small_slice_columns_noise_resume_and_rerun",
    # binarize end to end on a Multi30k slice (learn + encode + fairseq-preprocess)
    "test_binarize.py::test_binarize_spaces_dictionary_is_the_models",
    "test_binarize.py::test_binarize_no_spaces_side",
    "test_binarize.py::test_binarize_bite_tags_once_and_reuses",
    "test_binarize.py::test_binarize_flota_over_a_given_vocabulary",
    "test_binarize.py::test_binarize_flota_over_a_learned_model",
    "test_binarize.py::test_binarize_wordmap_separate_dictionaries",
    "test_binarize.py::test_binarize_shards_shard_id_and_extra_test",
    "test_full_disk.py::test_binarize_on_a_full_disk_is_one_line_and_an_exit",
    # a joint Unigram model learned on 20,000 Multi30k lines (the fast loop keeps the small-model BITE tests)
    "test_bite_subword.py::test_acceptance_on_the_demo_setting",
    # tests sharing a module fixture that binarises or encodes a corpus end to end (the fixture is the cost)
    "test_bite_fairseq.py::test_symbols_are_single_pieces_in_the_encoded_english",
    "test_bite_fairseq.py::test_adapter_composes_with_bpe_spaces",
    "test_masked_lm_words.py::test_masked_spans_are_the_words",
    "test_masked_lm_words.py::test_drop_without_whole_words_and_sizes",
    "test_masked_lm_words.py::test_whole_words_needs_the_scheme_options",
    # data preparation from the shared copies
    "test_recipes_data.py::test_prepare_multi30k_from_local_copy",
    "test_recipes_data.py::test_prepare_wmt14_from_local_copy",
    # against the real two-node SLURM (jobs wait for the scheduler; make test runs them, CI requires them)
    "test_slurm.py::test_requeued_job_resumes_and_the_launcher_reports_success",
    "test_slurm.py::test_sharded_preprocessing_job_array_equals_local",
    "test_slurm.py::test_two_nodes_one_rank_each_world_size_two",
    "test_slurm.py::test_a_job_that_can_never_start_is_reported_with_slurms_reason",
    "test_slurm.py::test_cluster_script_is_idempotent_and_restores_the_host",
    "test_slurm.py::test_sbatch_refusals_are_one_line_with_sbatchs_message",   # brings the cluster up and down
    # all of Multi30k binarised with Wordmap's defaults; a tiny model trained for the asymmetric-pair warning
    "test_wordmap_fairseq.py::test_recipe_on_all_multi30k_defaults_and_no_unk",
    "test_translate.py::test_fairseq_interactive_warns_on_an_asymmetric_pair",
    # whole-command runs over every scheme or a paper table (8-10 s each on an idle 2-core machine)
    "test_intrinsic.py::test_command_prints_renyi_efficiency_for_every_scheme",
    "test_flota.py::test_evaluate_cli_reproduces_table3",
    # whole commands of 8-60 s each (slowest of the fast loop on 2026-11-28): the fine-tuning recipe's dry runs over
    # data it prepares, fairseq-preprocess against ours, the launcher starting fairseq, the published models as rows
    "test_recipes_roberta.py::test_finetune_defaults_are_the_released_scripts",
    "test_fairseq_preprocess.py::test_the_same_files_as_fairseq_preprocess",
    "test_fairseq_preprocess.py::test_the_workers_stop_when_the_command_is_killed",
    "test_launch.py::test_gpus_without_gpus_is_one_line_naming_cpu",
    "test_lm_demo.py::test_published_space_models_as_rows",
    "test_recipes_translation.py::test_transformer_big_defaults_dry_run",
    "test_entry_points.py::test_user_dir_still_registers_the_schemes",
    "test_flota_fairseq.py::test_fairseq_preprocess_on_flota_text",
    "test_compat.py::test_fairseq_tool_refuses_in_one_line_exit_2",
    # bench/scale_corpus.py end to end on a tiny corpus (a benchmark, not a module of the package)
    "test_bench_scale.py::test_scale_corpus_runs_on_a_tiny_corpus",
    # equivalences over a whole corpus (the fast loop keeps the same check on a sample or on random input)
    "test_hanta_fast.py::test_multi30k_german_tags_identical",
    "test_hanta_fast.py::test_multi30k_english_tags_identical",
    "test_bite_roundtrip.py::test_exact_changes_no_multi30k_training_sentence",
    "test_bite.py::test_plain_sentence_fast_path_equals_sacremoses",
    # the doubling checker proving it catches a quadratic encoder (the fast loop runs the checker once)
    "test_fuzz.py::test_growth_check_catches_a_quadratic_encoder",
    # every bad model file of every scheme, each a command (the fast loop keeps the per-scheme one-line tests)
    "test_fuzz.py::test_bad_files_are_one_line_errors",
    # the troubleshooting page against fairseq's, torch's and submitit's sources (reads thousands of files)
    "test_troubleshooting_messages.py::test_every_quoted_message_is_printed_by_something",
    "test_troubleshooting_messages.py::test_a_changed_message_fails",
    # fresh interpreters loading transformers for an export (the fast loop compares the export in this process)
    "test_export.py::test_tokenizer_json_needs_no_project_code",
    "test_export.py::test_tokenizer_class_loads_offline_with_auto_map",
    # metric commands over Multi30k, each a command (the functions behind them are tested in the fast loop)
    "test_bite.py::test_metrics_cli",
    "test_bite_roundtrip.py::test_encode_cli_metrics_and_recipe_take_the_option",
    "test_bite_subword.py::test_training_text_cli_and_one_pass_encoding",
}

#: parametrized tests of which the fast loop runs one case, the one named here: the behaviour is checked at each
#: edit, every scheme, model and variant in ``make test``.  The case kept is a cheap one that still runs this
#: project's code (the compiled loop rather than its Python twin, two workers rather than one); a name or case that
#: no longer exists is an error, as in SLOW_TESTS.
FAST_CASE = {
    "test_encode.py::test_interrupt_leaves_no_file_behind": "flota-SIGINT-2",
    "test_encode.py::test_three_workers_write_the_same_bytes_as_one": "spaces",
    "test_encode.py::test_encoding_a_chunk_leaves_no_reference_cycles": "bite-hanta",
    "test_export.py::test_spaces_tokenizer_json_equals_project": "bpe_prime-drop",
    "test_export.py::test_flota_class_equals_project": "bert-base-uncased",
    "test_flota.py::test_compiled_search_equals_python_search": "bert-base-uncased-wordpiece",
    "test_flota.py::test_equivalence_with_published_method_on_all_arxiv_titles": "bert-base-uncased-wordpiece-tenth",
    "test_hanta_fast.py::test_analyze_forward_identical": "morphmodel_en.pgz-compiled",
    "test_hanta_fast.py::test_random_token_sequences_identical": "morphmodel_en.pgz-compiled",
    "test_hanta_fast.py::test_long_sentence_and_long_words_identical": "compiled",
    "test_hanta_fast.py::test_taglevel_0_equals_taglevel_1_tags": "compiled",
    "test_hanta_fast.py::test_taglevel_1_tags_and_lemmas_identical": "compiled",
    "test_bite.py::test_batched_tagger_equals_nltk": "compiled",
    "test_bite.py::test_property_bite_alone_round_trips_hostile_text": "moses-False",
    "test_fuzz.py::test_cli_keeps_every_line": "flota",
    "test_fuzz.py::test_time_grows_linearly_in_line_and_token_length": "token-flota",
    "test_full_disk.py::test_average_on_a_full_disk_is_one_line_and_an_exit": "65536",
    "test_full_disk.py::test_encode_on_a_full_disk_is_one_line_and_an_exit": "2-gz",
    "test_encode.py::test_outputs_follow_the_umask": "2-18-420",
    "test_encode.py::test_non_seekable_inputs_go_through_the_same_workers": "2",
    "test_model_validation.py::test_encode_refuses_a_cut_model": "wordmap",
    "test_bite_subword.py::test_one_piece_per_symbol_and_no_lone_space": "unigram",
    "test_wordmap.py::test_indexed_counts_equal_pairwise_reference": "60",   # the quadratic reference on 60 verbs
}


@pytest.hookimpl(tryfirst=True)  # before -m/-k deselect anything
def pytest_collection_modifyitems(config, items):
    seen_files, found, kept = set(), set(), set()
    for item in items:
        name = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        seen_files.add(item.path.name)
        case = item.callspec.id if hasattr(item, "callspec") else None
        if name in SLOW_TESTS:
            found.add(name)
            item.add_marker(pytest.mark.slow)
        elif name in FAST_CASE:
            if case == FAST_CASE[name]:
                kept.add(name)
            else:
                item.add_marker(pytest.mark.slow)
    if any("::" in str(a) for a in config.args):  # node ids collect part of a file: a missing name proves nothing
        return
    missing = sorted(n for n in SLOW_TESTS - found if n.split("::")[0] in seen_files)
    missing += sorted(f"{n}[{FAST_CASE[n]}]" for n in set(FAST_CASE) - kept if n.split("::")[0] in seen_files)
    if missing:
        raise pytest.UsageError("tests/conftest.py SLOW_TESTS or FAST_CASE names tests that do not exist: "
                                + ", ".join(missing))


#: the lock the real-SLURM tests hold while their cluster is up (tests/test_slurm.py, tests/test_demo_slurm.py):
#: two files in two pytest-xdist workers would otherwise start clusters at once, and each edits /etc/hosts
SLURM_LOCK = Path("/tmp/morphtok-slurm-tests.lock")


class slurm_lock:
    """Hold :data:`SLURM_LOCK` (``fcntl.flock``, released when the process ends, even killed) for a ``with`` block."""

    def __enter__(self):
        import fcntl

        self.fh = open(SLURM_LOCK, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()
