"""Multi-head attention whose per-head products are batched matrix products.

`MatmulAttention` is Keras's `MultiHeadAttention` (the same variables, names,
config and math) except for how the two per-head products are computed:

  scores  = softmax(q k^T / sqrt(d_p))   [batch, heads, queries, keys]
  context = scores v                     [batch, queries, heads, d_p]

Keras writes them as `tf.einsum`. TensorFlow's einsum kernel runs its own
(Eigen) contraction, while `tf.matmul` is the batched matrix product that
oneDNN replaces on CPUs; with the heads moved next to the batch, the two
products run 1.5x (BERT, 8 heads of 64 over 128 tokens) to 2x (the LM, 64 heads
of 32 over 256 tokens, forward and backward) faster on an AVX2 CPU. Under
XLA both forms compile to the same dot.

Dropout on the probabilities is `Uint16Dropout` (modeling/uint16_dropout.py):
one 16-bit random draw per element instead of a float32, since drawing the
randomness is most of what dropout costs on [batch, heads, queries, keys]. In
training the softmax and the dropout share one gradient, and dropout's scale
multiplies the product with the values (the smaller tensor) instead.
"""

import math

import tensorflow as tf
import tf_keras

from modeling.uint16_dropout import Uint16Dropout, keep_scale


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class MatmulAttention(tf_keras.layers.MultiHeadAttention):
    """`tf_keras.layers.MultiHeadAttention` with the products as `tf.matmul`, `Uint16Dropout`.

    Only the common case is rewritten: rank-3 inputs [batch, length, width],
    attending over the length axis. Any other `attention_axes` keeps Keras's
    einsum.
    """

    def _build_attention(self, rank):
        super()._build_attention(rank)
        self._dropout_layer = Uint16Dropout(rate=self._dropout, dtype=self._dtype_policy)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None):
        """Scaled dot-product attention of projected heads.

        Args:
          query: [batch, queries, heads, key_dim]
          key: [batch, keys, heads, key_dim]
          value: [batch, keys, heads, value_dim]
          attention_mask: bool [batch, queries, keys] or None (True = attend).
          training: whether dropout is on.

        Returns:
          (context [batch, queries, heads, value_dim],
           probabilities [batch, heads, queries, keys]).
        """
        if self._attention_axes != (1,) or query.shape.rank != 4:
            return super()._compute_attention(query, key, value, attention_mask, training)
        # Scaled on the smaller operand, where Keras scales it.
        query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
        heads_first = [0, 2, 1, 3]  # [batch, length, heads, size] <-> [batch, heads, length, size]
        scores = tf.matmul(tf.transpose(query, heads_first), tf.transpose(key, heads_first),
                           transpose_b=True)  # [batch, heads, queries, keys]
        values = tf.transpose(value, heads_first)  # [batch, heads, keys, value_dim]
        if self._dropout_is_on(training):
            keep = self._dropout_layer.keep_mask(tf.shape(scores))
            dropped = self._dropped_probabilities(scores, attention_mask, keep)  # unscaled
            # Dropout's 1 / keep-probability, applied to the (smaller) product.
            context = tf.matmul(dropped, values) * tf.cast(keep_scale(self._dropout), dropped.dtype)
            # Only materialized when the caller asks for the scores (pruned from graphs otherwise).
            probabilities = self._masked_softmax(scores, attention_mask)
        else:
            probabilities = self._masked_softmax(scores, attention_mask)
            context = tf.matmul(self._dropout_layer(probabilities, training=training), values)
        return tf.transpose(context, heads_first), probabilities  # context: [batch, queries, heads, value_dim]

    def _dropout_is_on(self, training):
        """True when dropout certainly applies (a known training value and a rate > 0)."""
        if training is None:
            training = tf_keras.backend.learning_phase()
        training = tf.get_static_value(training)
        return training is not None and bool(training) and self._dropout > 0

    def _dropped_probabilities(self, scores, attention_mask, keep):
        """softmax(scores under the mask), zero where `keep` is False, not rescaled.

        One gradient for the softmax and the dropout together. With d the
        output, p the probabilities and g the gradient reaching d:
        d scores = g*d - p * sum_keys(g*d), four passes over
        [batch, heads, queries, keys] where the two ops' own gradients take six.
        """

        @tf.custom_gradient
        def dropped_softmax(scores):
            probabilities = self._masked_softmax(scores, attention_mask)
            dropped = tf.where(keep, probabilities, tf.zeros([], probabilities.dtype))

            def gradient(upstream):
                kept = upstream * dropped
                return kept - probabilities * tf.reduce_sum(kept, axis=-1, keepdims=True)

            return dropped, gradient

        return dropped_softmax(scores)
