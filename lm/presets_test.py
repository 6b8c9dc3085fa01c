"""--preset: the paper's values fill only the flags not given."""

import pytest

from lm import presets as lm_presets
from lm.config import LmConfig
from lm.task import LmOptions
from training.presets import apply_preset


def _options(**values):
    return LmOptions(output_dir="out", do_train=True, train_file="train.txt", **values)


def test_preset_fills_only_the_flags_not_given():
    options = _options(preset="lm1b_paper", train_batch_size=8, max_seq_length=16)
    applied = apply_preset(options, lm_presets.PRESETS, given={"train_batch_size", "max_seq_length"})
    assert applied.train_batch_size == 8 and applied.max_seq_length == 16
    assert (applied.num_train_steps, applied.num_warmup_steps, applied.learning_rate,
            applied.learning_rate_schedule, applied.vocab_size) == (250000, 10000, 0.1, "rsqrt", 32000)


def test_a_library_callers_given_flags_are_those_off_their_defaults():
    applied = apply_preset(_options(preset="lm1b_paper", num_train_steps=7), lm_presets.PRESETS)
    assert applied.num_train_steps == 7 and applied.train_batch_size == 128 and applied.max_seq_length == 256


def test_no_preset_changes_nothing_and_the_default_model_is_the_papers():
    options = _options()
    assert apply_preset(options, lm_presets.PRESETS) is options
    assert LmConfig() == LmConfig(hidden_size=256, num_hidden_layers=6, num_attention_heads=8, head_size=32,
                                  intermediate_size=1024, max_position_embeddings=256, hidden_act="relu",
                                  hidden_dropout_prob=0.1, tie_embeddings=True)


def test_unknown_preset_is_named():
    with pytest.raises(ValueError, match="--preset=lm1b_large is not known; expected one of lm1b_paper"):
        apply_preset(_options(preset="lm1b_large"), lm_presets.PRESETS)
