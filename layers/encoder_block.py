"""One Transformer layer of a config: Model Garden's `TransformerEncoderBlock` with `key_dim` = the head size.

Shared by `BertModel` (post-LayerNorm, the original BERT) and `TransformerLm`
(pre-LayerNorm, tensor2tensor's default). Both configs name the same keys:
num_attention_heads, attention_head_size (d_p), intermediate_size,
hidden_act, hidden_dropout_prob, attention_probs_dropout_prob.
"""

import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers

from layers import activations
from layers.attention import MatmulAttention
from layers.layer_norm import replacing_layer_norm
from layers.product_dense import ProductDense, replacing_einsum_dense


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class EncoderBlock(layers.TransformerEncoderBlock):
    """Model Garden's block with its attention as `MatmulAttention`.

    The block's `build` creates a plain `tf_keras.layers.MultiHeadAttention`
    with no way to pass another class; the assignment is intercepted and the
    layer replaced by a `MatmulAttention` of the same config before it has
    variables or is tracked. The same variables, names and order; the per-head
    products as batched `tf.matmul` (faster on CPU, see layers/attention.py).
    The feed-forward layer's two projections become `ProductDense` the same
    way (layers/product_dense.py), and the first one takes over the block's
    activation layer (in its dtype: float32 under mixed bfloat16, as Model
    Garden computes it), so that oneDNN applies the bias and the GELU inside
    the product in inference; the activation layer becomes the identity. The
    LayerNorms become layers/layer_norm.py's (the same variables), which
    under mixed precision take fewer passes in inference.
    """

    def __init__(self, *args, causal_attention=False, **kwargs):
        self._causal_attention = causal_attention  # read when build() creates the attention layer
        super().__init__(*args, **kwargs)

    def get_config(self):
        config = super().get_config()
        if self._causal_attention:  # Otherwise the config stays Model Garden's own.
            config["causal_attention"] = True
        return config

    def __setattr__(self, name, value):
        if name == "_attention_layer" and type(value) is tf_keras.layers.MultiHeadAttention:  # pylint: disable=unidiomatic-typecheck
            config = value.get_config()
            for unbuilt in ("query_shape", "key_shape", "value_shape"):  # None: from_config would warn
                del config[unbuilt]
            value = MatmulAttention(causal=self._causal_attention, **config)
        elif name in ("_intermediate_dense", "_output_dense"):  # the feed-forward layer
            value = replacing_einsum_dense(value)
        elif name in ("_attention_layer_norm", "_attention_layer_norm_kv", "_output_layer_norm"):
            value = replacing_layer_norm(value, fewer_passes=self.compute_dtype != "float32")
        elif (name == "_intermediate_activation_layer" and isinstance(value, tf_keras.layers.Activation)
              and isinstance(getattr(self, "_intermediate_dense", None), ProductDense)):
            self._intermediate_dense.fold_activation(value.activation, value.compute_dtype)
            value = tf_keras.layers.Activation("linear", name=value.name)
        super().__setattr__(name, value)


def transformer_block(config, initializer, norm_first, norm_epsilon, name, causal_attention=False):
    """An EncoderBlock: Q, K, V project d -> h*d_p, logits scaled by 1/sqrt(d_p).

    causal_attention: every position attends itself and earlier ones only
    (on top of the mask passed in), skipping the scores of later keys.
    """
    return EncoderBlock(
        num_attention_heads=config.num_attention_heads,
        key_dim=config.attention_head_size,
        inner_dim=config.intermediate_size,
        inner_activation=activations.get_activation(config.hidden_act),
        output_dropout=config.hidden_dropout_prob,
        attention_dropout=config.attention_probs_dropout_prob,
        norm_first=norm_first,
        norm_epsilon=norm_epsilon,
        kernel_initializer=tf_utils.clone_initializer(initializer),
        name=name,
        causal_attention=causal_attention,
    )
