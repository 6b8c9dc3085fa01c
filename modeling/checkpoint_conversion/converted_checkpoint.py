"""`ConvertedCheckpoint`: any input format's weights under the original BERT names, checked by our model.

Every reader (Hugging Face, Model Garden, our own layout) produces one; every
writer starts from the `BertPretrainingModel` that `load_into_model` fills from
it. Going through the model checks each shape against the config, and the
writers then save exactly what our model holds (float32, bit for bit).

Groups of the original layout (by name prefix):
  the encoder, `bert/embeddings/` and `bert/encoder/`: required;
  the pooler, `bert/pooler/`: optional (sentence-embedding models drop it);
  the masked-LM head, `cls/predictions/`: optional;
  the next-sentence head, `cls/seq_relationship/`: optional.
An optional group is converted whole or not at all: a partial group is an error.
"""

import collections

import numpy as np
from absl import logging

from checkpoints.original_names import original_variables
from modeling.bert_model import build_model
from modeling.checkpoint_conversion.errors import ConversionError
from modeling.pretraining_model import BertPretrainingModel

# Optional groups: original name prefix -> what the group is, for messages.
OPTIONAL_GROUPS = collections.OrderedDict(
    [
        ("bert/pooler/", "pooler"),
        ("cls/predictions/", "masked-LM head"),
        ("cls/seq_relationship/", "next-sentence head"),
    ]
)

# Weight dtypes converted to float32, the dtype of our model: all exactly but float64.
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


class ConvertedCheckpoint(
    collections.namedtuple("ConvertedCheckpoint", ["config", "tensors", "sources", "vocab_file", "config_source",
                                                   "origin"])
):
    """Weights read from one input, under the original names.

    Fields:
      config: the `BertConfig`.
      tensors: {original name: NumPy array in the original layout}.
      sources: {original name: where it came from, "<file>: <name there>"}, for messages.
      vocab_file: path of the WordPiece vocabulary (one token a line).
      config_source: the file the config came from, for messages.
      origin: the weights file(s) read, for messages.
    """


def group_of(name):
    """The optional group prefix of an original name, or None for the encoder."""
    for prefix in OPTIONAL_GROUPS:
        if name.startswith(prefix):
            return prefix
    return None


def load_into_model(checkpoint):
    """Fills a `BertPretrainingModel` of the checkpoint's config with its tensors.

    Returns:
      (model, absent): the built model, and the sorted original names of the
      optional groups the checkpoint lacks (left at their initial values:
      writers omit them).

    Raises:
      ConversionError: naming the source and the variable, for a tensor with no
        place in the model (e.g. a task head), a shape that does not fit the
        config, a non-float tensor, missing encoder weights or a partial group.
    """
    model = build_model(BertPretrainingModel(checkpoint.config))
    targets = original_variables(model)
    unplaced = sorted(name for name in checkpoint.tensors if name not in targets)
    if unplaced:
        raise ConversionError(
            "%d variable(s) have no place in BERT (the encoder, its pooler and the cls/ pre-training heads; "
            "task heads are not converted): %s." % (len(unplaced), "; ".join(checkpoint.sources[n] for n in unplaced)))
    problems = []
    for name, value in checkpoint.tensors.items():
        expected = targets[name].shape
        if value.dtype.name not in FLOAT_DTYPES:
            problems.append("%s has dtype %s, expected a float" % (checkpoint.sources[name], value.dtype.name))
        elif tuple(value.shape) != expected:
            problems.append("%s is %s in the original layout (%s), expected %s"
                            % (checkpoint.sources[name], list(value.shape), name, list(expected)))
    if problems:
        raise ConversionError("%d variable(s) do not fit the config %s (%s): %s." % (
            len(problems), checkpoint.config_source, _config_summary(checkpoint.config), "; ".join(problems)))

    absent = sorted(name for name in targets if name not in checkpoint.tensors)
    missing = [name for name in absent if group_of(name) is None]
    if missing:
        raise ConversionError("%s lacks %d encoder variable(s) (original names): %s." % (
            checkpoint.origin, len(missing), ", ".join(missing)))
    for prefix in OPTIONAL_GROUPS:
        group = [name for name in targets if name.startswith(prefix)]
        lacking = [name for name in group if name in absent]
        if lacking and len(lacking) < len(group):
            present = [checkpoint.sources[name] for name in group if name not in absent]
            raise ConversionError("%s has part of the %s (%s): present %s; missing (original names) %s." % (
                checkpoint.origin, OPTIONAL_GROUPS[prefix], prefix, "; ".join(present), ", ".join(lacking)))

    for name, value in checkpoint.tensors.items():
        entry = targets[name]
        entry.variable.assign(entry.from_original(np.asarray(value, dtype=np.float32)))
    converted_dtypes = sorted({v.dtype.name for v in checkpoint.tensors.values()} - {"float32"})
    if converted_dtypes:
        logging.info("Converted %s weights to float32, the dtype of the model.", ", ".join(converted_dtypes))
    log_groups(checkpoint.origin, absent)
    return model, absent


def log_groups(source, absent):
    """Says which optional groups a checkpoint has and which it lacks."""
    absent_groups = [p for p in OPTIONAL_GROUPS if any(name.startswith(p) for name in absent)]
    for prefix in absent_groups:
        logging.warning("%s has no %s (%s): the output has none either.", source, OPTIONAL_GROUPS[prefix], prefix)
    present = [OPTIONAL_GROUPS[p] for p in OPTIONAL_GROUPS if p not in absent_groups]
    logging.info("%s: converting the encoder%s.", source, "".join(", the " + p for p in present))


def _config_summary(config):
    return "hidden_size=%d, num_attention_heads=%d, head_size=%s, intermediate_size=%d, vocab_size=%d, " \
           "max_position_embeddings=%d, type_vocab_size=%d" % (
               config.hidden_size, config.num_attention_heads, config.head_size, config.intermediate_size,
               config.vocab_size, config.max_position_embeddings, config.type_vocab_size)
