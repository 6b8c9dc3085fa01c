"""MatmulAttention: Keras's MultiHeadAttention with the per-head products as tf.matmul."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from layers.attention import MatmulAttention
from layers.uint16_dropout import Uint16Dropout, keep_scale


def _numpy_attention(layer, query_input, value_input, mask):
    """Independent forward: project, scale by 1/sqrt(key_dim), masked softmax, combine, project back."""
    weights = {w.name.split("/", 1)[1].split(":")[0]: w.numpy().astype(np.float64) for w in layer.weights}

    def project(x, name):  # [b, t, d] x [d, n, k] -> [b, t, n, k]
        return np.einsum("btd,dnk->btnk", x, weights[name + "/kernel"]) + weights[name + "/bias"]

    q = project(query_input, "query") / np.sqrt(layer._key_dim)  # pylint: disable=protected-access
    k = project(value_input, "key")
    v = project(value_input, "value")
    logits = np.einsum("bqnk,bsnk->bnqs", q, k)
    logits = np.where(mask[:, None, :, :], logits, -1e9)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    context = np.einsum("bnqs,bsnk->bqnk", probabilities, v)
    output = np.einsum("bqnk,nkd->bqd", context, weights["attention_output/kernel"]) + weights["attention_output/bias"]
    return output, probabilities


@pytest.mark.parametrize("heads, key_dim, width", [(4, 6, 24), (3, 10, 8)])  # d_p = d/h, and d_p != d/h
def test_matches_an_independent_numpy_forward(heads, key_dim, width):
    rng = np.random.default_rng(1)
    query_input = rng.standard_normal((2, 5, width)).astype(np.float32)
    value_input = rng.standard_normal((2, 7, width)).astype(np.float32)
    mask = rng.random((2, 5, 7)) > 0.3
    mask[:, :, 0] = True  # every query attends somewhere
    layer = MatmulAttention(num_heads=heads, key_dim=key_dim, name="self_attention",
                            bias_initializer="random_normal")
    output, probabilities = layer(query_input, value_input, attention_mask=mask, return_attention_scores=True)
    expected_output, expected_probabilities = _numpy_attention(layer, query_input, value_input, mask)
    assert output.shape == (2, 5, width) and probabilities.shape == (2, heads, 5, 7)
    np.testing.assert_allclose(probabilities.numpy(), expected_probabilities, atol=1e-6)
    np.testing.assert_allclose(output.numpy(), expected_output, rtol=1e-5, atol=1e-5)


def _twin_keras_layer(layer, inputs):
    config = layer.get_config()
    config.pop("causal", None)  # The twin gets the causal mask as its attention_mask instead.
    twin = tf_keras.layers.MultiHeadAttention.from_config(config)
    twin(*inputs)
    for mine, theirs in zip(layer.weights, twin.weights):
        assert mine.name == theirs.name
        theirs.assign(mine)
    return twin


def test_values_and_gradients_match_keras_multi_head_attention():
    rng = np.random.default_rng(2)
    x = tf.constant(rng.standard_normal((3, 6, 16)).astype(np.float32))
    layer = MatmulAttention(num_heads=2, key_dim=5, bias_initializer="random_normal")
    layer(x, x)
    twin = _twin_keras_layer(layer, (x, x))
    mask = tf.constant(np.tril(np.ones((6, 6), bool))[None].repeat(3, 0))
    results = []
    for attention in (layer, twin):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = attention(x, x, attention_mask=mask)
            loss = tf.reduce_sum(y * y)
        results.append([y] + tape.gradient(loss, [x] + attention.trainable_weights))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


def test_other_attention_axes_keep_keras_einsum():
    """Rank-4 inputs attending over axis 2 are outside the rewritten case: Keras's result."""
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((2, 3, 4, 8)).astype(np.float32))
    layer = MatmulAttention(num_heads=2, key_dim=4, attention_axes=(2,))
    y = layer(x, x)
    twin = _twin_keras_layer(layer, (x, x))
    np.testing.assert_allclose(y.numpy(), twin(x, x).numpy(), rtol=1e-6, atol=1e-6)


def test_dropout_applies_only_in_training():
    x = tf.constant(np.random.default_rng(4).standard_normal((2, 8, 12)).astype(np.float32))
    layer = MatmulAttention(num_heads=3, key_dim=4, dropout=0.5)
    inference = layer(x, x, training=False)
    np.testing.assert_array_equal(inference.numpy(), layer(x, x, training=False).numpy())
    _, probabilities = layer(x, x, training=True, return_attention_scores=True)
    # The returned probabilities are before dropout: rows still sum to one.
    np.testing.assert_allclose(probabilities.numpy().sum(-1), 1.0, rtol=1e-5)
    assert not np.allclose(layer(x, x, training=True).numpy(), inference.numpy())


