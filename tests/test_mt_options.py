"""The translation part's options are ``--mt-...`` (as the pretraining part's are ``--lm-...`` and the German
part's ``--de-...``), and every old name without the prefix still works: the same settings either way, ``--help``
lists the new name first, and the messages that name an option name the new one."""
from __future__ import annotations

import argparse
import re

import pytest

from preprocess.common import UserError
from train_scripts.demo.main import build_parser, parts
from train_scripts.demo.translation import part as translation
from train_scripts.demo.translation.rows import PRESET_OPTIONS

#: (option without the prefix, its values): every option of the part with a value other than its default
GIVEN = [("preset", ["fast"]), ("schemes", ["bpe", "unigram"]), ("baseline", ["bpe"]), ("noise-fraction", ["0.2"]),
         ("noise-seed", ["5"]), ("workers", ["3"]), ("gold-en", ["g.en"]), ("gold-de", ["g.de"]),
         ("example-ids", ["1", "2"]), ("train-lines", ["123"]), ("lr", ["0.01"]), ("patience", ["4"]),
         ("embed-dim", ["32"]), ("max-update", ["77"])]


def _group_actions() -> list:
    """The argparse actions of the translation part's group."""
    ap = build_parser(parts())
    group = next(g for g in ap._action_groups if g.title and g.title.startswith("the translation part"))
    return group._group_actions


def _parse(prefix: str, given=GIVEN) -> argparse.Namespace:
    argv = [x for name, values in given for x in (f"--{prefix}{name}", *values)]
    return build_parser(parts()).parse_args(["--part", "translation", "--dry-run", *argv])


def test_every_option_of_the_part_is_mt_first_with_its_old_name_as_alias():
    actions = _group_actions()
    assert len(actions) == 6 + len(PRESET_OPTIONS) + 4   # the part's 26 or so options
    for action in actions:
        first, *rest = action.option_strings
        assert first.startswith("--mt-"), action.option_strings
        assert rest == ["--" + first[len("--mt-"):]], action.option_strings
        assert action.dest == first[len("--mt-"):].replace("-", "_")


def test_old_and_new_names_give_the_same_settings():
    new, old = _parse("mt-"), _parse("")
    assert vars(new) == vars(old)
    assert new.preset == "fast" and new.schemes == ["bpe", "unigram"] and new.noise_seed == 5
    assert new.train_lines == 123 and new.lr == 0.01 and new.example_ids == [1, 2]
    mixed = _parse("", GIVEN[:3]), _parse("mt-", GIVEN[:3])
    assert vars(mixed[0]) == vars(mixed[1])


def test_the_settings_read_the_new_names(tmp_path):
    options = build_parser(parts()).parse_args(["--part", "translation", "--dry-run", "--output", str(tmp_path / "o"),
                                               "--mt-preset", "fast", "--mt-schemes", "bpe", "unigram",
                                               "--mt-max-update", "9"])
    args = translation.PART.settings(options)
    assert args.preset == "fast" and args.schemes == ["bpe", "unigram"] and args.max_update == 9
    assert args.baseline == "unigram" and args.preset_overrides == {"max_update": 9}


def test_help_lists_the_mt_names_first(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")   # one line per option
    with pytest.raises(SystemExit):
        build_parser(parts()).parse_args(["--help"])
    out = capsys.readouterr().out
    for name in ("preset", "schemes", "data", "noise-fraction", "max-update", "example-ids"):
        assert re.search(rf"^  --mt-{name} [A-Z_. \[\]]*, --{name} ", out, re.M), name


@pytest.mark.parametrize("argv, message", [
    (["--mt-schemes", "nope"], "in --mt-schemes (choose"),
    (["--mt-schemes", "bpe", "--mt-baseline", "unigram"], "--mt-baseline 'unigram' is not among --mt-schemes"),
    (["--schemes", "bpe", "--baseline", "unigram"], "--mt-baseline 'unigram' is not among --mt-schemes"),
])
def test_messages_name_the_new_options(argv, message, tmp_path):
    options = build_parser(parts()).parse_args(["--part", "translation", "--dry-run", "--output",
                                               str(tmp_path / "o"), *argv])
    with pytest.raises(UserError, match=re.escape(message)):
        translation.PART.settings(options)


def test_the_preflight_names_the_new_preset_option():
    assert translation.PART.preset_flag == "--mt-preset"
