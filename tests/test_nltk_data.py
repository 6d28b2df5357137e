"""preprocess.tagging finds NLTK's tagger data without NLTK_DATA (the venv's nltk_data, then
../shared/data/nltk_data next to the repository), or says in one line how to get it."""
from __future__ import annotations

import os
import sys

import pytest

from preprocess import tagging as taggers
from preprocess.common import REPO


def _clean(monkeypatch, tmp_path):
    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(taggers, "_SHARED_NLTK_DATA", str(tmp_path / "shared" / "data" / "nltk_data"))
    taggers._nltk_perceptron.cache_clear()


def test_search_order():
    assert taggers._SHARED_NLTK_DATA == str(REPO.parent / "shared" / "data" / "nltk_data")
    dirs = taggers._nltk_data_dirs()
    assert dirs.index(os.path.join(sys.prefix, "nltk_data")) < dirs.index(taggers._SHARED_NLTK_DATA)
    assert dirs.index(taggers._SHARED_NLTK_DATA) < dirs.index("/usr/share/nltk_data")


@pytest.mark.parametrize("where", ["venv", "shared"])
def test_found_in_the_venv_or_the_shared_folder(where, monkeypatch, tmp_path, shared_path):
    data = shared_path("nltk_data")
    _clean(monkeypatch, tmp_path)
    target = tmp_path / "venv" / "nltk_data" if where == "venv" else tmp_path / "shared" / "data" / "nltk_data"
    target.parent.mkdir(parents=True)
    target.symlink_to(data, target_is_directory=True)
    _weights, tagdict, classes = taggers._load_perceptron()
    assert len(classes) > 40 and tagdict["the"] == "DT"


def test_missing_data_is_one_line_saying_how_to_get_it(monkeypatch, tmp_path):
    pytest.importorskip("nltk")
    # imported with this process's NLTK_DATA (NLTK reads it only then), before _clean removes it
    import nltk.data
    _clean(monkeypatch, tmp_path)
    if any(os.path.isdir(os.path.join(d, "taggers")) for d in taggers._nltk_data_dirs()):
        pytest.skip("this machine has NLTK tagger data in one of NLTK's default folders")
    monkeypatch.setattr(nltk.data, "path", [d for d in nltk.data.path if not os.path.isdir(os.path.join(d, "taggers"))])
    with pytest.raises(taggers.TaggerUnavailable) as err:
        taggers._load_perceptron()
    msg = str(err.value)
    assert "\n" not in msg and "nltk.downloader" in msg and "averaged_perceptron_tagger_eng" in msg
