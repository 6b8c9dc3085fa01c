"""--init_checkpoint: checked before anything is built, loaded with errors that name it.

A checkpoint is an original-layout TF1 checkpoint (a prefix, or a directory
whose newest checkpoint is used), maybe with a seed manifest beside it
(--save_frozen=seed). TensorFlow reports a damaged index or a missing data
file as an OpError with a traceback; here it is a ValueError naming the flag.
"""

import tensorflow as tf

from checkpoints import tf1_checkpoint
from freezing import seeded_values


def _message(error):
    return error.message.strip().split("\n")[0]


def check(init_checkpoint):
    """Resolves --init_checkpoint and reads its index and manifest; returns the prefix.

    Raises:
      ValueError: naming --init_checkpoint and the path, when there is no
        readable checkpoint (or its seed manifest is damaged).
    """
    if not init_checkpoint:
        raise ValueError("--init_checkpoint is empty; give a checkpoint prefix or directory.")
    try:
        prefix = tf1_checkpoint.resolve_checkpoint(init_checkpoint)
    except ValueError as error:
        raise ValueError("--init_checkpoint: %s" % error) from None
    try:
        tf.train.list_variables(prefix)
    except tf.errors.OpError as error:
        raise ValueError("--init_checkpoint: cannot read checkpoint %s: %s" % (prefix, _message(error))) from None
    seeded_values.read_manifest(prefix)  # A damaged manifest is named there.
    return prefix


def variable_names(init_checkpoint):
    """The model variable names --init_checkpoint holds or regenerates (tf1_checkpoint)."""
    return tf1_checkpoint.checkpoint_variable_names(check(init_checkpoint))


def load(model, init_checkpoint):
    """tf1_checkpoint.load_checkpoint, with TensorFlow's read errors named; returns its LoadResult."""
    prefix = check(init_checkpoint)
    try:
        return tf1_checkpoint.load_checkpoint(model, prefix)
    except tf.errors.OpError as error:
        # A missing or damaged data file: TensorFlow's message names it.
        raise ValueError("--init_checkpoint: cannot read checkpoint %s: %s" % (prefix, _message(error))) from None
