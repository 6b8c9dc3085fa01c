"""LayerNormalization: Keras's values in fewer passes in mixed-precision inference, Keras's own otherwise."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from layers import layer_norm
from modeling.embeddings import BertEmbeddings
from layers.encoder_block import EncoderBlock


def _pair(fewer_passes, dtype=tf.float32, width=48):
    """Ours and Keras's LayerNormalization with the same (non-trivial) gamma and beta."""
    ours = layer_norm.LayerNormalization(epsilon=1e-12, dtype=dtype, fewer_passes=fewer_passes)
    keras = tf_keras.layers.LayerNormalization(epsilon=1e-12, dtype=dtype)
    rng = np.random.default_rng(0)
    for layer in (ours, keras):
        layer.build([None, None, width])
    gamma, beta = rng.normal(1, 0.5, width), rng.normal(0, 0.5, width)
    for layer in (ours, keras):
        layer.gamma.assign(gamma)
        layer.beta.assign(beta)
    return ours, keras


def _activations(dtype=tf.float32, width=48):
    rng = np.random.default_rng(1)
    return tf.cast(rng.normal(3.0, 2.0, size=(2, 5, width)), dtype)  # mean far from 0, as residual sums are


def _op_types(layer, inputs, training):
    graph = tf.function(lambda x: layer(x, training=training)).get_concrete_function(inputs).graph
    return {op.type for op in graph.get_operations()}


@pytest.mark.parametrize("input_dtype", [tf.float32, tf.bfloat16])
def test_inference_matches_keras_against_numpy(input_dtype):
    ours, keras = _pair(fewer_passes=True)
    x = _activations(input_dtype)
    x64 = tf.cast(x, tf.float64).numpy()
    mean = x64.mean(-1, keepdims=True)
    variance = ((x64 - mean) ** 2).mean(-1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(variance + 1e-12) * ours.gamma.numpy() + ours.beta.numpy()
    got = ours(x, training=False)
    assert got.dtype == tf.float32  # a float32 layer under mixed precision computes and returns float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.numpy(), keras(x).numpy(), rtol=1e-5, atol=1e-5)


def test_inference_takes_the_fewer_passes_and_training_keeps_keras_ops():
    ours, keras = _pair(fewer_passes=True)
    x = _activations()
    inference_ops = _op_types(ours, x, training=False)
    assert "Square" in inference_ops and "SquaredDifference" not in inference_ops
    assert _op_types(ours, x, training=True) == _op_types(keras, x, training=True)
    assert "SquaredDifference" in _op_types(ours, x, training=True)  # tf.nn.moments
    np.testing.assert_array_equal(ours(x, training=True).numpy(), keras(x, training=True).numpy())


def test_without_fewer_passes_it_is_keras_in_inference_too():
    ours, keras = _pair(fewer_passes=False)
    x = _activations()
    assert _op_types(ours, x, training=False) == _op_types(keras, x, training=False)
    np.testing.assert_array_equal(ours(x, training=False).numpy(), keras(x, training=False).numpy())


def test_other_axes_and_no_scale_or_center():
    x = _activations()
    for kwargs in (dict(axis=1), dict(center=False), dict(scale=False)):
        ours = layer_norm.LayerNormalization(epsilon=1e-3, fewer_passes=True, **kwargs)
        keras = tf_keras.layers.LayerNormalization(epsilon=1e-3, **kwargs)
        np.testing.assert_allclose(ours(x, training=False).numpy(), keras(x).numpy(), rtol=1e-5, atol=1e-5)


def test_config_round_trip():
    ours = layer_norm.LayerNormalization(epsilon=1e-12, fewer_passes=True, name="norm")
    config = ours.get_config()
    assert config["fewer_passes"] is True
    restored = layer_norm.LayerNormalization.from_config(config)
    assert restored.fewer_passes and restored.epsilon == 1e-12 and restored.name == "norm"
    plain = layer_norm.LayerNormalization(epsilon=1e-12, name="norm")
    assert plain.get_config() == tf_keras.layers.LayerNormalization(epsilon=1e-12, name="norm").get_config()
    assert tf_keras.layers.deserialize(tf_keras.layers.serialize(ours)).fewer_passes


def test_replacing_layer_norm():
    keras = tf_keras.layers.LayerNormalization(epsilon=1e-6, dtype=tf.float32, name="output_layer_norm")
    replaced = layer_norm.replacing_layer_norm(keras, fewer_passes=True)
    assert isinstance(replaced, layer_norm.LayerNormalization) and replaced.fewer_passes
    assert replaced.name == "output_layer_norm" and replaced.epsilon == 1e-6 and replaced.dtype == "float32"
    keras.build([None, 4])
    assert layer_norm.replacing_layer_norm(keras, fewer_passes=True) is keras  # built: it has variables


@pytest.mark.parametrize("policy, fewer_passes", [("float32", False), ("mixed_bfloat16", True)])
def test_blocks_and_embeddings_take_fewer_passes_under_mixed_precision_only(policy, fewer_passes):
    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(policy)
    try:
        block = EncoderBlock(num_attention_heads=2, inner_dim=16, inner_activation="gelu", key_dim=4)
        block(tf.zeros([1, 3, 8]))
        embeddings = BertEmbeddings(vocab_size=10, type_vocab_size=2, hidden_size=8,
                                    max_position_embeddings=4, dropout_rate=0.0,
                                    initializer=tf_keras.initializers.TruncatedNormal(stddev=0.02))
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
    norms = [block._attention_layer_norm, block._output_layer_norm, embeddings.layer_norm]  # pylint: disable=protected-access
    assert all(type(norm) is layer_norm.LayerNormalization for norm in norms)  # pylint: disable=unidiomatic-typecheck
    assert [norm.fewer_passes for norm in norms] == [fewer_passes] * 3
    assert [w.name.split("/")[-1] for w in block._output_layer_norm.weights] == ["gamma:0", "beta:0"]  # pylint: disable=protected-access
