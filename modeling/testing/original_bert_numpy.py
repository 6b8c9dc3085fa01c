"""Test support: the original BERT forward pass in NumPy, and original checkpoints.

Written from the original `modeling.py` math, independently of our Keras code:
no TensorFlow in the forward pass, float64 throughout. Tests compare our
model, loaded from a checkpoint in the original layout, against it.
"""

import numpy as np
import tensorflow as tf

from layers.testing import numpy_layers


def random_original_tensors(config, seed, num_labels=None, pretraining=True, squad=False):
    """Random weights under the original names and shapes.

    Scales are larger than BERT's init so that attention is far from uniform
    and every term (scaling, masking, biases, LayerNorm affine) matters.

    Returns:
      dict {original name: float32 array}.
    """
    w, gamma = numpy_layers.random_weights(seed)
    h, inner = config.hidden_size, config.intermediate_size
    nd = config.num_attention_heads * config.attention_head_size

    t = {
        "bert/embeddings/word_embeddings": w(config.vocab_size, h, scale=0.5),
        "bert/embeddings/token_type_embeddings": w(config.type_vocab_size, h, scale=0.5),
        "bert/embeddings/position_embeddings": w(config.max_position_embeddings, h, scale=0.5),
        "bert/embeddings/LayerNorm/gamma": gamma(h),
        "bert/embeddings/LayerNorm/beta": w(h, scale=0.1),
    }
    for i in range(config.num_hidden_layers):
        p = "bert/encoder/layer_%d/" % i
        numpy_layers.add_attention_tensors(t, p + "attention/self", p + "attention/output", h, nd, w, gamma)
        numpy_layers.add_ffn_tensors(t, p, h, inner, w, gamma)
    t["bert/pooler/dense/kernel"] = w(h, h)
    t["bert/pooler/dense/bias"] = w(h, scale=0.1)
    if pretraining:
        t["cls/predictions/transform/dense/kernel"] = w(h, h)
        t["cls/predictions/transform/dense/bias"] = w(h, scale=0.1)
        t["cls/predictions/transform/LayerNorm/gamma"] = gamma(h)
        t["cls/predictions/transform/LayerNorm/beta"] = w(h, scale=0.1)
        t["cls/predictions/output_bias"] = w(config.vocab_size, scale=0.1)
        t["cls/seq_relationship/output_weights"] = w(2, h)
        t["cls/seq_relationship/output_bias"] = w(2, scale=0.1)
    if num_labels:
        t["output_weights"] = w(num_labels, h)
        t["output_bias"] = w(num_labels, scale=0.1)
    if squad:
        t["cls/squad/output_weights"] = w(2, h)
        t["cls/squad/output_bias"] = w(2, scale=0.1)
    return t


def write_tf1_checkpoint(prefix, tensors):
    """Writes `tensors` with TF1's graph-mode Saver, as the original code does."""
    with tf.Graph().as_default():
        variables = [
            tf.compat.v1.Variable(value, name=name) for name, value in tensors.items()
        ]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix, write_meta_graph=False)
    return prefix


def _layer_norm(x, gamma, beta):
    return numpy_layers.layer_norm(x, gamma, beta, 1e-12)


def bert_forward(config, t, input_ids, input_mask, token_type_ids):
    """The original BertModel in inference mode.

    Args:
      config: BertConfig.
      t: {original name: array}.
      input_ids, input_mask, token_type_ids: int arrays [batch, seq].

    Returns:
      dict: embedding_output, all_encoder_layers (list), sequence_output
      [batch, seq, H], pooled_output [batch, H]; float64.
    """
    t = {k: v.astype(np.float64) for k, v in t.items()}
    seq = input_ids.shape[1]
    heads, size = config.num_attention_heads, config.attention_head_size
    act = numpy_layers.activation(config.hidden_act)

    x = (
        t["bert/embeddings/word_embeddings"][input_ids]
        + t["bert/embeddings/token_type_embeddings"][token_type_ids]
        + t["bert/embeddings/position_embeddings"][:seq][None]
    )
    x = _layer_norm(x, t["bert/embeddings/LayerNorm/gamma"], t["bert/embeddings/LayerNorm/beta"])
    embedding_output = x
    # The original's additive mask: 0 where attended, -10000 where masked.
    adder = (1.0 - input_mask[:, None, None, :].astype(np.float64)) * -10000.0
    layers = []
    for i in range(config.num_hidden_layers):
        p = "bert/encoder/layer_%d/" % i
        context = numpy_layers.attention_context(t, p + "attention/self", x, x, heads, size, adder=adder)
        attention = context @ t[p + "attention/output/dense/kernel"] + t[p + "attention/output/dense/bias"]
        attention = _layer_norm(
            attention + x,
            t[p + "attention/output/LayerNorm/gamma"],
            t[p + "attention/output/LayerNorm/beta"],
        )
        inner = act(attention @ t[p + "intermediate/dense/kernel"] + t[p + "intermediate/dense/bias"])
        out = inner @ t[p + "output/dense/kernel"] + t[p + "output/dense/bias"]
        x = _layer_norm(out + attention, t[p + "output/LayerNorm/gamma"], t[p + "output/LayerNorm/beta"])
        layers.append(x)
    pooled = np.tanh(x[:, 0] @ t["bert/pooler/dense/kernel"] + t["bert/pooler/dense/bias"])
    return dict(
        embedding_output=embedding_output,
        all_encoder_layers=layers,
        sequence_output=x,
        pooled_output=pooled,
    )


def pretraining_heads_forward(config, t, sequence_output, pooled_output, masked_lm_positions):
    """The original's MLM and NSP logits: [batch, predictions, V] and [batch, 2]."""
    t = {k: v.astype(np.float64) for k, v in t.items()}
    batch = sequence_output.shape[0]
    gathered = sequence_output[np.arange(batch)[:, None], masked_lm_positions]
    x = numpy_layers.activation(config.hidden_act)(
        gathered @ t["cls/predictions/transform/dense/kernel"]
        + t["cls/predictions/transform/dense/bias"]
    )
    x = _layer_norm(
        x,
        t["cls/predictions/transform/LayerNorm/gamma"],
        t["cls/predictions/transform/LayerNorm/beta"],
    )
    mlm = x @ t["bert/embeddings/word_embeddings"].T + t["cls/predictions/output_bias"]
    nsp = pooled_output @ t["cls/seq_relationship/output_weights"].T + t["cls/seq_relationship/output_bias"]
    return mlm, nsp
