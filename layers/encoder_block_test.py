"""transformer_block: the config's head size, widths and norm placement reach the Model Garden block."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from official.nlp.modeling import layers

import modeling
from layers import activations
from layers.attention import MatmulAttention
from layers.encoder_block import EncoderBlock, transformer_block
from lm.config import LmConfig


@pytest.mark.parametrize("config, norm_first", [
    (modeling.BertConfig(vocab_size=10, hidden_size=24, num_attention_heads=4, intermediate_size=40, head_size=10),
     False),
    (LmConfig(vocab_size=10, hidden_size=24, num_attention_heads=5, head_size=7, intermediate_size=40), True),
])
def test_block_takes_the_configs_shapes(config, norm_first):
    block = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), norm_first, 1e-6, "layer_0")
    out = block(tf.zeros([2, 3, 24]))
    assert out.shape == (2, 3, 24)
    shapes = {w.name.split("/", 1)[1].split(":")[0]: tuple(w.shape) for w in block.weights}
    heads, size = config.num_attention_heads, config.attention_head_size
    assert shapes["self_attention/query/kernel"] == (24, heads, size)
    assert shapes["self_attention/attention_output/kernel"] == (heads, size, 24)
    assert shapes["intermediate/kernel"] == (24, 40)
    assert block.get_config()["norm_first"] is norm_first and block.get_config()["norm_epsilon"] == 1e-6


def test_block_is_model_gardens_with_matmul_attention():
    """The same variables, names and order as Model Garden's block, the same outputs, a config round trip."""
    config = modeling.BertConfig(vocab_size=10, hidden_size=24, num_attention_heads=4, intermediate_size=40,
                                 head_size=10)
    block = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), False, 1e-12, "layer_0")
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 5, 24)).astype(np.float32))
    mask = tf.constant((rng.random((2, 5, 5)) > 0.3).astype(np.int32))
    y = block([x, mask])
    assert isinstance(block._attention_layer, MatmulAttention)  # pylint: disable=protected-access
    reference = layers.TransformerEncoderBlock(num_attention_heads=4, key_dim=10, inner_dim=40,
                                               inner_activation=block.get_config()["inner_activation"],
                                               norm_epsilon=1e-12, name="layer_0")
    reference([x, mask])
    assert [w.name for w in block.weights] == [w.name for w in reference.weights]
    for mine, theirs in zip(block.weights, reference.weights):
        theirs.assign(mine)
    np.testing.assert_allclose(y.numpy(), reference([x, mask]).numpy(), rtol=1e-5, atol=1e-5)
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(block))
    assert type(restored) is EncoderBlock
    restored([x, mask])
    assert isinstance(restored._attention_layer, MatmulAttention)  # pylint: disable=protected-access


def test_causal_attention_reaches_the_attention_layer_and_the_config():
    config = LmConfig(vocab_size=10, hidden_size=24, num_attention_heads=4, head_size=6, intermediate_size=40)
    block = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), True, 1e-6, "layer_0",
                              causal_attention=True)
    x = tf.constant(np.random.default_rng(1).standard_normal((2, 5, 24)).astype(np.float32))
    block(x)
    assert block._attention_layer.get_config()["causal"] is True  # pylint: disable=protected-access
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(block))
    restored(x)
    assert restored.get_config()["causal_attention"] is True
    assert restored._attention_layer.get_config()["causal"] is True  # pylint: disable=protected-access
    plain = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), True, 1e-6, "layer_0")
    assert "causal_attention" not in plain.get_config()  # Model Garden's own config


def test_the_blocks_activation_moves_into_its_feed_forward_projection_in_its_dtype():
    """Under mixed bfloat16: GELU in float32 when training (as Model Garden's block), fused in inference."""
    config = modeling.BertConfig(vocab_size=10, hidden_size=24, num_attention_heads=4, intermediate_size=40,
                                 hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    x = tf.constant(np.random.default_rng(2).standard_normal((2, 5, 24)).astype(np.float32))
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        block = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), False, 1e-12, "layer_0")
        reference = layers.TransformerEncoderBlock(num_attention_heads=4, key_dim=6, inner_dim=40,
                                                   inner_activation=block.get_config()["inner_activation"],
                                                   norm_epsilon=1e-12, name="layer_0")
        block(x), reference(x)
        for mine, theirs in zip(block.weights, reference.weights):
            theirs.assign(mine)
        # pylint: disable=protected-access
        dense, activation = block._intermediate_dense, block._intermediate_activation_layer
        assert dense.activation is activations.gelu and dense.activation_dtype == "float32"
        assert activation.activation is tf_keras.activations.linear
        assert reference._intermediate_activation_layer.compute_dtype == "float32"
        # pylint: enable=protected-access
        for training in (True, False):
            np.testing.assert_allclose(block(x, training=training).numpy(), reference(x, training=training).numpy(),
                                       rtol=0.05, atol=0.05)
        restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(block))  # Model Garden's config
        restored(x)
        assert restored._intermediate_dense.activation_dtype == "float32"  # pylint: disable=protected-access
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
