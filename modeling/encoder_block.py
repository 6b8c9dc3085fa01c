"""One Transformer layer of a config: Model Garden's `TransformerEncoderBlock` with `key_dim` = the head size.

Shared by `BertModel` (post-LayerNorm, the original BERT) and `TransformerLm`
(pre-LayerNorm, tensor2tensor's default). Both configs name the same keys:
num_attention_heads, attention_head_size (d_p), intermediate_size,
hidden_act, hidden_dropout_prob, attention_probs_dropout_prob.
"""

from official.modeling import tf_utils
from official.nlp.modeling import layers

from modeling import activations


def transformer_block(config, initializer, norm_first, norm_epsilon, name):
    """A TransformerEncoderBlock: Q, K, V project d -> h*d_p, logits scaled by 1/sqrt(d_p)."""
    return layers.TransformerEncoderBlock(
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
    )
