"""`count_parameters(config)`: parameter counts by group, from the config alone.

Groups follow Bogoychev (2021) and our freezing masks: embeddings (three
tables and their LayerNorm), attention (Q, K, V, output projection and its
LayerNorm, per layer), ffn (intermediate and output dense and their LayerNorm,
per layer), pooler. With head size D and N heads, attention holds
4*H*N*D + 3*N*D + H + 2H per layer (Bhojanapalli et al., 2020): it grows with
N when D is fixed, and stays 4H^2 + 6H when D = H/N.
"""


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
    inner = config.intermediate_size
    projection = config.num_attention_heads * config.attention_head_size  # N*D
    layer_norm = 2 * h

    embeddings = (
        (config.vocab_size + config.max_position_embeddings + config.type_vocab_size) * h
        + layer_norm
    )
    attention_per_layer = (
        3 * (h * projection + projection)  # query, key, value
        + projection * h + h  # output projection
        + layer_norm
    )
    ffn_per_layer = h * inner + inner + inner * h + h + layer_norm
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
        counts["masked_lm"] = h * h + h + layer_norm + config.vocab_size
        counts["next_sentence"] = 2 * h + 2
        counts["total_with_pretraining_heads"] = (
            counts["total"] + counts["masked_lm"] + counts["next_sentence"]
        )
    return counts
