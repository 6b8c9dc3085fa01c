"""Test support: the layers every family's NumPy reference is built from, float64, no TensorFlow.

Random weights large enough that every term matters (scaling, masking,
biases, LayerNorm affine), under checkpoint names; LayerNorm; activations;
softmax; and multi-head attention with h heads of size d_p.
"""

import math

import numpy as np


def random_weights(seed):
    """(w, gamma): w(*shape, scale=0.2) normal weights, gamma(n) LayerNorm scales near 1; float32."""
    rng = np.random.RandomState(seed)

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def gamma(n):
        return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)

    return w, gamma


def add_attention_tensors(tensors, projection, output, d, nd, w, gamma):
    """Query, key, value under `projection`, the output dense and LayerNorm under `output`."""
    for part in ("query", "key", "value"):
        tensors["%s/%s/kernel" % (projection, part)] = w(d, nd, scale=0.3)
        tensors["%s/%s/bias" % (projection, part)] = w(nd, scale=0.1)
    tensors[output + "/dense/kernel"] = w(nd, d)
    tensors[output + "/dense/bias"] = w(d, scale=0.1)
    tensors[output + "/LayerNorm/gamma"] = gamma(d)
    tensors[output + "/LayerNorm/beta"] = w(d, scale=0.1)


def add_ffn_tensors(tensors, prefix, d, inner, w, gamma):
    """intermediate/dense, output/dense and output/LayerNorm of a layer under `prefix`."""
    tensors[prefix + "intermediate/dense/kernel"] = w(d, inner)
    tensors[prefix + "intermediate/dense/bias"] = w(inner, scale=0.1)
    tensors[prefix + "output/dense/kernel"] = w(inner, d)
    tensors[prefix + "output/dense/bias"] = w(d, scale=0.1)
    tensors[prefix + "output/LayerNorm/gamma"] = gamma(d)
    tensors[prefix + "output/LayerNorm/beta"] = w(d, scale=0.1)


def layer_norm(x, gamma, beta, epsilon):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def activation(name):
    """The function of a config's hidden_act."""
    erf = np.vectorize(math.erf)
    return {
        "gelu": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        "gelu_exact": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
        "relu": lambda x: np.maximum(x, 0.0),
        "tanh": np.tanh,
        "linear": lambda x: x,
    }[name]


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def attention_context(tensors, projection, queries, keys, heads, head_size, allowed=None, adder=None):
    """Multi-head attention before the output projection: [B, Tq, h*d_p].

    allowed: [B, Tq, Tk], 0 where masked (-inf logits); adder: added to the logits (the original's mask).
    """
    def project(x, part):
        out = x @ tensors["%s/%s/kernel" % (projection, part)] + tensors["%s/%s/bias" % (projection, part)]
        return out.reshape(x.shape[0], x.shape[1], heads, head_size).transpose(0, 2, 1, 3)

    q, k, v = project(queries, "query"), project(keys, "key"), project(keys, "value")
    logits = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_size)
    if adder is not None:
        logits = logits + adder
    if allowed is not None:
        logits = np.where(allowed[:, None] > 0, logits, -np.inf)
    context = softmax(logits) @ v
    return context.transpose(0, 2, 1, 3).reshape(queries.shape[0], queries.shape[1], heads * head_size)
