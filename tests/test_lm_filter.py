"""The space-as-token paper's fairness filter (appendix A.1) with its published space-keeping models."""
import pytest

from preprocess.common import UserError
from preprocess.schemes.spaces import SpacesEncoder
from train_scripts.lm_filter import filter_lines, main


def test_filter_by_length_under_every_model(shared_path, tmp_path):
    models = [str(shared_path("space_models/unigram_prime.model")), str(shared_path("space_models/bpe_prime.model"))]
    lines = ["A short sentence.", "word " * 300, "", "Another one, with commas, here."]
    lengths = [[len(SpacesEncoder(m, "keep").encode(x).split()) for m in models] for x in lines]
    limit = max(max(lens) for k, lens in enumerate(lengths) if k != 1)  # every line but the long one fits
    assert min(lengths[1]) > limit
    assert [keep for _, keep in filter_lines(lines, models, limit)] == [True, False, True, True]
    # a line just over the limit under one model only is removed
    tight = max(lengths[3]) - 1
    assert [keep for _, keep in filter_lines(lines, models, tight)][3] is False
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(x + "\n" for x in lines))
    assert main(["--input", str(src), "--output", str(out), "--max-tokens", str(limit),
                 *[a for m in models for a in ("--model", m)]]) == 0
    assert out.read_text().splitlines() == [lines[0], lines[2], lines[3]]
    with pytest.raises(UserError):
        list(filter_lines(lines, models, 0))
