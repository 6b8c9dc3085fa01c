"""Finding the record at fault when reading TFRecord files fails.

A truncated or corrupted file surfaces as a DataLossError, and a tf.Example
whose feature has another length than the rest as an InvalidArgumentError of
the parse op, from deep inside a shuffled, interleaved input pipeline, naming
neither the file nor the record. Reading the files again, one at a time and
in order, finds both; it runs only after such an error.
"""

import math
import re

from google.protobuf import message as protobuf_message
import tensorflow as tf

# What tf.io.parse_example says of a feature of another length than its FixedLenFeature's.
# What tf.io.parse_example says of a feature of another length than its FixedLenFeature's; what
# tf.io.parse_single_example says (no lengths).
_MISFIT = re.compile(r"Key: (\w+), Index: \d+\.\s+Number of \w+ values != expected\.\s+"
                     r"Values size: (\d+) but output shape: \[([\d, ]*)\]")
_MISFIT_SINGLE = re.compile(r"Key: (\w+)\.\s+Can't parse serialized Example")


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


def is_misfit(error):
    """Whether an InvalidArgumentError is the parse op's: a feature of another length than expected."""
    return bool(_MISFIT.search(error.message) or _MISFIT_SINGLE.search(error.message))


def _values(record, key):
    """The values of the feature `key` of a serialized tf.Example ([] without it); None if not a tf.Example."""
    try:
        feature = tf.train.Example.FromString(record).features.feature.get(key)
    except protobuf_message.DecodeError:
        return None
    return (feature.int64_list.value or feature.float_list.value or feature.bytes_list.value
            if feature is not None else [])


def find_misfit_record(files, key, length=None):
    """The first tf.Example whose feature `key` does not hold `length` values (default: as many as the first
    record's): (file, number from 1, its length or None if it is not a tf.Example, the length expected), or None."""
    for path in files:
        for number, record in enumerate(tf.data.TFRecordDataset(path), 1):
            values = _values(record.numpy(), key)
            if length is None and values is not None:
                length = len(values)
            if values is None or len(values) != length:
                return path, number, None if values is None else len(values), length
    return None


def describe_misfit(files, error):
    """One sentence for the parse op's InvalidArgumentError (is_misfit) raised while reading `files`."""
    batched = _MISFIT.search(error.message)
    if batched:
        key, size, shape = batched.groups()
        length = math.prod(int(dimension) for dimension in shape.replace(",", " ").split())
    else:
        key, size, length = _MISFIT_SINGLE.search(error.message).group(1), None, None
    found = find_misfit_record(files, key, length)
    if found is None:
        return "Reading the input failed: a record's %s cannot be parsed%s" % (
            key, " (%s values where %d are expected)" % (size, length) if batched else "")
    path, number, actual, length = found
    if actual is None:
        return "Input file %s: record %d (counting from 1) is not a tf.train.Example; recreate the file" % (
            path, number)
    return ("Input file %s: record %d (counting from 1) has %s of length %d where %d is expected (the length the "
            "flags give, checked on the file's first record): the file mixes records made with different settings; "
            "recreate it" % (path, number, key, actual, length))


def describe_input_error(files, error):
    """One sentence for an error of reading `files` that a record is to blame for (a damaged record, a record of
    another length), or None for any other error."""
    if isinstance(error, tf.errors.DataLossError):
        return describe_damage(files, error)
    if isinstance(error, tf.errors.InvalidArgumentError) and is_misfit(error):
        return describe_misfit(files, error)
    return None
