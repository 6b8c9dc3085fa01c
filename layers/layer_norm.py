"""`LayerNormalization`: Keras's, computed in fewer passes in mixed-precision inference.

Keras normalizes over the last axis (epsilon 1e-12, below the 1.001e-5 that
its fused kernel takes, so never fused here) as `tf.nn.moments` and then
`tf.nn.batch_normalization`: eight full-size ops, one of them broadcasting a
[batch, length, 1] statistic against the [width] gamma on both sides. In
inference (`training=False`), with `fewer_passes=True`, this layer computes
instead

  centered = x - mean
  out = centered * rsqrt(mean(centered^2) + epsilon) * gamma + beta

the same function in seven full-size ops (six once Grappler merges the two
products), none broadcasting on both sides; the values agree with Keras's to
float32 rounding. Training keeps Keras's form: its gradient is what every
result here was trained and checked with. The blocks and the embeddings set
`fewer_passes` under mixed precision only: in float32 inference it measured
no faster and peaked higher.

Everything else is Keras's `LayerNormalization`: the variables, names, config
and dtype rules (under mixed precision a float32 layer computes in float32).

Measurements: docs/performance.md#why-the-models-layers.
"""

import tensorflow as tf
import tf_keras

from layers.product_dense import is_inference


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class LayerNormalization(tf_keras.layers.LayerNormalization):
    """`tf_keras.layers.LayerNormalization` with the inference form of the module docstring.

    Same arguments, variables and config, and:
      fewer_passes: whether inference takes the form of the module docstring
        (False: Keras's computation throughout).
    """

    def __init__(self, *args, fewer_passes=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fewer_passes = fewer_passes

    def get_config(self):
        config = super().get_config()
        if self.fewer_passes:  # Otherwise the config stays Keras's own.
            config["fewer_passes"] = True
        return config

    def call(self, inputs, training=None):  # pylint: disable=arguments-differ
        if (not self.fewer_passes or not is_inference(training) or isinstance(inputs, tf.RaggedTensor)
                or self._fused or inputs.shape.rank is None or self.axis != [inputs.shape.rank - 1]):
            return super().call(inputs)
        inputs = tf.cast(inputs, self.compute_dtype)
        input_dtype = inputs.dtype
        if input_dtype in (tf.float16, tf.bfloat16) and self.dtype == "float32":
            inputs = tf.cast(inputs, tf.float32)  # as Keras: the statistics in float32
        mean = tf.reduce_mean(inputs, axis=-1, keepdims=True)
        centered = inputs - mean
        variance = tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True)
        outputs = centered * tf.math.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            outputs *= tf.cast(self.gamma, outputs.dtype)
        if self.beta is not None:
            outputs += tf.cast(self.beta, outputs.dtype)
        return tf.cast(outputs, input_dtype)


def replacing_layer_norm(value, fewer_passes):
    """`value` as a `LayerNormalization` of this module (same config) if it is an unbuilt Keras one, else `value`.

    For the `__setattr__` of layers that create their norms themselves (Model
    Garden's TransformerEncoderBlock).
    """
    if type(value) is not tf_keras.layers.LayerNormalization or value.built:  # pylint: disable=unidiomatic-typecheck
        return value
    return LayerNormalization.from_config(dict(value.get_config(), fewer_passes=fewer_passes))
