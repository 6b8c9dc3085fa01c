"""The language model's parameter groups (Bogoychev, 2021), by checkpoint name, and their counts.

  embeddings        lm/embeddings/*: token and position tables; lm/output/*: the
                    output bias (and the output kernel when not tied)
  attention         lm/decoder/layer_<i>/attention/*: query, key, value, the output
                    projection and the LayerNorm before them (per layer)
  ffn               lm/decoder/layer_<i>/{intermediate,output}/*: the two dense
                    layers and the LayerNorm before them (per layer)
  final_layer_norm  lm/decoder/LayerNorm/*

The paper's presets freeze embeddings, attention and ffn, one or two at a
time; the final LayerNorm (2d parameters) is selectable on its own.
"""

from freezing import ParameterGroups
from layers import parameter_count

PARAMETER_GROUPS = ParameterGroups([
    ("embeddings", r"^lm/(embeddings|output)/"),
    ("attention", r"^lm/decoder/layer_(?P<layer>\d+)/attention/"),
    ("ffn", r"^lm/decoder/layer_(?P<layer>\d+)/(intermediate|output)/"),
    ("final_layer_norm", r"^lm/decoder/LayerNorm/"),
])


def count_parameters(config):
    """Parameter counts of a `TransformerLm` from its `LmConfig` alone.

    With h heads of size d_p, attention holds 4*d*h*d_p + 3*h*d_p + d + 2d
    per layer: it grows with h when d_p is fixed.

    Returns:
      dict of ints: embeddings, attention, ffn, final_layer_norm, total,
      attention_per_layer, ffn_per_layer.
    """
    d, vocab = config.hidden_size, config.vocab_size
    layer_norm = parameter_count.layer_norm(d)
    output = vocab + (0 if config.tie_embeddings else d * vocab)
    embeddings = (vocab + config.max_position_embeddings) * d + output
    attention_per_layer = parameter_count.attention(d, config.num_attention_heads, config.attention_head_size)
    ffn_per_layer = parameter_count.feed_forward(d, config.intermediate_size)
    layers = config.num_hidden_layers
    counts = dict(embeddings=embeddings, attention=attention_per_layer * layers, ffn=ffn_per_layer * layers,
                  final_layer_norm=layer_norm, attention_per_layer=attention_per_layer,
                  ffn_per_layer=ffn_per_layer)
    counts["total"] = embeddings + counts["attention"] + counts["ffn"] + layer_norm
    return counts
