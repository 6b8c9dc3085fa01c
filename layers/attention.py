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

Dropout on the probabilities is `Uint16Dropout` (layers/uint16_dropout.py):
one 16-bit random draw per element instead of a float32, since drawing the
randomness is most of what dropout costs on [batch, heads, queries, keys]. In
training the softmax and the dropout share one gradient, and dropout's scale
multiplies the product with the values (the smaller tensor) instead. The
four projections are `ProductDense` (layers/product_dense.py): Keras's
EinsumDense with a faster weight gradient on CPUs.

With `causal=True` (the language model's self-attention) query i attends
keys 0..i only, on top of any mask passed in. Keys after a query's position
get zero probability anyway, so the queries are cut into blocks of
`CAUSAL_BLOCK_ROWS` rows and each block is multiplied only with the keys up to
its last row: 2 blocks over 256 tokens skip 1/4 of the scores, with their
softmax, dropout and gradients (the LM step at 64 heads ~10% faster on the
AVX2 CPU). The result is the same as without blocks, except for a query whose
every key is masked, which gets uniform weights over its block's keys instead
of over all of them.
"""

import math

import tensorflow as tf
import tf_keras

from layers.product_dense import replacing_einsum_dense
from layers.uint16_dropout import Uint16Dropout, keep_scale

# Keras creates these projections as plain EinsumDense; they become ProductDense (same config).
_PROJECTIONS = ("_query_dense", "_key_dense", "_value_dense", "_output_dense")


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class MatmulAttention(tf_keras.layers.MultiHeadAttention):
    """`tf_keras.layers.MultiHeadAttention` with the products as `tf.matmul`, `Uint16Dropout`.

    Only the common case is rewritten: rank-3 inputs [batch, length, width],
    attending over the length axis. Any other `attention_axes` keeps Keras's
    einsum.

    Args (besides Keras's):
      causal: query i attends keys 0..i only (self-attention); later keys'
        scores are skipped block by block (see the module docstring).
    """

    # Query rows per block under `causal=True` (at least): 256 queries make 2 blocks, which
    # compute 3/4 of the scores; 64-row blocks (5/8) measured no faster, their ops being smaller.
    CAUSAL_BLOCK_ROWS = 128

    def __init__(self, *args, causal=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._causal = causal

    def __setattr__(self, name, value):
        if name in _PROJECTIONS:
            value = replacing_einsum_dense(value)
        super().__setattr__(name, value)

    def get_config(self):
        config = super().get_config()
        if self._causal:  # Otherwise the config stays Keras's own.
            config["causal"] = True
        return config

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
            if self._causal:
                raise ValueError("MatmulAttention(causal=True) attends over the length axis of "
                                 "[batch, length, width] inputs only; got attention_axes %s." % (self._attention_axes,))
            return super()._compute_attention(query, key, value, attention_mask, training)
        # Scaled on the smaller operand, where Keras scales it.
        query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
        heads_first = [0, 2, 1, 3]  # [batch, length, heads, size] <-> [batch, heads, length, size]
        query, key, value = (tf.transpose(t, heads_first) for t in (query, key, value))
        if self._causal:
            attention_mask = _with_causal_mask(attention_mask, tf.shape(query)[2], tf.shape(key)[2])
        blocks = self._query_blocks(query.shape[2], key.shape[2])
        if len(blocks) == 1:
            context, scores, probabilities = self._attend(query, key, value, attention_mask, training)
        else:  # Each block of queries against the keys up to its last one.
            # tf.split and tf.slice: their gradients (concat, pad) are much faster than strided slicing's.
            queries = tf.split(query, [end - start for start, end in blocks], axis=2)
            context = tf.concat([
                self._attend(queries[i], _prefix(key, end), _prefix(value, end),
                             attention_mask[:, start:end, :end], training)[0]
                for i, (start, end) in enumerate(blocks)], axis=2)
            scores, probabilities = tf.matmul(query, key, transpose_b=True), None
        if probabilities is None:  # Only materialized when the caller asks for them (pruned from graphs otherwise).
            probabilities = self._masked_softmax(scores, attention_mask)
        return tf.transpose(context, heads_first), probabilities  # context: [batch, queries, heads, value_dim]

    def _query_blocks(self, num_queries, num_keys):
        """[(start, end)] query row ranges; more than one only for causal self-attention of a known length."""
        if not self._causal or num_queries is None or num_queries != num_keys:
            return [(0, num_queries)]
        count = max(1, num_queries // self.CAUSAL_BLOCK_ROWS)
        bounds = [num_queries * i // count for i in range(count + 1)]
        return list(zip(bounds[:-1], bounds[1:]))

    def _attend(self, query, key, value, attention_mask, training):
        """softmax(query key^T under the mask), dropped out, times value.

        Args:
          query: [batch, heads, queries, key_dim], already scaled.
          key: [batch, heads, keys, key_dim]
          value: [batch, heads, keys, value_dim]
          attention_mask: bool [batch or 1, queries, keys] or None.

        Returns:
          (context [batch, heads, queries, value_dim], the scores
           [batch, heads, queries, keys], the probabilities before dropout or
           None where the training path does not materialize them).
        """
        scores = tf.matmul(query, key, transpose_b=True)
        if not self._dropout_is_on(training):
            probabilities = self._masked_softmax(scores, attention_mask)
            return tf.matmul(self._dropout_layer(probabilities, training=training), value), scores, probabilities
        keep = self._dropout_layer.keep_mask(tf.shape(scores))
        dropped = self._dropped_probabilities(scores, attention_mask, keep)  # unscaled
        # Dropout's 1 / keep-probability, applied to the (smaller) product.
        return tf.matmul(dropped, value) * tf.cast(keep_scale(self._dropout), dropped.dtype), scores, None

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


def _with_causal_mask(attention_mask, num_queries, num_keys):
    """attention_mask (bool [batch, queries, keys] or None) and "query i attends keys 0..i".

    Returns:
      bool [batch or 1, queries, keys].
    """
    causal = tf.cast(tf.linalg.band_part(tf.ones([num_queries, num_keys], tf.int8), -1, 0), tf.bool)[tf.newaxis]
    if attention_mask is None:
        return causal
    return tf.logical_and(tf.cast(attention_mask, tf.bool), causal)


def _prefix(heads, length):
    """heads [batch, heads, keys, size] -> the first `length` keys."""
    return tf.slice(heads, [0, 0, 0, 0], [-1, -1, length, -1])
