"""BERT's parameter groups (Bogoychev, 2021), by original checkpoint name, and their counts.

  embeddings  bert/embeddings/*: word, position and token-type tables and their LayerNorm
  attention   bert/encoder/layer_<i>/attention/*: query, key, value, the output
              projection and its LayerNorm (per layer)
  ffn         bert/encoder/layer_<i>/{intermediate,output}/*: the two dense layers and
              the output LayerNorm (per layer)
  pooler      bert/pooler/*
  heads       cls/* and the classifier's output_weights / output_bias (task heads)

Each group includes its own LayerNorm and biases; the paper does not say where
they belong. Selectors, plans and reports over the table are freezing/'s.
"""

from freezing import ParameterGroups
from layers import parameter_count

BERT_PARAMETER_GROUPS = ParameterGroups([
    ("embeddings", r"^bert/embeddings/"),
    ("attention", r"^bert/encoder/layer_(?P<layer>\d+)/attention/"),
    ("ffn", r"^bert/encoder/layer_(?P<layer>\d+)/(intermediate|output)/"),
    ("pooler", r"^bert/pooler/"),
    ("heads", r"^cls/|^output_(weights|bias)$"),
])


def count_parameters(config, include_pretraining_heads=False):
    """Counts the parameters of a `BertModel` built from `config`.

    Args:
      config: a `BertConfig`.
      include_pretraining_heads: also count the `cls/` heads (MLM transform,
        its LayerNorm and output bias; the decoder is tied to the word
        embeddings and adds nothing; NSP weights and bias).

    Returns:
      dict of ints: embeddings, attention, ffn, pooler, total (= encoder +
      pooler, no task heads), attention_per_layer, ffn_per_layer; and with
      the heads also masked_lm, next_sentence and total_with_pretraining_heads.
    """
    h = config.hidden_size
    embeddings = (
        (config.vocab_size + config.max_position_embeddings + config.type_vocab_size) * h
        + parameter_count.layer_norm(h)
    )
    attention_per_layer = parameter_count.attention(h, config.num_attention_heads, config.attention_head_size)
    ffn_per_layer = parameter_count.feed_forward(h, config.intermediate_size)
    pooler = h * h + h
    layers = config.num_hidden_layers
    counts = dict(
        embeddings=embeddings,
        attention=attention_per_layer * layers,
        ffn=ffn_per_layer * layers,
        pooler=pooler,
        attention_per_layer=attention_per_layer,
        ffn_per_layer=ffn_per_layer,
    )
    counts["total"] = embeddings + counts["attention"] + counts["ffn"] + pooler
    if include_pretraining_heads:
        counts["masked_lm"] = h * h + h + parameter_count.layer_norm(h) + config.vocab_size
        counts["next_sentence"] = 2 * h + 2
        counts["total_with_pretraining_heads"] = (
            counts["total"] + counts["masked_lm"] + counts["next_sentence"]
        )
    return counts
