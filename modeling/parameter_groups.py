"""BERT's parameter groups (Bogoychev, 2021), by original checkpoint name.

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

from freezing.parameter_groups import ParameterGroups

BERT_PARAMETER_GROUPS = ParameterGroups([
    ("embeddings", r"^bert/embeddings/"),
    ("attention", r"^bert/encoder/layer_(?P<layer>\d+)/attention/"),
    ("ffn", r"^bert/encoder/layer_(?P<layer>\d+)/(intermediate|output)/"),
    ("pooler", r"^bert/pooler/"),
    ("heads", r"^cls/|^output_(weights|bias)$"),
])
