"""Our layout, the original BERT's: `bert_model.ckpt` (TF1 names), `bert_config.json`, `vocab.txt`.

Read: any checkpoint `modeling.load_checkpoint` reads (released, original
training or ours, frozen variables saved by seed regenerated), training state
skipped. Written: `modeling.save_checkpoint` of the filled model, leaving
out the optional groups the input did not have.
"""

import os

import tensorflow as tf
from absl import logging

import outputs
from checkpoints.tf1_checkpoint import is_training_state, resolve_checkpoint, save_checkpoint
from freezing import seeded_values
from modeling.bert_config import BertConfig
from modeling.checkpoint_conversion.converted_checkpoint import ConvertedCheckpoint
from modeling.checkpoint_conversion.errors import ConversionError

CHECKPOINT = "bert_model.ckpt"
CONFIG = "bert_config.json"
VOCAB = "vocab.txt"
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"  # What tf.train.Checkpoint (TF2, object-based) writes.
OUTPUT_FILES = (CHECKPOINT + ".index", CHECKPOINT + ".data-00000-of-00001", CONFIG, VOCAB)


def beside(path, name, flag, given):
    """`given` (a flag's value) or the file `name` in the checkpoint's directory.

    Raises:
      ConversionError: naming both, when neither is there.
    """
    if given:
        if not tf.io.gfile.exists(given):
            raise ConversionError("%s=%s not found." % (flag, given))
        return given
    directory = path if tf.io.gfile.isdir(path) else os.path.dirname(path)
    candidate = os.path.join(directory, name)
    if not tf.io.gfile.exists(candidate):
        raise ConversionError("%s not found beside the checkpoint %s; give %s." % (candidate, path, flag))
    return candidate


def checkpoint_prefix(path):
    """The checkpoint at `path`: a prefix, a directory's latest, or a directory's bert_model.ckpt.

    A released BERT directory has bert_model.ckpt and no `checkpoint` state
    file, which tf.train.latest_checkpoint needs; so has what we write.
    """
    if tf.io.gfile.isdir(path) and tf.train.latest_checkpoint(path) is None:
        released = os.path.join(path, CHECKPOINT)
        if tf.io.gfile.exists(released + ".index"):
            return released
    try:
        return resolve_checkpoint(path)
    except ValueError as error:
        raise ConversionError(str(error)) from None


def read_config(path, config_file):
    """The `BertConfig` of a checkpoint: --bert_config_file, or bert_config.json beside it."""
    config_file = beside(path, CONFIG, "--bert_config_file", config_file)
    try:
        return BertConfig.from_json_file(config_file), config_file
    except ValueError as error:
        raise ConversionError(str(error)) from None


def read_original(path, config_file=None, vocab_file=None):
    """Reads a checkpoint in the original layout as a `ConvertedCheckpoint`.

    Args:
      path: a checkpoint prefix or a directory holding one.
      config_file, vocab_file: default bert_config.json and vocab.txt beside it.
    """
    config, config_file = read_config(path, config_file)
    vocab_file = beside(path, VOCAB, "--vocab_file", vocab_file)
    prefix = checkpoint_prefix(path)
    reader = tf.train.load_checkpoint(prefix)
    names = sorted(reader.get_variable_to_shape_map())
    if OBJECT_GRAPH in names and not any(n.startswith("bert/") for n in names):
        raise ConversionError("%s is an object-based checkpoint with no bert/ variables, not the original layout; "
                              "for Model Garden's, give --input_format=model_garden." % prefix)
    training_state = [n for n in names if is_training_state(n)]
    if training_state:
        logging.info("%s: %d optimizer/step entries are training state, not converted.", prefix, len(training_state))
    tensors = {n: reader.get_tensor(n) for n in names if not is_training_state(n)}
    manifest = seeded_values.read_manifest(prefix)
    for name in (manifest or {}).get("variables", {}):
        if name not in tensors:  # Frozen and saved by seed (--save_frozen=seed).
            tensors[name] = seeded_values.regenerate(manifest, name, prefix)
    sources = {name: "%s: %s" % (prefix, name) for name in tensors}
    return ConvertedCheckpoint(config, tensors, sources, vocab_file, config_file, prefix)


def write_original(model, absent, config, vocab_file, output_dir):
    """Writes bert_model.ckpt (the optional groups in `absent` left out), bert_config.json, vocab.txt.

    Returns:
      The paths written.
    """
    tf.io.gfile.makedirs(output_dir)
    prefix = save_checkpoint(model, os.path.join(output_dir, CHECKPOINT), omit=absent)
    config_path = outputs.write_text(os.path.join(output_dir, CONFIG), config.to_json_string())
    vocab_path = os.path.join(output_dir, VOCAB)
    with outputs.writing(vocab_path) as temporary:
        tf.io.gfile.copy(vocab_file, temporary, overwrite=True)
    logging.info("Wrote %s (%d variables), %s and %s.", prefix, len(tf.train.list_variables(prefix)),
                 config_path, vocab_path)
    return [os.path.join(output_dir, name) for name in OUTPUT_FILES]
