"""`InputExample`s to model inputs, in memory or through a TFRecord file.

The conversion is the original run_classifier's: `[CLS] a [SEP] b [SEP]`
with segment ids 0 for `[CLS] a [SEP]` and 1 for `b [SEP]`, a pair truncated
one token at a time from the longer text (b on ties), a single text cut to
max_seq_length - 2, and zero padding. A classification label becomes its
index in `label_list`; with an empty `label_list` (regression, STS-B) it
becomes a float.

`tokenizer` is any object with `tokenize(text) -> list of str` and
`convert_tokens_to_ids(tokens) -> list of int` (`tokenization.FullTokenizer`, or
`tokenization.CachedFullTokenizer` as run_classifier.py uses: the same tokens faster).
"""

import dataclasses

import tensorflow as tf
from absl import logging

import outputs
import tokenization

# The original logs this many examples, so that a wrong vocab or casing shows
# up before a long run.
_NUM_LOGGED_EXAMPLES = 5


@dataclasses.dataclass
class InputFeatures:
    """Model inputs of one example.

    Attributes:
      input_ids: list of int [max_seq_length], zero padded.
      input_mask: list of int [max_seq_length], 1 for real tokens.
      segment_ids: list of int [max_seq_length], 0 for a, 1 for b, 0 padding.
      label_id: int (class index) or float (regression).
    """

    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: object


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Pops tokens in place until len(a) + len(b) <= max_length.

    Always from the end of the longer list (b on ties): a short text keeps
    all its tokens, which matters more than keeping the tail of a long one.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def _label_id(example, label_list):
    """int index in label_list, or float when label_list is empty (regression).

    Unlabelled (test) examples get 0 / 0.0, what the original's placeholder
    labels ("0", "contradiction") mapped to.
    """
    is_regression = not label_list
    if example.label is None:
        return 0.0 if is_regression else 0
    if is_regression:
        return float(example.label)
    try:
        return list(label_list).index(example.label)
    except ValueError:
        raise ValueError("Example %s: unknown label %r; expected one of %s"
                         % (example.guid, example.label, list(label_list))) from None