class _FixedMaskDropout(tf_keras.layers.Layer):
    """Plain dropout with a given keep mask: where(keep, x / keep probability, 0)."""

    def __init__(self, keep, rate):
        super().__init__()
        self.keep, self.rate = keep, rate

    def call(self, inputs, training=None):
        return tf.where(self.keep, inputs * keep_scale(self.rate), 0.0)


@pytest.mark.parametrize("function", [False, True])
@pytest.mark.parametrize("keys", [7, 9])  # self-attention; cross-attention over a longer memory
def test_fused_softmax_dropout_matches_keras_with_the_same_mask(function, keys):
    """Values and gradients (inputs and every weight) of the training path against Keras's softmax + dropout."""
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((2, 7, 12)).astype(np.float32))
    memory = tf.constant(rng.standard_normal((2, keys, 12)).astype(np.float32))
    layer = MatmulAttention(num_heads=3, key_dim=5, dropout=0.3, bias_initializer="random_normal")
    layer(x, memory)
    twin = _twin_keras_layer(layer, (x, memory))
    assert isinstance(layer._dropout_layer, Uint16Dropout)  # pylint: disable=protected-access
    keep = tf.constant(rng.random((2, 3, 7, keys)) > 0.3)
    layer._dropout_layer.keep_mask = lambda shape: keep  # pylint: disable=protected-access
    twin._dropout_layer = _FixedMaskDropout(keep, 0.3)  # pylint: disable=protected-access
    mask = tf.constant(np.tril(np.ones((7, keys), bool))[None].repeat(2, 0))
    upstream = tf.constant(rng.standard_normal((2, 7, 12)).astype(np.float32))

    def values_and_gradients(attention):
        with tf.GradientTape() as tape:
            tape.watch([x, memory])
            y, probabilities = attention(x, memory, attention_mask=mask, training=True,
                                         return_attention_scores=True)
            loss = tf.reduce_sum(y * upstream)
        return [y, probabilities] + tape.gradient(loss, [x, memory] + attention.trainable_weights)

    if function:
        values_and_gradients = tf.function(values_and_gradients)
    mine, theirs = values_and_gradients(layer), values_and_gradients(twin)
    assert not np.allclose(mine[0].numpy(), layer(x, memory, attention_mask=mask, training=False).numpy())
    for ours, keras in zip(mine, theirs):
        np.testing.assert_allclose(ours.numpy(), keras.numpy(), rtol=2e-5, atol=2e-6)


def test_gradient_through_the_returned_probabilities():
    """A loss on the returned (pre-dropout) probabilities still reaches the query weights."""
    x = tf.constant(np.random.default_rng(6).standard_normal((2, 5, 8)).astype(np.float32))
    layer = MatmulAttention(num_heads=2, key_dim=4, dropout=0.5)
    layer(x, x)
    twin = _twin_keras_layer(layer, (x, x))
    gradients = []
    for attention in (layer, twin):
        with tf.GradientTape() as tape:
            _, probabilities = attention(x, x, training=True, return_attention_scores=True)
            loss = tf.reduce_sum(probabilities[..., 0] ** 2)
        gradients.append(tape.gradient(loss, attention.trainable_weights[0]))  # query/kernel
    np.testing.assert_allclose(gradients[0].numpy(), gradients[1].numpy(), rtol=1e-5, atol=1e-7)
    assert np.abs(gradients[0].numpy()).max() > 0


def test_get_config_round_trip():
    layer = MatmulAttention(num_heads=3, key_dim=7, value_dim=5, dropout=0.1, name="self_attention")
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(layer))
    assert type(restored) is MatmulAttention
    assert restored.get_config() == layer.get_config()


def _causal_inputs(rng, length=7):
    """x [2, length, 12]; a padding mask; the causal mask combined with it (what Keras is given)."""
    x = tf.constant(rng.standard_normal((2, length, 12)).astype(np.float32))
    padding = rng.random((2, 1, length)) > 0.2
    padding[:, :, 0] = True  # every query can attend its first key
    combined = np.tril(np.ones((length, length), bool))[None] & padding
    return x, tf.constant(np.broadcast_to(padding, (2, length, length))), tf.constant(combined)


