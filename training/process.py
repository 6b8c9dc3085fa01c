"""The process of a training entry point: its output directory, seeds, dtype policy and strategy."""

import os
import socket

import tensorflow as tf
import tf_keras
from official.modeling import performance

import outputs
from training import distribution


def make_output_dir(output_dir):
    """Creates --output_dir and checks that files can be written there.

    Raises:
      ValueError: naming the flag, the path and the reason.
    """
    if tf.io.gfile.exists(output_dir) and not tf.io.gfile.isdir(output_dir):
        raise ValueError("--output_dir=%s is a file, not a directory." % output_dir)
    try:
        tf.io.gfile.makedirs(output_dir)
        # Named after this process: the workers of a cluster probe the same directory at once.
        probe = os.path.join(output_dir, ".write_test-%s-%d" % (socket.gethostname(), os.getpid()))
        outputs.write_text(probe, "")
        tf.io.gfile.remove(probe)
    except (tf.errors.OpError, OSError) as error:
        raise ValueError("--output_dir=%s is not a writable directory (%s)."
                         % (output_dir, getattr(error, "message", None) or error)) from None


def prepare(options):
    """Creates output_dir; seeds; dtype; the strategy.

    The effective config is written later, once training is accepted (the
    trainer writes the family's config records).

    Returns:
      The tf.distribute.Strategy.
    """
    make_output_dir(options.output_dir)
    tf_keras.utils.set_random_seed(options.random_seed)
    # Dropout draws from tf.random.Generator objects, whose state is checkpointed.
    tf_keras.backend.experimental.enable_tf_random_generator()
    performance.set_mixed_precision_policy(tf.as_dtype(options.dtype))
    return distribution.get_strategy(options)