def convert_single_example(ex_index, example, label_list, max_seq_length, tokenizer):
    """Converts one `InputExample` to `InputFeatures`.

    Args:
      ex_index: int, position in the data set; the first 5 are logged.
      example: `InputExample`.
      label_list: list of str, the classes; [] or None for regression.
      max_seq_length: int, at least 3.
      tokenizer: see the module docstring.

    Returns:
      `InputFeatures`.
    """
    if max_seq_length < 3:
        raise ValueError("max_seq_length must be at least 3 ([CLS] a [SEP] b [SEP] "
                         "needs room for 3 special tokens), got %d" % max_seq_length)
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    # As the original: a text_b that tokenizes to nothing counts as no text_b.
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    else:
        tokens_a = tokens_a[:max_seq_length - 2]

    tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += tokens_b + ["[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)

    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    input_mask = [1] * len(input_ids)
    padding = [0] * (max_seq_length - len(input_ids))
    input_ids += padding
    input_mask += padding
    segment_ids += padding

    label_id = _label_id(example, label_list)
    if ex_index < _NUM_LOGGED_EXAMPLES:
        logging.info("*** Example ***")
        logging.info("guid: %s", example.guid)
        logging.info("tokens: %s", " ".join(tokenization.printable_text(t) for t in tokens))
        logging.info("input_ids: %s", " ".join(str(x) for x in input_ids))
        logging.info("input_mask: %s", " ".join(str(x) for x in input_mask))
        logging.info("segment_ids: %s", " ".join(str(x) for x in segment_ids))
        logging.info("label: %s (id = %s)", example.label, label_id)

    return InputFeatures(
        input_ids=input_ids,
        input_mask=input_mask,
        segment_ids=segment_ids,
        label_id=label_id,
    )


def convert_examples_to_features(examples, label_list, max_seq_length, tokenizer):
    """list of `InputExample` -> list of `InputFeatures`, in order."""
    features = []
    for ex_index, example in enumerate(examples):
        if ex_index % 10000 == 0:
            logging.info("Writing example %d of %d", ex_index, len(examples))
        features.append(
            convert_single_example(ex_index, example, label_list, max_seq_length, tokenizer))
    return features


def _int64_feature(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def _float_feature(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def to_tf_example(feature, is_regression):
    """`InputFeatures` -> tf.train.Example with the original's feature names."""
    label = (_float_feature([feature.label_id]) if is_regression
             else _int64_feature([feature.label_id]))
    return tf.train.Example(features=tf.train.Features(feature={
        "input_ids": _int64_feature(feature.input_ids),
        "input_mask": _int64_feature(feature.input_mask),
        "segment_ids": _int64_feature(feature.segment_ids),
        "label_ids": label,
        # The original's schema. Its TPU runs padded the last batch with fake
        # examples marked 0; ours never pad (the last batch may be smaller).
        "is_real_example": _int64_feature([1]),
    }))


def file_based_convert_examples_to_features(examples, label_list, max_seq_length, tokenizer,
                                            output_file):
    """Writes the examples' features to a TFRecord file of tf.train.Example.

    Args:
      examples: list of `InputExample`.
      label_list: list of str; [] or None for regression (float label_ids).
      max_seq_length: int.
      tokenizer: see the module docstring.
      output_file: str; it appears only once complete (outputs.writing).

    Returns:
      int, the number of records written (= len(examples)).
    """
    is_regression = not label_list
    # A TFRecord file cut short still reads as complete: publish it whole.
    with outputs.writing(output_file) as temporary, tf.io.TFRecordWriter(temporary) as writer:
        for ex_index, example in enumerate(examples):
            if ex_index % 10000 == 0:
                logging.info("Writing example %d of %d", ex_index, len(examples))
            feature = convert_single_example(
                ex_index, example, label_list, max_seq_length, tokenizer)
            writer.write(to_tf_example(feature, is_regression).SerializeToString())
    return len(examples)


def feature_spec(max_seq_length, is_regression):
    """dict name -> tf.io.FixedLenFeature for parsing the records written above.

    input_ids, input_mask, segment_ids: int64 [max_seq_length];
    label_ids: int64 [] (float32 [] for regression). The records' is_real_example
    (always 1) is not read.
    """
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.float32 if is_regression else tf.int64),
    }


def dataset_from_file(input_file, max_seq_length, is_regression, batch_size, is_training,
                      drop_remainder, seed=None, shuffle_buffer_size=100):
    """A tf.data pipeline over a file written by `file_based_convert_examples_to_features`.

    As the original's input_fn: for training the records repeat forever and
    are shuffled (buffer of 100); otherwise one pass in file order. int64
    features become int32 (what the model and TPUs take).

    Args:
      input_file: str or list of str.
      max_seq_length: int, as written.
      is_regression: bool, label_ids is float32.
      batch_size: int.
      is_training: bool, repeat and shuffle.
      drop_remainder: bool, drop a last partial batch (static batch shape).
      seed: int or None, the shuffle seed, for reproducible runs.
      shuffle_buffer_size: int.

    Returns:
      tf.data.Dataset of dicts: input_ids, input_mask, segment_ids int32
      [batch, max_seq_length]; label_ids int32 (float32) [batch].
    """
    spec = feature_spec(max_seq_length, is_regression)

    def decode(record):
        example = tf.io.parse_single_example(record, spec)
        return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
                for name, value in example.items()}

    dataset = tf.data.TFRecordDataset(input_file)
    if is_training:
        dataset = dataset.repeat()
        dataset = dataset.shuffle(buffer_size=shuffle_buffer_size, seed=seed)
    dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    return dataset.prefetch(tf.data.AUTOTUNE)


def check_vocab_fits_config(vocab, config_vocab_size, vocab_file="the vocab file"):
    """Raises ValueError if the vocabulary has ids beyond the model's embedding.

    Ids at or beyond config_vocab_size have no embedding row: looking them up
    fails on CPU and silently reads zeros on GPU. Fewer ids than vocab_size is
    harmless (unused rows). The ids are line numbers, so a token repeated on
    several lines makes the highest id, not the count of tokens, the one to check.

    Args:
      vocab: {token: id}, e.g. tokenizer.vocab.
      config_vocab_size: int, bert_config.vocab_size.
      vocab_file: str, named in the message.
    """
    size = max(vocab.values()) + 1 if vocab else 0
    if size > config_vocab_size:
        raise ValueError(
            "%s has %d lines (ids 0-%d) but bert_config's vocab_size is %d: ids >= %d have no "
            "embedding. Use the vocab.txt that came with the checkpoint and its config."
            % (vocab_file, size, size - 1, config_vocab_size, config_vocab_size))
