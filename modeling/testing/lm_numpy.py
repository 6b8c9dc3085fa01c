"""Test support: the language model's forward pass in NumPy, float64, written from its definition.

Pre-LayerNorm Transformer layers under a causal mask, tied or untied output;
weights by checkpoint name in checkpoint layout. No TensorFlow here.
"""

import math

import numpy as np

LAYER_NORM_EPSILON = 1e-6


def random_lm_tensors(config, seed):
    """Random weights {checkpoint name: float32 array}, large enough that every term matters."""
    rng = np.random.RandomState(seed)
    d, inner, vocab = config.hidden_size, config.intermediate_size, config.vocab_size
    nd = config.num_attention_heads * config.attention_head_size

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def gamma(n):
        return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)

    t = {"lm/embeddings/word_embeddings": w(vocab, d, scale=0.5),
         "lm/embeddings/position_embeddings": w(config.max_position_embeddings, d, scale=0.5)}
    for i in range(config.num_hidden_layers):
        p = "lm/decoder/layer_%d/" % i
        for part in ("query", "key", "value"):
            t[p + "attention/self/%s/kernel" % part] = w(d, nd, scale=0.3)
            t[p + "attention/self/%s/bias" % part] = w(nd, scale=0.1)
        t[p + "attention/output/dense/kernel"] = w(nd, d)
        t[p + "attention/output/dense/bias"] = w(d, scale=0.1)
        t[p + "attention/output/LayerNorm/gamma"] = gamma(d)
        t[p + "attention/output/LayerNorm/beta"] = w(d, scale=0.1)
        t[p + "intermediate/dense/kernel"] = w(d, inner)
        t[p + "intermediate/dense/bias"] = w(inner, scale=0.1)
        t[p + "output/dense/kernel"] = w(inner, d)
        t[p + "output/dense/bias"] = w(d, scale=0.1)
        t[p + "output/LayerNorm/gamma"] = gamma(d)
        t[p + "output/LayerNorm/beta"] = w(d, scale=0.1)
    t["lm/decoder/LayerNorm/gamma"] = gamma(d)
    t["lm/decoder/LayerNorm/beta"] = w(d, scale=0.1)
    if not config.tie_embeddings:
        t["lm/output/kernel"] = w(d, vocab)
    t["lm/output/bias"] = w(vocab, scale=0.1)
    return t


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPSILON) * gamma + beta


def _activation(name, x):
    if name == "relu":
        return np.maximum(x, 0)
    if name == "gelu":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(name)


def lm_logits(config, tensors, input_ids, input_mask=None):
    """Logits [batch, T, vocab] (float64) of the language model."""
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    input_ids = np.asarray(input_ids)
    batch, length = input_ids.shape
    mask = np.ones_like(input_ids) if input_mask is None else np.asarray(input_mask)
    heads, dp = config.num_attention_heads, config.attention_head_size
    allowed = np.tril(np.ones((length, length)))[None] * mask[:, None, :]  # [B, T, T]
    x = t["lm/embeddings/word_embeddings"][input_ids] + t["lm/embeddings/position_embeddings"][:length]
    for i in range(config.num_hidden_layers):
        p = "lm/decoder/layer_%d/" % i
        y = _layer_norm(x, t[p + "attention/output/LayerNorm/gamma"], t[p + "attention/output/LayerNorm/beta"])

        def project(part):
            out = y @ t[p + "attention/self/%s/kernel" % part] + t[p + "attention/self/%s/bias" % part]
            return out.reshape(batch, length, heads, dp).transpose(0, 2, 1, 3)  # [B, h, T, d_p]

        q, k, v = project("query"), project("key"), project("value")
        logits = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dp)
        logits = np.where(allowed[:, None] > 0, logits, -np.inf)
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * dp)
        x = x + context @ t[p + "attention/output/dense/kernel"] + t[p + "attention/output/dense/bias"]
        y = _layer_norm(x, t[p + "output/LayerNorm/gamma"], t[p + "output/LayerNorm/beta"])
        hidden = _activation(config.hidden_act, y @ t[p + "intermediate/dense/kernel"] + t[p + "intermediate/dense/bias"])
        x = x + hidden @ t[p + "output/dense/kernel"] + t[p + "output/dense/bias"]
    x = _layer_norm(x, t["lm/decoder/LayerNorm/gamma"], t["lm/decoder/LayerNorm/beta"])
    kernel = t["lm/embeddings/word_embeddings"].T if config.tie_embeddings else t["lm/output/kernel"]
    return x @ kernel + t["lm/output/bias"]
