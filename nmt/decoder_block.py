"""`DecoderBlock`: one Transformer decoder layer whose heads have any size d_p.

Model Garden's `TransformerDecoderBlock` derives the head size as d / h and
refuses d % h != 0, so it cannot hold Bhojanapalli et al.'s fixed head size.
Rather than subclass it and replace its `build` wholesale, this block is put
together from the same Model Garden and Keras layers, with `key_dim` = d_p in
both attentions:

  self-attention   official.nlp.modeling.layers.CachedAttention: causal, and
                   with a decode cache {"key", "value"}: [batch, steps, h, d_p]
                   that grows by one position per decoding step
  cross-attention  MatmulAttention (tf_keras MultiHeadAttention with its
                   per-head products as tf.matmul) over the encoder output
  feed-forward     d -> intermediate_size -> d

Each sub-layer adds its output (after dropout) to its input; post-norm
(the presets) applies LayerNorm after the sum, pre-norm before the sub-layer.
"""

import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers

from layers.attention import MatmulAttention


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class DecoderBlock(tf_keras.layers.Layer):
    """One decoder layer.

    Call with [target, memory, cross_mask, self_mask] and optionally `cache`:
      target:     [batch, T, d] the decoder's input (T = 1 when decoding a step)
      memory:     [batch, S, d] the encoder's output
      cross_mask: [batch, T, S] 1 where a target position may attend a source one
      self_mask:  [batch, T, T'] 1 where it may attend an earlier target position
                  (T' = the steps in the cache plus T)
    Returns (output [batch, T, d], the updated cache or None).
    """

    def __init__(self, num_attention_heads, head_size, intermediate_size, activation="relu",
                 dropout=0.0, attention_dropout=0.0, norm_first=False, norm_epsilon=1e-6,
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.num_attention_heads = num_attention_heads
        self.head_size = head_size
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.norm_first = norm_first
        self.norm_epsilon = norm_epsilon
        self.kernel_initializer = tf_keras.initializers.get(kernel_initializer)

    def build(self, input_shape):
        hidden_size = int(tf.TensorShape(input_shape[0])[-1])

        def attention(cls, name):
            return cls(num_heads=self.num_attention_heads, key_dim=self.head_size,
                       dropout=self.attention_dropout, output_shape=hidden_size,
                       kernel_initializer=tf_utils.clone_initializer(self.kernel_initializer), name=name)

        def norm(name):
            return tf_keras.layers.LayerNormalization(epsilon=self.norm_epsilon, dtype=tf.float32, name=name)

        def dense(width, name, activation=None):
            return tf_keras.layers.EinsumDense(
                "btd,dw->btw", output_shape=(None, width), bias_axes="w", activation=activation,
                kernel_initializer=tf_utils.clone_initializer(self.kernel_initializer), name=name)

        self.self_attention = attention(layers.CachedAttention, "self_attention")
        self.self_attention_layer_norm = norm("self_attention_layer_norm")
        self.cross_attention = attention(MatmulAttention, "cross_attention")
        self.cross_attention_layer_norm = norm("cross_attention_layer_norm")
        self.intermediate = dense(self.intermediate_size, "intermediate", tf_keras.activations.get(self.activation))
        self.output_dense = dense(hidden_size, "output")
        self.output_layer_norm = norm("output_layer_norm")
        self.sublayer_dropout = [tf_keras.layers.Dropout(self.dropout) for _ in range(3)]
        super().build(input_shape)

    def _residual(self, index, norm, x, sublayer):
        """x + dropout(sublayer(x)), normalised before (pre-norm) or after (post-norm)."""
        # Under mixed precision the LayerNorms output float32 and the sub-layers the compute dtype.
        if self.norm_first:
            return x + tf.cast(self.sublayer_dropout[index](sublayer(norm(x))), x.dtype)
        return norm(x + tf.cast(self.sublayer_dropout[index](sublayer(x)), x.dtype))

    def call(self, inputs, cache=None):
        target, memory, cross_mask, self_mask = inputs
        updated = {}

        def self_attention(x):
            output, updated["cache"] = self.self_attention(
                query=x, value=x, attention_mask=self_mask, cache=cache)
            return output

        x = self._residual(0, self.self_attention_layer_norm, target, self_attention)
        x = self._residual(1, self.cross_attention_layer_norm, x, lambda y: self.cross_attention(
            query=y, value=memory, attention_mask=cross_mask))
        x = self._residual(2, self.output_layer_norm, x, lambda y: self.output_dense(self.intermediate(y)))
        return x, updated["cache"]

    def get_config(self):
        config = super().get_config()
        config.update(
            num_attention_heads=self.num_attention_heads, head_size=self.head_size,
            intermediate_size=self.intermediate_size, activation=self.activation, dropout=self.dropout,
            attention_dropout=self.attention_dropout, norm_first=self.norm_first,
            norm_epsilon=self.norm_epsilon,
            kernel_initializer=tf_keras.initializers.serialize(self.kernel_initializer))
        return config
