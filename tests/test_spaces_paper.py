"""The paper's own examples (Gow-Smith et al. 2022, Table 3 and section 5) against its published models."""
import pytest

from preprocess.schemes.spaces import SpacesEncoder

# Table 3, transcribed from the paper; the paper writes "_" for "▁".
TABLE3 = """
directional | _direction, al | direction, al | _direction, al | direction, al
unidirectional | _un, id, ire, ction, al | un, id, ire, ction, al | _un, i, direct, ional | uni, direction, al
electroneutral | _elect, r, one, ut, ral | electr, one, utr, al | _electron, eu, tral | electro, neutral
neurotransmitter | _neuro, trans, mit, ter | neuro, transmitter | _neuro, trans, mitt, er | neuro, transmitter
responsiveness | _respons, iveness | respons, iveness | _re, s, pon, s, ive, ness | r, e, sp, on, s, ive, ness
hyporesponsiveness | _hyp, ores, p, ons, iveness | hypo, respons, iveness | _hypo, res, pon, s, ive, ness | hypo, r, e, sp, on, s, ive, ness
hyperresponsiveness | _hyper, resp, ons, iveness | hyper, respons, iveness | _hyper, res, pon, s, ive, ness | hyper, r, e, sp, on, s, ive, ness
saturated | _sat, urated | sat, urated | _sat, ur, ated | saturated
unsaturated | _uns, atur, ated | un, sat, urated | _un, sa, tur, ated | un, saturated
equal | _equal | equal | _equal | equal
unequal | _un, equ, al | une, qual | _un, e, qual | un, equal
multiplayer | _multip, layer | multi, player | _multi, play, er | multi, player
nonmultiplayer | _non, m, ult, ip, layer | non, multi, player | _non, mul, ti, play, er | non, multi, player
overpriced | _over, p, ric, ed | over, pr, iced | _over, p, ric, ed | over, price, d
accessible | _accessible | accessible | _accessible | accessible
unaccessible | _un, ac, cess, ible | un, accessible | _un, ac, ces, s, ible | un, accessible
unicycle | _un, icy, cle | un, icy, cle | _un, i, cycle | uni, cycle
"""
MODELS = ["bpe_default", "bpe_prime", "unigram_default", "unigram_prime"]


def _rows():
    for line in TABLE3.strip().splitlines():
        word, *cells = [c.strip() for c in line.split("|")]
        for model, cell in zip(MODELS, cells):
            yield word, model, [p.strip().replace("_", "\u2581") for p in cell.split(",")]


def test_table3_has_all_17_words():
    assert len({w for w, _, _ in _rows()}) == 17


@pytest.mark.parametrize("word,model,expected", list(_rows()), ids=lambda v: v if isinstance(v, str) else None)
def test_table3(shared_path, word, model, expected):
    enc = SpacesEncoder(str(shared_path(f"space_models/{model}.model")), "keep")
    assert enc.encode_pieces(word) == expected


SENTENCE = "This is an input sentence."


@pytest.mark.parametrize("model,spaces,expected", [
    ("unigram_default", "keep", "_This _is _an _input _sentence ."),
    ("unigram_prime", "keep", "This _ is _ an _ input _ sentence ."),
    ("unigram_prime", "drop", "This is an input sentence ."),
])
def test_section5_sentence(shared_path, model, spaces, expected):
    enc = SpacesEncoder(str(shared_path(f"space_models/{model}.model")), spaces)
    assert enc.encode(SENTENCE) == expected.replace("_", "\u2581")
