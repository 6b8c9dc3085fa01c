"""`NmtConfig`: the encoder-decoder translation model's `nmt_config.json`.

Keys, as `--model_config_file` gives them (a `--preset` fills them first,
nmt/presets.py; the defaults below are transformer-base):

  vocab_size                    rows of the one embedding table shared by source,
                                target and output (from the vocabulary when left out)
  hidden_size                   d (512)
  num_encoder_layers            encoder layers (6)
  num_decoder_layers            decoder layers (6)
  num_attention_heads           h, in self- and cross-attention (8)
  head_size                     d_p; null: d / h, the standard rule
  intermediate_size             feed-forward width (2048)
  hidden_act                    feed-forward activation ("relu")
  hidden_dropout_prob           dropout on embeddings and sub-layer outputs (0.1)
  attention_probs_dropout_prob  dropout on attention probabilities (0.1)
  norm_first                    false: post-LayerNorm (the Transformer paper, the
                                presets); true: pre-LayerNorm, with a final
                                LayerNorm after each stack
  initializer                   "marian" (the default, and the presets'): the NMT
                                toolkit's scheme Bogoychev (2021) trained with: weight
                                matrices Glorot uniform, the embedding table
                                U(±sqrt(3/d)) (entries of unit variance after the
                                sqrt(d) multiplier), biases and LayerNorm betas zeros,
                                gammas ones (layers/initializers.py); "bert": BERT's
                                truncated normal of initializer_range for every matrix
                                (this family's runs before the toolkit scheme);
                                "glorot": Glorot normal matrices, normal(0, d^-1/2)
                                embeddings
  initializer_range             stddev for initializer "bert" (0.02)

Positions are sinusoidal (any length, no parameters); embeddings are scaled by
sqrt(d) before the positions are added.
"""

import dataclasses
from typing import Optional

from layers.json_config import JsonConfig

INITIALIZERS = ("marian", "bert", "glorot")


@dataclasses.dataclass(frozen=True)
class NmtConfig(JsonConfig):
    """Configuration of a `TransformerNmt` (see the module docstring for the keys)."""

    FLAG = "--model_config_file"

    vocab_size: Optional[int] = None
    hidden_size: int = 512
    num_encoder_layers: int = 6
    num_decoder_layers: int = 6
    num_attention_heads: int = 8
    head_size: Optional[int] = None
    intermediate_size: int = 2048
    hidden_act: str = "relu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    norm_first: bool = False
    initializer: str = "marian"
    initializer_range: float = 0.02

    def __post_init__(self):
        self.validate()

    @property
    def num_layers(self):
        """{stack: layers}, as the freezing selectors count them."""
        return {"encoder": self.num_encoder_layers, "decoder": self.num_decoder_layers}

    def validate(self):
        """Raises ValueError naming the offending key and value (vocab_size may be unset)."""
        owner = "NmtConfig"
        self.check_common_keys(("hidden_size", "num_encoder_layers", "num_decoder_layers", "num_attention_heads",
                                "intermediate_size"))
        if not isinstance(self.norm_first, bool):
            raise ValueError("%s: `norm_first` = %r must be true or false." % (owner, self.norm_first))
        if self.initializer not in INITIALIZERS:
            raise ValueError("%s: `initializer` = %r; expected one of %s."
                             % (owner, self.initializer, ", ".join(INITIALIZERS)))
        self.check_initializer_range()
        if self.hidden_size % 2:
            raise ValueError("%s: hidden_size %d must be even (sinusoidal positions)." % (owner, self.hidden_size))
        self.check_head_size()
