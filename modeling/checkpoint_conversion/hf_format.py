"""A Hugging Face BERT directory: config.json, the weights, vocab.txt.

Read: `model.safetensors` (or shards listed by `model.safetensors.index.json`)
through safetensors' NumPy API, so no torch is needed; `pytorch_model.bin`
(or its shards) only when torch is installed. Written: `config.json`,
`model.safetensors` (float32, metadata format "pt" as `save_pretrained`
writes it, which `from_pretrained` requires), `vocab.txt` and a
`tokenizer_config.json` that says the casing.
"""

import json
import os

import numpy as np
import tensorflow as tf
from absl import logging
from safetensors import numpy as safetensors_numpy

import outputs
from checkpoints.tf1_checkpoint import model_tensors
from modeling.checkpoint_conversion import hf_config, hf_names
from modeling.checkpoint_conversion.converted_checkpoint import ConvertedCheckpoint
from modeling.checkpoint_conversion.errors import ConversionError

CONFIG = "config.json"
VOCAB = "vocab.txt"
TOKENIZER_CONFIG = "tokenizer_config.json"
SAFETENSORS = "model.safetensors"
PYTORCH = "pytorch_model.bin"
INDEX_SUFFIX = ".index.json"
# What to read, in this order of preference.
WEIGHT_FILES = (SAFETENSORS, SAFETENSORS + INDEX_SUFFIX, PYTORCH, PYTORCH + INDEX_SUFFIX)
UNREAD_WEIGHT_FILES = ("tf_model.h5", "flax_model.msgpack")  # Named when they are all there is.
OUTPUT_FILES = (CONFIG, SAFETENSORS, VOCAB, TOKENIZER_CONFIG)


def read_huggingface(path):
    """Reads a HF BERT directory (or its weights file) as a `ConvertedCheckpoint`.

    Raises:
      ConversionError: naming the file, for a missing file, unreadable
        weights, or a config or weight name that does not map.
    """
    if tf.io.gfile.isdir(path):
        directory, weights = path, None
    elif tf.io.gfile.exists(path):
        directory, weights = os.path.dirname(path) or ".", path
    else:
        raise ConversionError("Hugging Face model %s not found: expected a directory with %s, one of %s, and %s."
                              % (path, CONFIG, " / ".join(WEIGHT_FILES), VOCAB))
    config_file = _required(directory, CONFIG)
    config = hf_config.bert_config_from_hf(_read_json(config_file), config_file)
    if weights is None:
        found = [name for name in WEIGHT_FILES if tf.io.gfile.exists(os.path.join(directory, name))]
        if not found:
            others = [n for n in UNREAD_WEIGHT_FILES if tf.io.gfile.exists(os.path.join(directory, n))]
            raise ConversionError("%s has no weights this converter reads: expected one of %s%s." % (
                directory, ", ".join(WEIGHT_FILES), " (%s is not read)" % ", ".join(others) if others else ""))
        weights = os.path.join(directory, found[0])
    hf_tensors = read_weights(weights)
    tensors, sources = hf_names.hf_to_original(hf_tensors, config.num_hidden_layers, weights)
    vocab_file = _required(directory, VOCAB)
    _log_casing(directory)
    return ConvertedCheckpoint(config, tensors, sources, vocab_file, config_file, weights)


def read_weights(path):
    """{HF name: NumPy array} of a safetensors or PyTorch weights file, or of the shards an index lists."""
    if path.endswith(INDEX_SUFFIX):
        index = _read_json(path)
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict):
            raise ConversionError("%s: expected a JSON object with a `weight_map` {name: shard file}." % path)
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            for name, value in read_weights(os.path.join(os.path.dirname(path), shard)).items():
                if name in tensors:
                    raise ConversionError("%s: `%s` is in more than one shard." % (path, name))
                tensors[name] = value
        return tensors
    if not tf.io.gfile.exists(path):
        raise ConversionError("Weights file %s not found." % path)
    if path.endswith(".bin"):
        return _read_pytorch(path)
    try:
        return safetensors_numpy.load_file(path)
    except Exception as error:  # safetensors raises its own error types for a damaged file.
        raise ConversionError("%s is not a readable safetensors file: %s" % (path, error)) from None


def _read_pytorch(path):
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ConversionError(
            "%s is a PyTorch file, and reading it needs torch, which is not installed: `pip install torch`, or give "
            "a directory with %s (`save_pretrained(..., safe_serialization=True)` writes one)."
            % (path, SAFETENSORS)) from None
    state = torch.load(path, map_location="cpu", weights_only=True)
    tensors = {}
    for name, value in state.items():
        value = value.detach()
        if value.is_floating_point() and value.dtype != torch.float64:
            value = value.to(torch.float32)  # NumPy has no bfloat16: exact for float16 and bfloat16.
        tensors[name] = value.numpy()
    return tensors


def write_huggingface(model, absent, config, vocab_file, output_dir, do_lower_case):
    """Writes the model's converted weights (those not `absent`) as a HF BERT directory.

    Returns:
      The paths written.
    """
    present = {name: value for name, value in model_tensors(model).items() if name not in absent}
    hf_tensors, architecture = hf_names.original_to_hf(present, config.num_hidden_layers)
    values = hf_config.hf_config_from_bert(config, architecture)
    tf.io.gfile.makedirs(output_dir)
    paths = [os.path.join(output_dir, name) for name in OUTPUT_FILES]
    config_path, weights_path, vocab_path, tokenizer_path = paths
    with outputs.writing(weights_path) as temporary:
        safetensors_numpy.save_file({n: np.ascontiguousarray(v, np.float32) for n, v in hf_tensors.items()},
                                    temporary, metadata={"format": "pt"})
    outputs.write_text(config_path, json.dumps(values, indent=2) + "\n")
    outputs.write_text(tokenizer_path, json.dumps(
        {"tokenizer_class": "BertTokenizer", "do_lower_case": do_lower_case,
         "model_max_length": config.max_position_embeddings}, indent=2) + "\n")
    with outputs.writing(vocab_path) as temporary:
        tf.io.gfile.copy(vocab_file, temporary, overwrite=True)
    logging.info("Wrote %s (%s, %d tensors), %s, %s and %s.", weights_path, architecture, len(hf_tensors),
                 config_path, vocab_path, tokenizer_path)
    return paths


def _required(directory, name):
    path = os.path.join(directory, name)
    if not tf.io.gfile.exists(path):
        raise ConversionError("%s not found: a Hugging Face BERT directory needs %s." % (path, name))
    return path


def _read_json(path):
    with tf.io.gfile.GFile(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ConversionError("%s is not valid JSON (line %d: %s)." % (path, error.lineno, error.msg)) from None


def _log_casing(directory):
    """Tells the --do_lower_case the tokenizer was saved with: the original scripts need it given."""
    path = os.path.join(directory, TOKENIZER_CONFIG)
    if tf.io.gfile.exists(path):
        casing = _read_json(path).get("do_lower_case")
        if casing is not None:
            logging.info("%s says do_lower_case=%s: pass --do_lower_case=%s to the scripts that tokenize.",
                         path, casing, str(casing).lower())
