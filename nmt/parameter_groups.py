"""The translation model's parameter groups (Bogoychev, 2021), by checkpoint name, and their counts.

  embeddings        nmt/embeddings/*: the table shared by source, target and
                    output; nmt/output/bias (positions are sinusoidal: none)
  attention         nmt/<stack>/layer_<i>/attention/*: self-attention and, in
                    the decoder, cross-attention, each with its LayerNorm
  ffn               nmt/<stack>/layer_<i>/{intermediate,output}/*: the two dense
                    layers and their LayerNorm
  final_layer_norm  nmt/<stack>/LayerNorm/* (pre-norm models only)

Stacks are "encoder" and "decoder": `--freeze=attention:encoder`,
`--freeze=ffn:decoder:0-1`.
"""

from freezing import ParameterGroups
from layers import parameter_count

STACKS = ("encoder", "decoder")

PARAMETER_GROUPS = ParameterGroups([
    ("embeddings", r"^nmt/(embeddings|output)/"),
    ("attention", r"^nmt/(?P<stack>encoder|decoder)/layer_(?P<layer>\d+)/attention/"),
    ("ffn", r"^nmt/(?P<stack>encoder|decoder)/layer_(?P<layer>\d+)/(intermediate|output)/"),
    ("final_layer_norm", r"^nmt/(?P<stack>encoder|decoder)/LayerNorm/"),
], stacks=STACKS)


def count_parameters(config):
    """Parameter counts of a `TransformerNmt` from its `NmtConfig` alone.

    Per attention sub-layer with h heads of size d_p: 4*d*h*d_p + 3*h*d_p + d
    (projections and biases) + 2d (LayerNorm); the decoder has two per layer.

    Returns:
      dict of ints: embeddings, attention, ffn, final_layer_norm, total, and
      the same per stack as "<group>:<stack>" (e.g. "ffn:decoder").
    """
    d, vocab = config.hidden_size, config.vocab_size
    attention_sublayer = parameter_count.attention(d, config.num_attention_heads, config.attention_head_size)
    ffn_layer = parameter_count.feed_forward(d, config.intermediate_size)
    counts = dict(embeddings=vocab * d + vocab)
    for stack, layers in config.num_layers.items():
        sublayers = 2 if stack == "decoder" else 1
        counts["attention:" + stack] = layers * sublayers * attention_sublayer
        counts["ffn:" + stack] = layers * ffn_layer
        counts["final_layer_norm:" + stack] = parameter_count.layer_norm(d) if config.norm_first else 0
    for group in ("attention", "ffn", "final_layer_norm"):
        counts[group] = sum(counts["%s:%s" % (group, stack)] for stack in STACKS)
    counts["total"] = counts["embeddings"] + counts["attention"] + counts["ffn"] + counts["final_layer_norm"]
    return counts
