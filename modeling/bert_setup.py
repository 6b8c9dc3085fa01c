"""BERT's config flags: --bert_config_file, with --head_size applied (its freezer and records: modeling/family.py)."""

import dataclasses

import modeling
from options import option
from training.model_options import HeadSizeOptions, with_head_size


@dataclasses.dataclass(kw_only=True)
class BertConfigOptions(HeadSizeOptions):
    """The model of a BERT entry point: the original's config file, and our head size."""

    bert_config_file: str = option(
        help="The config json file corresponding to the pre-trained BERT model (the "
        "architecture; its head_size key is honoured).", path="file")


def effective_config(options):
    """The BERT config of the run: --bert_config_file, with --head_size applied.

    Args:
      options: BertConfigOptions with a max_seq_length.

    Raises:
      ValueError: when max_seq_length exceeds max_position_embeddings (the
        original's check and message).
    """
    return with_head_size(modeling.BertConfig.from_json_file(options.bert_config_file), options,
                          "Cannot use sequence length %d because the BERT model was only trained up "
                          "to sequence length %d (--max_seq_length vs max_position_embeddings).")

