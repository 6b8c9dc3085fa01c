"""Checks, before a run trains, that the files it will read later are there.

A dev or test file missing, or a directory where a file should be, would
otherwise be found only after training, when evaluation or prediction opens
it.
"""

import tensorflow as tf


def check_readable(path, why, flag=None):
    """Raises unless `path` is a file that opens and reads.

    Args:
      path: str, any tf.io.gfile path.
      why: str, the end of the message: who reads the file ("--do_predict reads it").
      flag: str or None; when given the message names `--<flag>=<path>`, else the path.

    Raises:
      FileNotFoundError: `path` does not exist.
      ValueError: `path` is a directory or cannot be read.
    """
    subject = "--%s=%s" % (flag, path) if flag else path
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError("%s does not exist; %s." % (subject, why))
    if tf.io.gfile.isdir(path):
        raise ValueError("%s is a directory, not a file; %s." % (subject, why))
    try:
        # GFile opens lazily: only a read tries the file.
        with tf.io.gfile.GFile(path, "rb") as f:
            f.read(1)
    except tf.errors.OpError as error:
        raise ValueError("%s cannot be read (%s); %s." % (subject, error.message, why)) from None
