"""`TransposedDense`: logits = x . W^T + b with W stored as [units, width].

The original stores its NSP, classifier and SQuAD output layers this way
(`output_weights` [units, H], `output_bias` [units]) rather than as a Dense
kernel [H, units]; keeping the layout keeps the checkpoint names and shapes.
"""

import tensorflow as tf
import tf_keras


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class TransposedDense(tf_keras.layers.Layer):
    """Call: x [..., width] -> logits [..., units]."""

    def __init__(self, units, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.initializer_range = initializer_range

    def build(self, input_shape):
        width = input_shape[-1]
        self.output_weights = self.add_weight(
            "output_weights",
            shape=[self.units, width],
            initializer=tf_keras.initializers.TruncatedNormal(stddev=self.initializer_range),
        )
        self.output_bias = self.add_weight(
            "output_bias", shape=[self.units], initializer="zeros"
        )
        super().build(input_shape)

    def call(self, x):
        logits = tf.einsum("...h,uh->...u", x, tf.cast(self.output_weights, x.dtype))
        return logits + tf.cast(self.output_bias, x.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, initializer_range=self.initializer_range)
        return config
