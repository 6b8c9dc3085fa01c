"""Test support: the language model's forward pass in NumPy, float64, written from its definition.

Pre-LayerNorm Transformer layers under a causal mask, tied or untied output;
weights by checkpoint name in checkpoint layout. No TensorFlow here.
"""

import numpy as np

from layers.testing import numpy_layers

LAYER_NORM_EPSILON = 1e-6


def random_lm_tensors(config, seed):
    """Random weights {checkpoint name: float32 array}, large enough that every term matters."""
    w, gamma = numpy_layers.random_weights(seed)
    d, inner, vocab = config.hidden_size, config.intermediate_size, config.vocab_size
    nd = config.num_attention_heads * config.attention_head_size

    t = {"lm/embeddings/word_embeddings": w(vocab, d, scale=0.5),
         "lm/embeddings/position_embeddings": w(config.max_position_embeddings, d, scale=0.5)}
    for i in range(config.num_hidden_layers):
        p = "lm/decoder/layer_%d/" % i
        numpy_layers.add_attention_tensors(t, p + "attention/self", p + "attention/output", d, nd, w, gamma)
        numpy_layers.add_ffn_tensors(t, p, d, inner, w, gamma)
    t["lm/decoder/LayerNorm/gamma"] = gamma(d)
    t["lm/decoder/LayerNorm/beta"] = w(d, scale=0.1)
    if not config.tie_embeddings:
        t["lm/output/kernel"] = w(d, vocab)
    t["lm/output/bias"] = w(vocab, scale=0.1)
    return t


def _layer_norm(x, gamma, beta):
    return numpy_layers.layer_norm(x, gamma, beta, LAYER_NORM_EPSILON)


def lm_logits(config, tensors, input_ids, input_mask=None):
    """Logits [batch, T, vocab] (float64) of the language model."""
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    input_ids = np.asarray(input_ids)
    length = input_ids.shape[1]
    mask = np.ones_like(input_ids) if input_mask is None else np.asarray(input_mask)
    heads, dp = config.num_attention_heads, config.attention_head_size
    allowed = np.tril(np.ones((length, length)))[None] * mask[:, None, :]  # [B, T, T]
    x = t["lm/embeddings/word_embeddings"][input_ids] + t["lm/embeddings/position_embeddings"][:length]
    for i in range(config.num_hidden_layers):
        p = "lm/decoder/layer_%d/" % i
        y = _layer_norm(x, t[p + "attention/output/LayerNorm/gamma"], t[p + "attention/output/LayerNorm/beta"])
        context = numpy_layers.attention_context(t, p + "attention/self", y, y, heads, dp, allowed=allowed)
        x = x + context @ t[p + "attention/output/dense/kernel"] + t[p + "attention/output/dense/bias"]
        y = _layer_norm(x, t[p + "output/LayerNorm/gamma"], t[p + "output/LayerNorm/beta"])
        hidden = numpy_layers.activation(config.hidden_act)(
            y @ t[p + "intermediate/dense/kernel"] + t[p + "intermediate/dense/bias"])
        x = x + hidden @ t[p + "output/dense/kernel"] + t[p + "output/dense/bias"]
    x = _layer_norm(x, t["lm/decoder/LayerNorm/gamma"], t["lm/decoder/LayerNorm/beta"])
    kernel = t["lm/embeddings/word_embeddings"].T if config.tie_embeddings else t["lm/output/kernel"]
    return x @ kernel + t["lm/output/bias"]
