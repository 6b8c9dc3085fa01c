"""SQuAD examples -> windowed model features, TFRecord files and tf.data.

Each example becomes one feature per window ("doc span") of its WordPiece
tokens:

  [CLS] query [SEP] doc tokens of the window [SEP] [PAD]...

  - the query is cut to `max_query_length` tokens; a window holds
    `max_seq_length - len(query) - 3` doc tokens and the next window starts
    `doc_stride` tokens later;
  - a token seen by several windows counts only in its "max context" window
    (the one where min(left, right) context is largest);
  - training targets are token positions in the window; impossible questions
    and answers not wholly inside the window point at [CLS]: (0, 0).

The conversion is Model Garden's `squad_lib.convert_examples_to_features`
(the original's algorithm, including the answer-span refinement), driven with
a tokenizer with `tokenization.FullTokenizer`'s `tokenize(text)` and
`convert_tokens_to_ids(tokens)` (run_squad.py passes `CachedFullTokenizer`,
the same tokens with each distinct word tokenized once: this conversion
calls `tokenize` once per word of every context).

TFRecord features have the original run_squad's names: unique_ids,
input_ids, input_mask, segment_ids and, for training, start_positions,
end_positions (and is_impossible, written but not read, as the original).
"""

import collections

import tensorflow as tf
from official.nlp.data import squad_lib

import outputs

InputFeatures = squad_lib.InputFeatures

# The original's record shuffle buffer for training.
SHUFFLE_BUFFER = 100


def check_lengths(max_seq_length, doc_stride, max_query_length):
    """Validates the window sizes (else the windowing never terminates).

    Raises:
      ValueError: unless max_seq_length > max_query_length + 3 (room for
        [CLS], [SEP], [SEP] and one doc token) and doc_stride > 0.
    """
    if max_seq_length <= max_query_length + 3:
        raise ValueError(
            "The max_seq_length (%d) must be greater than max_query_length (%d) + 3"
            % (max_seq_length, max_query_length))
    if doc_stride <= 0:
        raise ValueError("doc_stride must be positive, got %d" % doc_stride)


def _run_conversion(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                    is_training, output_fn):
    """Runs squad_lib's conversion, calling output_fn(feature) per feature."""
    check_lengths(max_seq_length, doc_stride, max_query_length)

    def emit(feature, is_padding=False):
        # batch_size=1 below means squad_lib never emits padding features.
        assert not is_padding
        # squad_lib drops the fields XLNet needs in; BERT does not use them.
        feature.paragraph_mask = None
        feature.class_index = None
        if not is_training:
            # No labels at prediction time (squad_lib would say (0, 0) and
            # is_impossible=True for every window).
            feature.start_position = None
            feature.end_position = None
            feature.is_impossible = None
        output_fn(feature)

    return squad_lib.convert_examples_to_features(
        examples=examples,
        tokenizer=tokenizer,
        max_seq_length=max_seq_length,
        doc_stride=doc_stride,
        max_query_length=max_query_length,
        is_training=is_training,
        output_fn=emit,
        batch_size=1)


def convert_examples_to_features(examples, tokenizer, max_seq_length, doc_stride,
                                 max_query_length, is_training):
    """Converts examples to in-memory features (use for prediction).

    Args:
      examples: list of `SquadExample` (from `read_squad_examples`).
      tokenizer: `tokenization.FullTokenizer` (anything with `tokenize(str)`
        -> list of str and `convert_tokens_to_ids(list)` -> list of int).
      max_seq_length, doc_stride, max_query_length: int, as the flags.
      is_training: bool; True computes the targets (needs examples read with
        is_training=True).

    Returns:
      list of `InputFeatures`, windows in example order, with
        unique_id: int, 1000000000 + the feature's index;
        example_index: int, index of its example in `examples`;
        doc_span_index: int, index of the window within its example;
        tokens: list of str, the real tokens ([CLS] ... [SEP]);
        token_to_orig_map: {token position: doc word index}, doc tokens only;
        token_is_max_context: {token position: bool}, doc tokens only;
        input_ids, input_mask, segment_ids: list of int [max_seq_length];
        start_position, end_position: int token positions (training; 0 for
          [CLS]), None for prediction;
        is_impossible: bool (training), True iff the target is [CLS] (the
          question is impossible or its answer is not in this window);
          None for prediction.

    Raises:
      ValueError: see `check_lengths`.
    """
    features = []
    _run_conversion(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                    is_training, features.append)
    return features


