"""Reading pre-training tf.Example files (ours or the original tool's).

Feature schema, identical to google-research/bert's create_pretraining_data:
  input_ids, input_mask, segment_ids   int64 [max_seq_length]
  masked_lm_positions, masked_lm_ids   int64 [max_predictions_per_seq]
  masked_lm_weights                    float [max_predictions_per_seq]
  next_sentence_labels                 int64 [1]

Training reads the files in a seeded, deterministic order (files shuffled,
interleaved, records shuffled in a buffer), repeated forever; the iterator is
checkpointed with the model so that a resumed run sees the same data. With
several input pipelines (workers), each reads its own files when there are
enough, else its own slice of every batch.
"""

from google.protobuf import message
import tensorflow as tf

# The original's read parallelism and record shuffle buffer.
CYCLE_LENGTH = 4
SHUFFLE_BUFFER = 100


def feature_spec(max_seq_length, max_predictions_per_seq):
    """The tf.Example schema for tf.io.parse_example."""
    seq = tf.io.FixedLenFeature([max_seq_length], tf.int64)
    pred = tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64)
    return {
        "input_ids": seq,
        "input_mask": seq,
        "segment_ids": seq,
        "masked_lm_positions": pred,
        "masked_lm_ids": pred,
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def expand_input_files(input_file, flag="--input_file"):
    """The files named by --input_file (or the `flag` given): comma-separated globs.

    Raises:
      ValueError: when a glob matches nothing (naming it and the flag) or nothing is given.
    """
    patterns = [p.strip() for p in input_file.split(",") if p.strip()]
    if not patterns:
        raise ValueError("%s is empty: give a file, a glob or a comma-separated list." % flag)
    files = []
    for pattern in patterns:
        matched = sorted(tf.io.gfile.glob(pattern))
        if not matched:
            raise ValueError("%s: the glob %r matches no file." % (flag, pattern))
        files.extend(matched)
    return files


def check_record_lengths(input_files, max_seq_length, max_predictions_per_seq, vocab_size=None):
    """Reads the first record of each file and checks it fits the flags (and, given `vocab_size`, the model).

    A mismatch would otherwise surface deep inside training as a parse error or an embedding lookup
    out of range.

    Raises:
      ValueError: naming the file, the feature, its length and the flag; a record that is not a
        tf.train.Example; a token id at or beyond `vocab_size`.
    """
    expected = {
        "input_ids": ("--max_seq_length", max_seq_length),
        "input_mask": ("--max_seq_length", max_seq_length),
        "segment_ids": ("--max_seq_length", max_seq_length),
        "masked_lm_positions": ("--max_predictions_per_seq", max_predictions_per_seq),
        "masked_lm_ids": ("--max_predictions_per_seq", max_predictions_per_seq),
        "masked_lm_weights": ("--max_predictions_per_seq", max_predictions_per_seq),
    }
    for path in input_files:
        records = iter(tf.data.TFRecordDataset(path).take(1))
        try:
            record = next(records)
        except StopIteration:
            raise ValueError("Input file %s holds no records." % path) from None
        except tf.errors.DataLossError as error:
            raise ValueError("Input file %s is not a TFRecord file: %s" % (path, error.message)) from None
        try:
            example = tf.train.Example.FromString(record.numpy())
        except message.DecodeError as error:
            raise ValueError("Input file %s: its records are not tf.train.Example protos (%s); is it a pre-training "
                             "file from create_pretraining_data.py?" % (path, error)) from None
        features = example.features.feature
        for name in list(expected) + ["next_sentence_labels"]:
            if name not in features:
                raise ValueError(
                    "Input file %s: records lack the feature %r; is it a pre-training "
                    "file from create_pretraining_data.py?" % (path, name)
                )
        for name, (flag, length) in expected.items():
            feature = features[name]
            actual = len(feature.int64_list.value) or len(feature.float_list.value)
            if actual != length:
                raise ValueError(
                    "Input file %s: %s has length %d but %s=%d. Pass the %s the file "
                    "was created with." % (path, name, actual, flag, length, flag)
                )
        for name in ("input_ids", "masked_lm_ids") if vocab_size else ():
            largest = max(features[name].int64_list.value, default=0)
            if largest >= vocab_size:
                raise ValueError(
                    "Input file %s: %s holds token id %d but the model's vocab_size is %d (--bert_config_file): "
                    "the file was made with a larger vocabulary than the model's." % (path, name, largest, vocab_size))


def _parse(serialized, spec):
    features = tf.io.parse_example(serialized, spec)
    # int32 on device, as the original does for TPUs; ids fit easily.
    return {
        name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
        for name, value in features.items()
    }


def training_dataset(input_files, batch_size, max_seq_length, max_predictions_per_seq, seed,
                     input_context=None):
    """An endless, seeded, deterministic stream of training batches.

    Args:
      input_files: list of TFRecord paths.
      batch_size: this input pipeline's batch size (the global batch over the
        number of pipelines); the last partial batch is dropped.
      seed: int, fixes the file order and the record shuffle.
      input_context: tf.distribute.InputContext. With several input pipelines,
        each reads its own share of the files when there are at least as many
        files as pipelines; with fewer, every pipeline reads all files in the
        same seeded order and keeps its own slice of each global batch, so that
        the pipelines' batches, in order, make up the batch one pipeline would
        read (tf.data's FILE and DATA auto-sharding, DATA by contiguous slices).

    Returns:
      tf.data.Dataset of dicts of [batch_size, ...] tensors.
    """
    pipelines = input_context.num_input_pipelines if input_context else 1
    by_file = pipelines > 1 and len(input_files) >= pipelines
    files = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
    if by_file:
        files = files.shard(pipelines, input_context.input_pipeline_id)
    files = files.repeat().shuffle(len(input_files), seed=seed)
    records = files.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(CYCLE_LENGTH, len(input_files)),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    records = records.shuffle(SHUFFLE_BUFFER, seed=seed)
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    if pipelines > 1 and not by_file:
        # Every pipeline holds the same stream: keep this one's rows of each
        # global batch, before parsing, so that each parses only its share.
        start = input_context.input_pipeline_id * batch_size
        dataset = records.batch(batch_size * pipelines, drop_remainder=True)
        dataset = dataset.map(lambda serialized: serialized[start:start + batch_size])
    else:
        dataset = records.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda s: _parse(s, spec), num_parallel_calls=tf.data.AUTOTUNE,
                          deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def evaluation_dataset(input_files, batch_size, max_seq_length, max_predictions_per_seq):
    """One pass over the files in order, as the original's eval input_fn."""
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    dataset = tf.data.TFRecordDataset(input_files).batch(batch_size, drop_remainder=True)
    return dataset.map(lambda s: _parse(s, spec)).prefetch(tf.data.AUTOTUNE)
