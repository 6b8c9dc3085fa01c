"""The model options every family shares: --head_size, declared once, and the run's Freezer.

A family's entry point reads its config file (BERT's --bert_config_file, the
language model's --lm_config_file, the translation model's --model_config_file),
then `with_head_size` applies --head_size to it the same way for every family.
"""

import dataclasses
from typing import Optional

from checkpoints import init_checkpoint
from freezing import Freezer
from options import Options, option


@dataclasses.dataclass(kw_only=True)
class HeadSizeOptions(Options):
    """The head size d_p of every attention layer, independent of hidden_size / num_attention_heads."""

    head_size: Optional[int] = option(
        None, "Attention head size of every attention layer; overrides the config's head_size.", minimum=1, new=True)


def with_head_size(config, options, too_long=None):
    """Any family's model config of the run: `config` with --head_size applied and, when the family has
    learned positions (`too_long` given), --max_seq_length checked against max_position_embeddings.

    Args:
      options: with head_size and max_seq_length.
      too_long: the message, formatted with (max_seq_length, max_position_embeddings).
    """
    if options.head_size is not None:
        config = config.replace(head_size=options.head_size)
    if too_long and options.max_seq_length > config.max_position_embeddings:
        raise ValueError(too_long % (options.max_seq_length, config.max_position_embeddings))
    return config


def make_freezer(options, groups, num_layers, initializer_of):
    """The run's Freezer over a model family's groups; bad selectors fail here, before any model.

    --init_checkpoint, which --freeze and --reinit act on, is checked here too.
    """
    if options.init_checkpoint:
        init_checkpoint.check(options.init_checkpoint)
    return Freezer(options, groups, num_layers, initializer_of)