class FeatureWriter(object):
    """Writes `InputFeatures` to a TFRecord file of tf.train.Examples.

    Use as a context manager, or call `close()`.
    """

    def __init__(self, filename, is_training):
        """Opens `filename` (any tf.io.gfile path) for writing."""
        self.filename = filename
        self.is_training = is_training
        self.num_features = 0
        self._writer = tf.io.TFRecordWriter(filename)

    def process_feature(self, feature):
        """Writes one feature (the original's name for `write`)."""
        self._writer.write(feature_to_example(feature, self.is_training).SerializeToString())
        self.num_features += 1

    write = process_feature

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *unused_exc_info):
        self.close()


def feature_to_example(feature, is_training):
    """`InputFeatures` -> tf.train.Example with the original's feature names."""

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    fields = collections.OrderedDict()
    fields["unique_ids"] = ints([feature.unique_id])
    fields["input_ids"] = ints(feature.input_ids)
    fields["input_mask"] = ints(feature.input_mask)
    fields["segment_ids"] = ints(feature.segment_ids)
    if is_training:
        fields["start_positions"] = ints([feature.start_position])
        fields["end_positions"] = ints([feature.end_position])
        fields["is_impossible"] = ints([int(bool(feature.is_impossible))])
    return tf.train.Example(features=tf.train.Features(feature=fields))


def write_features(examples, tokenizer, output_file, max_seq_length, doc_stride,
                   max_query_length, is_training):
    """Converts examples and streams the features to a TFRecord file.

    Unlike `convert_examples_to_features` this holds one feature at a time,
    which matters for the ~88k SQuAD training examples. `output_file`
    appears only once complete (outputs.writing).

    Returns:
      int, the number of features written.
    """
    # A TFRecord file cut short still reads as complete: publish it whole.
    with outputs.writing(output_file) as temporary, FeatureWriter(temporary, is_training) as writer:
        _run_conversion(examples, tokenizer, max_seq_length, doc_stride, max_query_length,
                        is_training, writer.process_feature)
    return writer.num_features


def feature_spec(max_seq_length, is_training):
    """The tf.Example schema for tf.io.parse_example (as the original's input_fn)."""
    seq = tf.io.FixedLenFeature([max_seq_length], tf.int64)
    spec = {
        "unique_ids": tf.io.FixedLenFeature([], tf.int64),
        "input_ids": seq,
        "input_mask": seq,
        "segment_ids": seq,
    }
    if is_training:
        spec["start_positions"] = tf.io.FixedLenFeature([], tf.int64)
        spec["end_positions"] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def _parse(serialized, spec):
    features = tf.io.parse_example(serialized, spec)
    # int32 on device, as the original does for TPUs; unique ids from
    # 1000000000 still fit for over a billion features.
    return {name: tf.cast(value, tf.int32) for name, value in features.items()}


def make_dataset(input_files, max_seq_length, is_training, batch_size, drop_remainder,
                 shuffle=None, seed=None, repeat=None, shuffle_buffer_size=SHUFFLE_BUFFER):
    """Reads a TFRecord file written by `FeatureWriter` as batches.

    Args:
      input_files: str or list of str, TFRecord paths, read in order.
      max_seq_length: int, as when writing.
      is_training: bool; adds start_positions / end_positions.
      batch_size: int.
      drop_remainder: bool, drop the last partial batch (needed for fixed
        shapes on TPU; leave False for prediction so that no feature is lost).
      shuffle: bool, shuffle records in a buffer; defaults to is_training.
      seed: int or None, the shuffle seed: the same seed gives the same order.
      repeat: bool, repeat forever; defaults to is_training (the original).
      shuffle_buffer_size: int, records in the shuffle buffer.

    Returns:
      tf.data.Dataset of dicts {name: int32 Tensor}: unique_ids [batch],
      input_ids, input_mask, segment_ids [batch, max_seq_length] and, when
      training, start_positions, end_positions [batch].
    """
    shuffle = is_training if shuffle is None else shuffle
    repeat = is_training if repeat is None else repeat
    dataset = tf.data.TFRecordDataset(input_files)
    if repeat:
        dataset = dataset.repeat()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    spec = feature_spec(max_seq_length, is_training)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    dataset = dataset.map(lambda records: _parse(records, spec),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def features_to_dataset(features, batch_size):
    """In-memory prediction features as batches, without a TFRecord file.

    Returns:
      tf.data.Dataset of dicts {unique_ids [batch], input_ids, input_mask,
      segment_ids [batch, max_seq_length]}, int32, in feature order; the last
      batch may be partial.
    """
    columns = {
        "unique_ids": [f.unique_id for f in features],
        "input_ids": [f.input_ids for f in features],
        "input_mask": [f.input_mask for f in features],
        "segment_ids": [f.segment_ids for f in features],
    }
    tensors = {name: tf.constant(values, dtype=tf.int32) for name, values in columns.items()}
    return tf.data.Dataset.from_tensor_slices(tensors).batch(batch_size)
