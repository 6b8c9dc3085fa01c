"""--head_size applied to any family's config, and the length check of families with learned positions."""

import pytest

from lm.config import LmConfig
from nmt.config import NmtConfig
from training import model_options
from training.model_options import HeadSizeOptions


class _Run(HeadSizeOptions):
    max_seq_length: int = 64


@pytest.mark.parametrize("config", [LmConfig(hidden_size=64, num_attention_heads=4, head_size=None),
                                    NmtConfig(hidden_size=64, num_attention_heads=4)])
def test_head_size_overrides_every_family_s_config(config):
    assert model_options.with_head_size(config, _Run()) is config
    changed = model_options.with_head_size(config, _Run(head_size=48))
    assert (changed.head_size, changed.hidden_size, changed.num_attention_heads) == (48, 64, 4)


def test_a_length_beyond_the_learned_positions_is_refused_with_the_family_s_message():
    config = LmConfig(max_position_embeddings=32)
    with pytest.raises(ValueError, match=r"^--max_seq_length=64 exceeds 32\.$"):
        model_options.with_head_size(config, _Run(), "--max_seq_length=%d exceeds %d.")
    assert model_options.with_head_size(config, _Run()) is config  # no message: a family without the check


def test_head_size_must_be_positive():
    with pytest.raises(ValueError, match=r"^--head_size=0 must be positive\.$"):
        _Run(head_size=0).validate()
