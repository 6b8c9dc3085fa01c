"""Hugging Face `transformers` BERT weight names <-> the original BERT names.

HF's BertModel names its weights after the original TF ones, with dots:
`encoder.layer.3.attention.self.query.weight` is
`bert/encoder/layer_3/attention/self/query/kernel`. The differences:

  * Linear weights are [out, in] (torch's nn.Linear); the original kernels
    are [in, out]: transposed. Embedding tables are [rows, H] in both.
  * LayerNorm is `weight`/`bias` (files of older versions: `gamma`/`beta`).
  * The encoder's names carry a `bert.` prefix in BertForPreTraining and the
    other task models, and none in a plain BertModel (sentence-transformers).
    The heads are `cls.` in both.
  * The MLM decoder `cls.predictions.decoder.weight` is tied to the word
    embeddings and its bias to `cls.predictions.bias`, as in the original,
    which stores neither: they are checked equal and skipped (safetensors
    files usually leave them out; where only the tied copy was saved, it is
    taken as the weight).
  * `cls.seq_relationship.weight` is [2, H], which is the original
    `output_weights` layout already: not transposed.
  * HF's index buffers (`embeddings.position_ids`, `embeddings.token_type_ids`)
    are not weights: skipped, by that explicit list.
"""

import collections
import re

import numpy as np
from absl import logging

from modeling.checkpoint_conversion.errors import ConversionError

PREFIX = "bert."
ENCODER_PARTS = ("embeddings.", "encoder.", "pooler.")  # The encoder's names without the prefix.
BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")
TIED = collections.OrderedDict(
    [
        ("cls.predictions.decoder.weight", "embeddings.word_embeddings.weight"),
        ("cls.predictions.decoder.bias", "cls.predictions.bias"),
    ]
)

Entry = collections.namedtuple("Entry", ["hf", "original", "transpose"])

_EMBEDDINGS = [
    ("embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", False),
    ("embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", False),
    ("embeddings.token_type_embeddings.weight", "bert/embeddings/token_type_embeddings", False),
    ("embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", False),
    ("embeddings.LayerNorm.bias", "bert/embeddings/LayerNorm/beta", False),
]
# Under encoder.layer.<i>. / bert/encoder/layer_<i>/.
_LAYER = [
    ("attention.self.query.weight", "attention/self/query/kernel", True),
    ("attention.self.query.bias", "attention/self/query/bias", False),
    ("attention.self.key.weight", "attention/self/key/kernel", True),
    ("attention.self.key.bias", "attention/self/key/bias", False),
    ("attention.self.value.weight", "attention/self/value/kernel", True),
    ("attention.self.value.bias", "attention/self/value/bias", False),
    ("attention.output.dense.weight", "attention/output/dense/kernel", True),
    ("attention.output.dense.bias", "attention/output/dense/bias", False),
    ("attention.output.LayerNorm.weight", "attention/output/LayerNorm/gamma", False),
    ("attention.output.LayerNorm.bias", "attention/output/LayerNorm/beta", False),
    ("intermediate.dense.weight", "intermediate/dense/kernel", True),
    ("intermediate.dense.bias", "intermediate/dense/bias", False),
    ("output.dense.weight", "output/dense/kernel", True),
    ("output.dense.bias", "output/dense/bias", False),
    ("output.LayerNorm.weight", "output/LayerNorm/gamma", False),
    ("output.LayerNorm.bias", "output/LayerNorm/beta", False),
]
_POOLER = [
    ("pooler.dense.weight", "bert/pooler/dense/kernel", True),
    ("pooler.dense.bias", "bert/pooler/dense/bias", False),
]
_HEADS = [
    ("cls.predictions.transform.dense.weight", "cls/predictions/transform/dense/kernel", True),
    ("cls.predictions.transform.dense.bias", "cls/predictions/transform/dense/bias", False),
    ("cls.predictions.transform.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma", False),
    ("cls.predictions.transform.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", False),
    ("cls.predictions.bias", "cls/predictions/output_bias", False),
    ("cls.seq_relationship.weight", "cls/seq_relationship/output_weights", False),
    ("cls.seq_relationship.bias", "cls/seq_relationship/output_bias", False),
]
# HF's architecture for the heads a checkpoint has (masked LM, next sentence).
ARCHITECTURES = {
    (True, True): "BertForPreTraining",
    (True, False): "BertForMaskedLM",
    (False, True): "BertForNextSentencePrediction",
    (False, False): "BertModel",
}
_OLD_LAYER_NORM = re.compile(r"(LayerNorm)\.(gamma|beta)$")


