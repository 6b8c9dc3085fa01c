"""Test support: the translation model's forward pass in NumPy, float64, written from its definition.

Shared scaled embeddings plus sinusoidal positions (sines of every timescale,
then cosines: tensor2tensor's timing signal), post- or pre-LayerNorm encoder
and decoder layers, the tied output layer plus bias. Weights by checkpoint
name in checkpoint layout. No TensorFlow here.
"""

import math

import numpy as np

from layers.testing import numpy_layers

LAYER_NORM_EPSILON = 1e-6


def random_nmt_tensors(config, seed):
    """Random weights {checkpoint name: float32 array}, large enough that every term matters."""
    w, gamma = numpy_layers.random_weights(seed)
    d, inner = config.hidden_size, config.intermediate_size
    nd = config.num_attention_heads * config.attention_head_size

    t = {"nmt/embeddings/word_embeddings": w(config.vocab_size, d, scale=0.3)}
    for stack, layers in config.num_layers.items():
        for i in range(layers):
            p = "nmt/%s/layer_%d/" % (stack, i)
            sublayers = [("attention/self", "attention/output")]
            if stack == "decoder":
                sublayers.append(("attention/cross", "attention/cross_output"))
            for projection, output in sublayers:
                numpy_layers.add_attention_tensors(t, p + projection, p + output, d, nd, w, gamma)
            numpy_layers.add_ffn_tensors(t, p, d, inner, w, gamma)
        if config.norm_first:
            t["nmt/%s/LayerNorm/gamma" % stack] = gamma(d)
            t["nmt/%s/LayerNorm/beta" % stack] = w(d, scale=0.1)
    t["nmt/output/bias"] = w(config.vocab_size, scale=0.1)
    return t


def sinusoids(length, d):
    """[length, d]: sin(p / 10000^(i/(d/2-1))) for i < d/2, then the cosines."""
    half = d // 2
    timescales = np.exp(np.arange(half) * -(math.log(1.0e4) / max(half - 1, 1)))
    angles = np.arange(length)[:, None] * timescales[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def _layer_norm(x, t, prefix):
    return numpy_layers.layer_norm(x, t[prefix + "/gamma"], t[prefix + "/beta"], LAYER_NORM_EPSILON)


def _attention(config, t, prefix, output, queries, keys, allowed):
    """Multi-head attention, d -> h*d_p -> d; allowed [B, Tq, Tk]."""
    context = numpy_layers.attention_context(t, prefix, queries, keys, config.num_attention_heads,
                                             config.attention_head_size, allowed=allowed)
    return context @ t[output + "/dense/kernel"] + t[output + "/dense/bias"]


def _sublayer(config, t, norm, x, function):
    if config.norm_first:
        return x + function(_layer_norm(x, t, norm))
    return _layer_norm(x + function(x), t, norm)


def _ffn(config, t, p):
    def ffn(y):
        hidden = numpy_layers.activation(config.hidden_act)(
            y @ t[p + "intermediate/dense/kernel"] + t[p + "intermediate/dense/bias"])
        return hidden @ t[p + "output/dense/kernel"] + t[p + "output/dense/bias"]
    return ffn


def nmt_logits(config, tensors, source_ids, target_input_ids):
    """Logits [batch, T, vocab] (float64); ids 0 are padding."""
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    source_ids, target_ids = np.asarray(source_ids), np.asarray(target_input_ids)
    d = config.hidden_size
    table = t["nmt/embeddings/word_embeddings"]
    source_real = (source_ids != 0).astype(np.float64)
    x = (table[source_ids] * math.sqrt(d) + sinusoids(source_ids.shape[1], d)) * source_real[..., None]
    allowed = np.repeat(source_real[:, None, :], source_ids.shape[1], axis=1)
    for i in range(config.num_encoder_layers):
        p = "nmt/encoder/layer_%d/" % i
        x = _sublayer(config, t, p + "attention/output/LayerNorm", x, lambda y, p=p: _attention(
            config, t, p + "attention/self", p + "attention/output", y, y, allowed))
        x = _sublayer(config, t, p + "output/LayerNorm", x, _ffn(config, t, p))
    if config.norm_first:
        x = _layer_norm(x, t, "nmt/encoder/LayerNorm")
    memory, length = x, target_ids.shape[1]
    y = table[target_ids] * math.sqrt(d) + sinusoids(length, d)
    causal = np.tril(np.ones((length, length)))[None].repeat(len(target_ids), 0)
    cross = np.repeat(source_real[:, None, :], length, axis=1)
    for i in range(config.num_decoder_layers):
        p = "nmt/decoder/layer_%d/" % i
        y = _sublayer(config, t, p + "attention/output/LayerNorm", y, lambda z, p=p: _attention(
            config, t, p + "attention/self", p + "attention/output", z, z, causal))
        y = _sublayer(config, t, p + "attention/cross_output/LayerNorm", y, lambda z, p=p: _attention(
            config, t, p + "attention/cross", p + "attention/cross_output", z, memory, cross))
        y = _sublayer(config, t, p + "output/LayerNorm", y, _ffn(config, t, p))
    if config.norm_first:
        y = _layer_norm(y, t, "nmt/decoder/LayerNorm")
    return y @ table.T + t["nmt/output/bias"]
