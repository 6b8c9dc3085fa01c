"""Finding the damaged record when reading TFRecord files fails.

A truncated or corrupted file surfaces as a DataLossError from deep inside a
shuffled, interleaved input pipeline, naming neither the file nor the record.
Reading the files again, one at a time and in order, finds both; it runs only
after such an error.
"""

import re

import tensorflow as tf


def find_damaged_record(files):
    """The first damaged record: (file, its number counting from 1, TensorFlow's message), or None."""
    for path in files:
        count = 0
        try:
            for _ in tf.data.TFRecordDataset(path):
                count += 1
        except tf.errors.DataLossError as error:
            return path, count + 1, _core(error)
    return None


def _core(error):
    """TensorFlow's own words, without the op and node decorations."""
    message = error.message.strip().splitlines()[-1]
    message = re.sub(r"\{\{[^}]*\}\}", "", message)
    return re.sub(r"\s*\[Op:[^\]]*\].*$", "", message).strip()


def describe_damage(files, error):
    """One sentence for a DataLossError raised while reading `files`."""
    found = find_damaged_record(files)
    if found is None:
        return "Reading the input failed (%s)" % _core(error)
    path, number, message = found
    return ("Input file %s is damaged: record %d (counting from 1) cannot be read (%s); recreate "
            "the file" % (path, number, message))
