"""Test support: the original BERT forward pass in NumPy, and original checkpoints.

Written from the original `modeling.py` math, independently of our Keras code:
no TensorFlow in the forward pass, float64 throughout. Tests compare our
model, loaded from a checkpoint in the original layout, against it.
"""

import math

import numpy as np
import tensorflow as tf


def random_original_tensors(config, seed, num_labels=None, pretraining=True, squad=False):
    """Random weights under the original names and shapes.

    Scales are larger than BERT's init so that attention is far from uniform
    and every term (scaling, masking, biases, LayerNorm affine) matters.

    Returns:
      dict {original name: float32 array}.
    """
    rng = np.random.RandomState(seed)
    h, inner = config.hidden_size, config.intermediate_size
    nd = config.num_attention_heads * config.attention_head_size

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def gamma(n):
        return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)

    t = {
        "bert/embeddings/word_embeddings": w(config.vocab_size, h, scale=0.5),
        "bert/embeddings/token_type_embeddings": w(config.type_vocab_size, h, scale=0.5),
        "bert/embeddings/position_embeddings": w(config.max_position_embeddings, h, scale=0.5),
        "bert/embeddings/LayerNorm/gamma": gamma(h),
        "bert/embeddings/LayerNorm/beta": w(h, scale=0.1),
    }
    for i in range(config.num_hidden_layers):
        p = "bert/encoder/layer_%d/" % i
        for part in ("query", "key", "value"):
            t[p + "attention/self/%s/kernel" % part] = w(h, nd, scale=0.3)
            t[p + "attention/self/%s/bias" % part] = w(nd, scale=0.1)
        t[p + "attention/output/dense/kernel"] = w(nd, h)
        t[p + "attention/output/dense/bias"] = w(h, scale=0.1)
        t[p + "attention/output/LayerNorm/gamma"] = gamma(h)
        t[p + "attention/output/LayerNorm/beta"] = w(h, scale=0.1)
        t[p + "intermediate/dense/kernel"] = w(h, inner)
        t[p + "intermediate/dense/bias"] = w(inner, scale=0.1)
        t[p + "output/dense/kernel"] = w(inner, h)
        t[p + "output/dense/bias"] = w(h, scale=0.1)
        t[p + "output/LayerNorm/gamma"] = gamma(h)
        t[p + "output/LayerNorm/beta"] = w(h, scale=0.1)
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
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + 1e-12) * gamma + beta


def _activation(name):
    erf = np.vectorize(math.erf)
    return {
        "gelu": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        "gelu_exact": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
        "relu": lambda x: np.maximum(x, 0.0),
        "tanh": np.tanh,
        "linear": lambda x: x,
    }[name]


def _softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


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
    batch, seq = input_ids.shape
    heads, size = config.num_attention_heads, config.attention_head_size
    act = _activation(config.hidden_act)

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

        def project(part):
            y = x @ t[p + "attention/self/%s/kernel" % part] + t[p + "attention/self/%s/bias" % part]
            return y.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

        q, k, v = project("query"), project("key"), project("value")
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + adder
        context = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)
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
    x = _activation(config.hidden_act)(
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
