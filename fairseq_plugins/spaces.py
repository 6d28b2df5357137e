"""``--bpe spaces``: SentencePiece with space-as-token models (BPE', Unigram') and the "no spaces" variant, and
fairseq's RoBERTa hub adjusted for them (see :func:`patch_roberta_hub`)."""
import functools

from fairseq.data.encoders import register_bpe
from fairseq.dataclass import FairseqDataclass

from fairseq_plugins._errors import required_path, user_errors
from preprocess.models.spm_model import SPACE_SYMBOL
from preprocess.options import fairseq_config
from preprocess.schemes.spaces import SpacesEncoder, SpacesOptions

#: the adapter's options: the encoder's one declaration (preprocess.schemes.spaces.SpacesOptions), --spaces-model required
SpacesBPEConfig = fairseq_config(SpacesOptions, "SpacesBPEConfig", FairseqDataclass, required=("spaces_model",))


@register_bpe("spaces", dataclass=SpacesBPEConfig)
class SpacesBPE:
    def __init__(self, cfg):
        with user_errors("--bpe spaces"):
            self.encoder = SpacesEncoder(required_path(cfg, "spaces_model"), cfg.spaces)

    def encode(self, x: str) -> str:
        return self.encoder.encode(x)

    def decode(self, x: str) -> str:
        return self.encoder.decode(x)

    def is_beginning_of_word(self, x: str) -> bool:
        # a word starts after a standalone ▁ (prime) or with a ▁-prefixed piece (default models)
        return x.startswith(SPACE_SYMBOL)

    @property
    def standalone_spaces(self) -> bool:
        """Whether the model writes spaces as tokens of their own (BPE', Unigram'), not as ``▁``-prefixed pieces."""
        return SPACE_SYMBOL in self.encoder.sp.encode("a b", out_type=str)


# --- fairseq's RoBERTa hub with space-as-token models ------------------------------------------------------------
#
# ``RobertaModel.from_pretrained(..., bpe="spaces")`` builds fairseq's RobertaHubInterface, written for pieces that
# carry their space (``▁word``).  Two things would go wrong with this project's models, so the hub is adjusted when
# this plugin is loaded (every other ``--bpe`` keeps fairseq's behaviour):
# - a "no spaces" model (pretrained with ``masked_lm_words --drop-space-tokens``) never saw a ``▁`` token: when the
#   checkpoint's task drops them, the hub encodes with ``--spaces drop`` too (``encode``, ``fill_mask``, ...);
# - ``fill_mask`` strips the whitespace around ``<mask>`` before encoding, so with standalone spaces the mask was
#   glued to its neighbours (``The <mask> is`` instead of ``The ▁ <mask> ▁ is``) and the model mostly predicted a
#   space; here the ``▁`` on either side is kept (unless dropped) and the predicted piece replaces ``<mask>``.

def _task_drops_spaces(task) -> bool:
    cfg = getattr(task, "cfg", None)
    if cfg is None:
        return False
    value = cfg.get("drop_space_tokens", False) if hasattr(cfg, "get") else getattr(cfg, "drop_space_tokens", False)
    return bool(value)


def fill_mask_spaces(hub, masked_input: str, topk: int = 5) -> list[tuple[str, float, str]]:
    """fairseq's ``fill_mask`` for a model with standalone space tokens: ``[(filled text, probability, piece
    text), ...]``, most probable first."""
    import torch
    from fairseq import utils

    mask = "<mask>"
    if masked_input.count(mask) != 1:
        raise ValueError(f"give exactly one {mask} in the input, e.g. 'He is a {mask} guy'")
    left, right = masked_input.split(mask)
    encoder = hub.bpe.encoder
    before, after = encoder.encode_pieces(left), encoder.encode_pieces(right)
    if not encoder.drop:
        before += [SPACE_SYMBOL] if before and left[-1:].isspace() else []
        after = ([SPACE_SYMBOL] if after and right[:1].isspace() else []) + after
    dictionary = hub.task.source_dictionary
    tokens = dictionary.encode_line(" ".join(["<s>", *before, mask, *after, "</s>"]), append_eos=False,
                                    add_if_not_exist=False).long()
    at = (tokens == hub.task.mask_idx).nonzero(as_tuple=False).item()
    with utils.model_eval(hub.model), torch.no_grad():
        logits = hub.model(tokens.unsqueeze(0).to(device=hub.device), features_only=False,
                           return_all_hiddens=False)[0]
    values, indices = logits[0, at].softmax(dim=-1).topk(k=topk)
    filled = []
    for value, index in zip(values.tolist(), indices.tolist()):
        piece = dictionary[index]
        text = " " if piece == SPACE_SYMBOL else encoder.sp.decode_pieces([piece])
        filled.append((left + text + right, value, text))
    return filled


def patch_roberta_hub() -> bool:
    """Adjust fairseq's RobertaHubInterface for ``--bpe spaces`` (see above); idempotent.  False without fairseq's
    RoBERTa."""
    try:
        from fairseq.models.roberta.hub_interface import RobertaHubInterface
    except ImportError:
        return False
    if getattr(RobertaHubInterface, "_morphtok_spaces", False):
        return True
    init, fill_mask = RobertaHubInterface.__init__, RobertaHubInterface.fill_mask

    @functools.wraps(init)
    def __init__(self, cfg, task, model):
        init(self, cfg, task, model)
        if isinstance(self.bpe, SpacesBPE) and not self.bpe.encoder.drop and _task_drops_spaces(task):
            self.bpe.encoder = SpacesEncoder(self.bpe.encoder.model_path, "drop")

    @functools.wraps(fill_mask)
    def fill_mask_any(self, masked_input: str, topk: int = 5):
        if isinstance(self.bpe, SpacesBPE) and self.bpe.standalone_spaces:
            return fill_mask_spaces(self, masked_input, topk)
        return fill_mask(self, masked_input, topk)

    RobertaHubInterface.__init__, RobertaHubInterface.fill_mask = __init__, fill_mask_any
    RobertaHubInterface._morphtok_spaces = True
    return True


patch_roberta_hub()