def name_table(num_layers):
    """Every `Entry(hf, original, transpose)` of a model; HF names without the `bert.` prefix."""
    table = [Entry(*row) for row in _EMBEDDINGS]
    for i in range(num_layers):
        table += [Entry("encoder.layer.%d.%s" % (i, hf), "bert/encoder/layer_%d/%s" % (i, original), transpose)
                  for hf, original, transpose in _LAYER]
    return table + [Entry(*row) for row in _POOLER + _HEADS]


def hf_to_original(hf_tensors, num_layers, source):
    """Maps a HF state dict to the original names and layout.

    Args:
      hf_tensors: {HF name: NumPy array}, with or without the `bert.` prefix.
      num_layers: the config's num_hidden_layers.
      source: the file(s) read, for messages.

    Returns:
      (tensors, sources): {original name: array in the original layout} and
      {original name: "<source>: <HF name>"}.

    Raises:
      ConversionError: for names that map to nothing (listing them all), a
        prefix used by only part of the encoder, a name given twice, or a tied
        decoder weight that differs from what it is tied to.
    """
    names = [n for n in hf_tensors if _bare(n) not in BUFFERS]
    skipped = sorted(set(hf_tensors) - set(names))
    if skipped:
        logging.info("%s: skipped %s (index buffers of HF's BertEmbeddings, not weights).", source, ", ".join(skipped))
    prefixed = [n for n in names if n.startswith(PREFIX)]
    bare = [n for n in names if n.startswith(ENCODER_PARTS)]
    if prefixed and bare:
        raise ConversionError("%s mixes names with and without the `%s` prefix (e.g. `%s` and `%s`); expected one "
                              "model's state dict." % (source, PREFIX, prefixed[0], bare[0]))
    # Canonical name (no prefix, LayerNorm weight/bias) -> name in the file.
    canonical = {}
    for name in names:
        key = _OLD_LAYER_NORM.sub(lambda m: m.group(1) + (".weight" if m.group(2) == "gamma" else ".bias"),
                                  _bare(name))
        if key in canonical:
            raise ConversionError("%s holds `%s` twice: as `%s` and `%s`." % (source, key, canonical[key], name))
        canonical[key] = name

    for tied, target in TIED.items():
        if tied in canonical and target not in canonical:
            canonical[target] = canonical.pop(tied)  # Only the tied copy was saved: it is the weight.
        if tied in canonical:
            a, b = hf_tensors[canonical[tied]], hf_tensors[canonical[target]]
            if a.shape != b.shape or not np.array_equal(a, b):
                raise ConversionError(
                    "%s: `%s` differs from `%s`; expected them tied (equal), as BERT ties the masked-LM decoder "
                    "to the word embeddings and its bias to the output bias." % (source, canonical[tied],
                                                                                  canonical[target]))
    tensors, sources = {}, {}
    for entry in name_table(num_layers):
        if entry.hf in canonical:
            name = canonical.pop(entry.hf)
            value = hf_tensors[name]
            tensors[entry.original] = np.ascontiguousarray(value.T) if entry.transpose else value
            sources[entry.original] = "%s: %s%s" % (source, name, " (transposed)" if entry.transpose else "")
    for tied in TIED:
        canonical.pop(tied, None)  # Equal to a weight converted above.
    if canonical:
        unknown = sorted(canonical.values())
        raise ConversionError(
            "%s: %d weight(s) have no original BERT name: %s. Expected the weights of BertModel / BertForPreTraining "
            "with num_hidden_layers=%d (task heads such as `classifier` are not converted)."
            % (source, len(unknown), ", ".join(unknown), num_layers))
    return tensors, sources


def original_to_hf(tensors, num_layers):
    """Maps {original name: array} to HF names and layout.

    The encoder gets the `bert.` prefix when a `cls/` head is there (the
    task-model layout, which HF's BertModel also reads), none otherwise.

    Returns:
      (hf_tensors, architecture): {HF name: array} and HF's class name for it.
    """
    has_mlm = any(n.startswith("cls/predictions/") for n in tensors)
    has_nsp = any(n.startswith("cls/seq_relationship/") for n in tensors)
    prefix = PREFIX if has_mlm or has_nsp else ""
    by_original = {entry.original: entry for entry in name_table(num_layers)}
    unknown = sorted(n for n in tensors if n not in by_original)
    if unknown:
        raise ConversionError("No Hugging Face name for %s." % ", ".join(unknown))
    hf = collections.OrderedDict()
    for name, value in tensors.items():
        entry = by_original[name]
        hf_name = entry.hf if entry.hf.startswith("cls.") else prefix + entry.hf
        hf[hf_name] = np.ascontiguousarray(value.T) if entry.transpose else value
    return hf, ARCHITECTURES[has_mlm, has_nsp]


def _bare(name):
    return name[len(PREFIX):] if name.startswith(PREFIX) else name
