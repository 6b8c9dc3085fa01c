"""Cross-entropy over a vocabulary, label smoothing included, in fewer passes over [..., vocab].

    nll     = -log p(target)                 = lse(logits) - logits[target]
    uniform = -mean_v log p(v)               = lse(logits) - mean_v logits[v]
    d loss / d logits = p * (g_nll + g_uniform) - g_uniform / V - g_nll * onehot(target)

A label-smoothed loss, (1 - e) nll + e uniform (the translation models'),
written with `tf.nn.sparse_softmax_cross_entropy_with_logits` for the nll and
`tf.nn.log_softmax` for the uniform term, makes two softmaxes and two
gradients over the logits, the largest tensors of a small model's step
([batch, length, vocab]: 128 x 24 x 4000 floats in the small translation
runs). `cross_entropy_terms` makes one log-softmax forward and one gradient
pass with the target's term subtracted sparsely; the values are those of the
two-op form up to rounding (tested).
`at_real_positions` feeds a loss the output layer's logits at the real
(non-padding) positions only: the vocabulary product and the loss over
[positions, vocab] are the largest part of a small model's step, and half of
the language model's positions (a third of translation's targets) are padding.

Measurements: docs/performance.md#why-the-losses.
"""

import tensorflow as tf


@tf.custom_gradient
def _terms(logits, labels):
    log_probs = tf.nn.log_softmax(logits)
    nll = -tf.gather(log_probs, labels, batch_dims=labels.shape.rank)
    uniform = -tf.reduce_mean(log_probs, axis=-1)

    def grad(d_nll, d_uniform):
        vocab = tf.cast(tf.shape(logits)[-1], logits.dtype)
        d = tf.exp(log_probs) * tf.expand_dims(d_nll + d_uniform, -1) - tf.expand_dims(d_uniform / vocab, -1)
        # The target's -d_nll, one element per position instead of a dense one-hot pass.
        flat = tf.reshape(d, [-1, tf.shape(d)[-1]])
        rows = tf.range(tf.shape(flat)[0])
        indices = tf.stack([rows, tf.reshape(labels, [-1])], axis=1)
        flat = tf.tensor_scatter_nd_sub(flat, indices, tf.reshape(d_nll, [-1]))
        return tf.reshape(flat, tf.shape(logits)), None

    return (nll, uniform), grad


def cross_entropy_terms(logits, labels):
    """(nll, uniform): -log p(label) and -mean_v log p(v) per position, each float32 [...].

    Args:
      logits: float32 [..., vocab].
      labels: int32 [...], each in [0, vocab).
    """
    labels = tf.convert_to_tensor(labels, tf.int32)
    return _terms(tf.convert_to_tensor(logits, tf.float32), labels)


def smoothed_cross_entropy(logits, labels, label_smoothing=0.0):
    """(loss, nll) per position: loss = (1 - e) nll + e uniform (e = label_smoothing), nll = -log p(label)."""
    nll, uniform = cross_entropy_terms(logits, labels)
    if not label_smoothing:
        return nll, nll
    return (1.0 - label_smoothing) * nll + label_smoothing * uniform, nll


def at_real_positions(output_logits, sequence_output, labels, mask):
    """(logits float32 [n, vocab], labels [n]) at the n positions where `mask` is non-zero, in row-major order.

    Args:
      output_logits: the model's output layer, [n, d] -> [n, vocab].
      sequence_output: [batch, T, d], the output layer's input.
      labels: int [batch, T].
      mask: [batch, T], non-zero at the real positions.
    """
    indices = tf.where(tf.not_equal(mask, 0))
    return output_logits(tf.gather_nd(sequence_output, indices)), tf.gather_nd(labels, indices)
