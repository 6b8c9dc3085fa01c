"""`LmConfig`: the decoder-only Transformer language model's `lm_config.json`.

Keys, as `--lm_config_file` gives them (defaults: the `lm1b_paper` model of
Bhojanapalli et al. (2020), a 6-layer tensor2tensor-style language model):

  vocab_size                    rows of the embedding table (from the vocabulary
                                when the file leaves it out)
  hidden_size                   d, width of every layer's output (256)
  num_hidden_layers             layers (6)
  num_attention_heads           h (8)
  head_size                     d_p; null: d / h, the standard rule (32)
  intermediate_size             feed-forward width (1024)
  hidden_act                    feed-forward activation ("relu", as tensor2tensor)
  hidden_dropout_prob           dropout on embeddings and sub-layer outputs (0.1)
  attention_probs_dropout_prob  dropout on attention probabilities (0.1)
  max_position_embeddings       longest input, learned positions (256)
  tie_embeddings                output layer = transposed input embeddings (true)
  initializer                   "bert" (the default): BERT's truncated normal of
                                initializer_range for every matrix, as paper 1's
                                figures run; "marian": the NMT toolkit's scheme, as
                                freezing_lm's rows run (Bogoychev (2021) trained with
                                it): Glorot uniform matrices, word and position tables
                                U(±sqrt(3/d)) (the toolkit with trainable positions:
                                no sqrt(d) multiplier), zero biases
                                (layers/initializers.py)
  initializer_range             stddev of the truncated-normal initializer (0.02)

Unknown keys are named in a warning; one within two edits of a known key is
an error ("did you mean head_size?"), as for `BertConfig`.
"""

import dataclasses
from typing import Optional

from layers.initializers import TOOLKIT
from layers.json_config import JsonConfig

INITIALIZERS = ("bert", TOOLKIT)


@dataclasses.dataclass(frozen=True)
class LmConfig(JsonConfig):
    """Configuration of a `TransformerLm` (see the module docstring for the keys)."""

    FLAG = "--lm_config_file"

    vocab_size: Optional[int] = None
    hidden_size: int = 256
    num_hidden_layers: int = 6
    num_attention_heads: int = 8
    head_size: Optional[int] = 32
    intermediate_size: int = 1024
    hidden_act: str = "relu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 256
    tie_embeddings: bool = True
    initializer: str = "bert"
    initializer_range: float = 0.02

    def __post_init__(self):
        self.validate()

    def validate(self):
        """Raises ValueError naming the offending key and value (vocab_size may be unset)."""
        self.check_common_keys(("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                                "max_position_embeddings"))
        if not isinstance(self.tie_embeddings, bool):
            raise ValueError("LmConfig: `tie_embeddings` = %r must be true or false." % (self.tie_embeddings,))
        if self.initializer not in INITIALIZERS:
            raise ValueError("LmConfig: `initializer` = %r; expected one of %s."
                             % (self.initializer, ", ".join(INITIALIZERS)))
        self.check_initializer_range()
        self.check_head_size()
