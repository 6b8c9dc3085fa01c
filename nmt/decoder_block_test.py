"""DecoderBlock: any head size, a cache that grows a step at a time, get_config round trip."""

import numpy as np
import tensorflow as tf

from nmt.decoder_block import DecoderBlock


def _inputs(target_length, rng):
    target = rng.standard_normal((2, target_length, 10)).astype(np.float32)
    memory = rng.standard_normal((2, 5, 10)).astype(np.float32)
    cross = np.ones((2, target_length, 5), np.int32)
    cross[1, :, 3:] = 0
    return target, memory, cross


def test_head_size_is_independent_of_width_and_heads():
    block = DecoderBlock(num_attention_heads=3, head_size=7, intermediate_size=16)  # 10 % 3 != 0
    target, memory, cross = _inputs(4, np.random.default_rng(0))
    causal = np.tril(np.ones((4, 4), np.int32))[None].repeat(2, 0)
    output, cache = block([target, memory, cross, causal])
    assert output.shape == (2, 4, 10) and cache is None
    assert block.self_attention._query_dense.kernel.shape == (10, 3, 7)  # pylint: disable=protected-access
    assert block.cross_attention._output_dense.kernel.shape == (3, 7, 10)  # pylint: disable=protected-access


def test_cached_steps_equal_the_full_causal_pass_and_the_cache_grows():
    block = DecoderBlock(num_attention_heads=2, head_size=6, intermediate_size=16, norm_first=True)
    target, memory, cross = _inputs(3, np.random.default_rng(1))
    causal = np.tril(np.ones((3, 3), np.int32))[None].repeat(2, 0)
    full, _ = block([target, memory, cross, causal])
    cache = {"key": tf.zeros([2, 0, 2, 6]), "value": tf.zeros([2, 0, 2, 6])}
    for step in range(3):
        output, cache = block([target[:, step:step + 1], memory, cross[:, :1], np.ones((2, 1, step + 1), np.int32)],
                              cache=cache)
        np.testing.assert_allclose(output[:, 0], full[:, step], rtol=1e-5, atol=1e-5)
        assert cache["key"].shape == (2, step + 1, 2, 6)


def test_get_config_round_trip():
    block = DecoderBlock(num_attention_heads=4, head_size=5, intermediate_size=12, activation="gelu", dropout=0.1,
                         attention_dropout=0.2, norm_first=True, norm_epsilon=1e-5, name="decoder_layer_0")
    again = DecoderBlock.from_config(block.get_config())
    assert again.get_config() == block.get_config()
