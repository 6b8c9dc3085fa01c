"""Writes a SavedModel as TF Serving wants it: `<export_dir>/<version>/`.

TF Serving watches `export_dir` and serves the highest numbered version, so
each export goes to a new integer subdirectory (1, 2, ...), written under a
temporary name first and renamed when complete: a server never sees half a
model. Its variables' resources and functions carry a tag of the export
(serving/export_names.py), so that several exports can share one session.
"""

import logging as std_logging
import os
import re

import tensorflow as tf
from absl import logging

from serving import export_names

_VERSION = re.compile(r"^\d+$")


class ModelReference:
    """Holds a Keras model out of a SavedModel's object graph.

    A tf.Module that keeps the model itself makes tf.saved_model.save trace
    and serialise every Keras layer (slow, and nothing a server uses). The
    signatures only need the variables, which the module tracks as a list.
    """

    def __init__(self, model):
        self.model = model


def versions(export_dir):
    """Sorted ints: the version subdirectories already in export_dir."""
    if not tf.io.gfile.isdir(export_dir):
        return []
    return sorted(int(name.rstrip("/")) for name in tf.io.gfile.listdir(export_dir)
                  if _VERSION.match(name.rstrip("/")))


def save(module, export_dir, signatures, version=None):
    """Saves `module` with `signatures` to `<export_dir>/<version>`; returns that path.

    Args:
      module: tf.Module; what it references (model variables, assets,
        tokenizer resources) is saved.
      export_dir: str, created if missing.
      signatures: {name: tf.function or concrete function}.
      version: int, or None for one more than the highest there (1 at first).

    Raises:
      ValueError: if `<export_dir>/<version>` exists already, or version < 1.
    """
    if version is None:
        version = (versions(export_dir) or [0])[-1] + 1
    if version < 1:
        raise ValueError("--export_version must be a positive integer, got %d." % version)
    path = os.path.join(export_dir, str(version))
    if tf.io.gfile.exists(path):
        raise ValueError("%s exists already: TF Serving versions are never overwritten; give another "
                         "--export_version or leave it unset for the next one." % path)
    temporary = os.path.join(export_dir, ".tmp-%d" % version)
    if tf.io.gfile.exists(temporary):
        tf.io.gfile.rmtree(temporary)
    tf.io.gfile.makedirs(export_dir)
    # tf.saved_model.save sets the "absl" logger to WARNING, which would hide
    # every later INFO line of the run (and of other code in the process).
    absl_logger = std_logging.getLogger("absl")
    level = absl_logger.level
    try:
        tf.saved_model.save(module, temporary, signatures=signatures)
    finally:
        absl_logger.setLevel(level)
    # Two exports can then share one TensorFlow 1 session without sharing weights (serving/export_names.py).
    export_names.make_unique(temporary)
    tf.io.gfile.rename(temporary, path)
    logging.info("Exported SavedModel to %s (signatures: %s).", path, ", ".join(sorted(signatures)))
    return path
