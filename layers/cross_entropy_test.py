"""The fused cross-entropy against NumPy and against TensorFlow's two-op form, values and gradients."""

import numpy as np
import pytest
import tensorflow as tf

from layers import cross_entropy


def _numpy_terms(logits, labels):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    return nll, -log_probs.mean(-1), np.exp(log_probs)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_values_and_gradient_match_numpy(smoothing):
    rng = np.random.RandomState(3)
    logits = rng.randn(4, 5, 11).astype(np.float64) * 3
    labels = rng.randint(0, 11, size=(4, 5)).astype(np.int32)
    upstream = rng.rand(4, 5)
    x = tf.constant(logits, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss, nll = cross_entropy.smoothed_cross_entropy(x, labels, smoothing)
        total = tf.reduce_sum(loss * tf.constant(upstream, tf.float32))
    grad = tape.gradient(total, x).numpy()
    want_nll, want_uniform, probs = _numpy_terms(logits, labels)
    np.testing.assert_allclose(nll.numpy(), want_nll, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loss.numpy(), (1 - smoothing) * want_nll + smoothing * want_uniform, rtol=1e-5,
                               atol=1e-5)
    # d/dlogits of (1 - e) nll + e uniform: p - (1 - e) onehot - e / V, times the upstream gradient.
    onehot = np.eye(11)[labels]
    want = (probs - (1 - smoothing) * onehot - smoothing / 11) * upstream[..., None]
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-6)


def test_equals_the_two_op_form_at_a_translation_batch_shape():
    rng = np.random.RandomState(0)
    logits = tf.constant(rng.randn(16, 24, 400).astype(np.float32) * 4)
    labels = tf.constant(rng.randint(0, 400, size=(16, 24)).astype(np.int32))
    weights = tf.cast(rng.rand(16, 24) < 0.7, tf.float32)

    def two_ops(x):
        nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
        uniform = -tf.reduce_mean(tf.nn.log_softmax(x), axis=-1)
        return tf.reduce_sum((0.9 * nll + 0.1 * uniform) * weights)

    def fused(x):
        return tf.reduce_sum(cross_entropy.smoothed_cross_entropy(x, labels, 0.1)[0] * weights)

    results = []
    for loss_fn in (two_ops, fused):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = loss_fn(logits)
        results.append((loss.numpy(), tape.gradient(loss, logits).numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-7)
    assert np.abs(results[1][1]).max() > 0.1  # the check compares real gradients


def test_works_under_xla_and_without_a_static_batch():
    fn = tf.function(lambda x, y: cross_entropy.cross_entropy_terms(x, y)[0], jit_compile=True,
                     input_signature=[tf.TensorSpec([None, 7], tf.float32), tf.TensorSpec([None], tf.int32)])
    x = np.arange(21, dtype=np.float32).reshape(3, 7) / 5
    y = np.array([0, 3, 6], np.int32)
    np.testing.assert_allclose(fn(x, y).numpy(), _numpy_terms(x.astype(np.float64), y)[0], rtol=1e-5)


def test_at_real_positions_gathers_rows_and_labels_in_row_major_order():
    sequence = tf.constant(np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2))
    labels = tf.constant([[5, 6, 0], [7, 0, 0]])
    logits, gathered = cross_entropy.at_real_positions(lambda x: x * 10, sequence, labels, labels)
    np.testing.assert_array_equal(logits.numpy(), [[0, 10], [20, 30], [60, 70]])
    np.testing.assert_array_equal(gathered.numpy(), [5, 6, 7])