@pytest.mark.parametrize("function", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_causal_blocks_match_keras_under_the_causal_mask(monkeypatch, function, training):
    """causal=True with 3 query blocks (rows 0-1, 2-3, 4-6): values, probabilities and gradients
    against Keras's MultiHeadAttention given the causal mask; in training with the same keep masks."""
    monkeypatch.setattr(MatmulAttention, "CAUSAL_BLOCK_ROWS", 2)
    rng = np.random.default_rng(7)
    x, padding, combined = _causal_inputs(rng)
    layer = MatmulAttention(num_heads=3, key_dim=5, dropout=0.3, causal=True, bias_initializer="random_normal")
    layer(x, x)
    assert layer._query_blocks(7, 7) == [(0, 2), (2, 4), (4, 7)]  # pylint: disable=protected-access
    twin = _twin_keras_layer(layer, (x, x))
    keep = rng.random((2, 3, 7, 7)) > 0.3
    blocks = iter(layer._query_blocks(7, 7) * 2)  # pylint: disable=protected-access

    def block_keep(shape):  # The blocks draw in order: hand each its part of the one mask.
        start, end = next(blocks)
        assert shape.shape == (4,)
        return tf.constant(keep[:, :, start:end, :end])

    layer._dropout_layer.keep_mask = block_keep  # pylint: disable=protected-access
    if training:  # _FixedMaskDropout drops whatever `training` says.
        twin._dropout_layer = _FixedMaskDropout(tf.constant(keep), 0.3)  # pylint: disable=protected-access
    upstream = tf.constant(rng.standard_normal((2, 7, 12)).astype(np.float32))

    def values_and_gradients(attention, mask):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y, probabilities = attention(x, x, attention_mask=mask, training=training, return_attention_scores=True)
            loss = tf.reduce_sum(y * upstream)
        return [y, probabilities] + tape.gradient(loss, [x] + attention.trainable_weights)

    if function:
        values_and_gradients = tf.function(values_and_gradients)
    mine, theirs = values_and_gradients(layer, padding), values_and_gradients(twin, combined)
    for ours, keras in zip(mine, theirs):
        np.testing.assert_allclose(ours.numpy(), keras.numpy(), rtol=2e-5, atol=2e-6)


def test_causal_attention_does_not_see_later_positions(monkeypatch):
    """With no mask given, changing position 5 leaves the outputs at 0..4 as they were."""
    monkeypatch.setattr(MatmulAttention, "CAUSAL_BLOCK_ROWS", 3)
    x = np.random.default_rng(8).standard_normal((2, 8, 12)).astype(np.float32)
    layer = MatmulAttention(num_heads=2, key_dim=4, causal=True)
    changed = x.copy()
    changed[:, 5] += 1.0
    before, after = layer(x, x).numpy(), layer(changed, changed).numpy()
    np.testing.assert_array_equal(before[:, :5], after[:, :5])
    assert not np.allclose(before[:, 5:], after[:, 5:])


def test_query_blocks():
    layer = MatmulAttention(num_heads=2, key_dim=4, causal=True)
    assert MatmulAttention.CAUSAL_BLOCK_ROWS == 128
    assert layer._query_blocks(256, 256) == [(0, 128), (128, 256)]  # pylint: disable=protected-access
    assert layer._query_blocks(300, 300) == [(0, 150), (150, 300)]  # pylint: disable=protected-access
    assert layer._query_blocks(200, 200) == [(0, 200)]  # pylint: disable=protected-access
    assert layer._query_blocks(None, None) == [(0, None)]  # pylint: disable=protected-access
    assert layer._query_blocks(256, 300) == [(0, 256)]  # pylint: disable=protected-access
    plain = MatmulAttention(num_heads=2, key_dim=4)
    assert plain._query_blocks(256, 256) == [(0, 256)]  # pylint: disable=protected-access


def test_causal_config_round_trip_and_other_axes_rejected():
    layer = MatmulAttention(num_heads=3, key_dim=7, causal=True)
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(layer))
    assert restored.get_config() == layer.get_config() and restored.get_config()["causal"] is True
    assert "causal" not in MatmulAttention(num_heads=3, key_dim=7).get_config()  # Keras's own config
    x = tf.zeros([2, 3, 4, 8])
    with pytest.raises(ValueError, match=r"causal=True\) attends over the length axis"):
        MatmulAttention(num_heads=2, key_dim=4, attention_axes=(2,), causal=True)(x, x)
