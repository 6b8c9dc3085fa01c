"""Dropout that draws one 16-bit random integer per element instead of a float32.

`tf_keras.layers.Dropout` draws a uniform float32 per element (one 32-bit
Philox word each) and keeps the element when it is >= rate. On the attention
probabilities, [batch, heads, queries, keys], drawing those words is most of
the cost of dropout, more than the softmax. `Uint16Dropout` splits each
32-bit word into two 16-bit draws u and keeps an element when
u >= round(rate * 65536): half the words.

The drop probability is rate rounded to a multiple of 1/65536 (0.1 becomes
0.100006); kept elements are scaled by 1 / (keep probability), so the expected
output still equals the input. The draws come from the layer's Keras random
generator, like Keras' Dropout: deterministic under a seed, and under
`enable_tf_random_generator()` its state is checkpointed with the model.

Measurements: docs/performance.md#why-the-models-layers.
"""

import numbers

import tensorflow as tf
import tf_keras

# Draws per element are 16-bit: u in [0, 65536).
_LEVELS = 1 << 16


def drop_threshold(rate):
    """The 16-bit threshold: an element is kept when its draw is >= this."""
    return int(round(rate * _LEVELS))


def keep_scale(rate):
    """1 / the exact keep probability (65536 - threshold) / 65536."""
    return _LEVELS / (_LEVELS - drop_threshold(rate))


def uint16_draws(shape, seed):
    """Uniform 16-bit draws from a stateless seed, two per 32-bit word.

    Args:
      shape: int32 Tensor [rank] (or a list of ints).
      seed: int Tensor [2].

    Returns:
      uint16 Tensor of `shape`.
    """
    count = tf.reduce_prod(shape)
    words = tf.random.stateless_uniform([(count + 1) // 2], seed, minval=None, maxval=None, dtype=tf.uint32)
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:count]  # No copy when count is even.
    return tf.reshape(halves, shape)


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class Uint16Dropout(tf_keras.layers.Dropout):
    """`tf_keras.layers.Dropout` with 16-bit draws (see the module docstring).

    Same arguments and config. A `noise_shape`, or a rate that is not a
    Python number, takes Keras' own path.
    """

    def call(self, inputs, training=None):
        if self.noise_shape is not None or not isinstance(self.rate, numbers.Real):
            return super().call(inputs, training=training)
        if self.rate == 0:
            return tf.identity(inputs)
        if training is None:
            training = tf_keras.backend.learning_phase()
        return tf.__internal__.smart_cond.smart_cond(
            training, lambda: self._dropped(inputs), lambda: tf.identity(inputs))

    def keep_mask(self, shape):
        """bool Tensor of `shape` (an int32 Tensor [rank]): True where an element is kept.

        Each call draws anew. For callers that fuse the dropout with their own
        ops; `keep_scale(rate)` is the factor for the kept elements.
        """
        draws = uint16_draws(shape, self._seed_tensor())
        return draws >= tf.constant(drop_threshold(self.rate), tf.uint16)

    def _dropped(self, inputs):
        keep = self.keep_mask(tf.shape(inputs))
        scaled = inputs * tf.cast(keep_scale(self.rate), inputs.dtype)
        return tf.where(keep, scaled, tf.zeros([], inputs.dtype))

    def _seed_tensor(self):
        """A fresh [2] seed from the layer's Keras random generator, whichever kind it is."""
        seed = self._random_generator.make_seed_for_stateless_op()
        if seed is None:  # Keras' legacy stateful mode: a seeded stateful op draws the seed.
            seed = tf.random.uniform([2], maxval=tf.int32.max, dtype=tf.int32,
                                     seed=self._random_generator.make_legacy_seed())
        return seed
