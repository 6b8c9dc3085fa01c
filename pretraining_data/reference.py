"""The original tool's main(), in memory and single-process: the reference.

What google-research/bert's create_pretraining_data.py does, step by step:
read every line of every file with `GFile` in text mode (UTF-8, strict),
tokenize each with the pure-Python `FullTokenizer`, keep all documents in
memory (a blank line starts a new one; files are simply concatenated), make
all instances with one `random.Random(random_seed)`, shuffle them, convert
them to ids and write them as `tf.train.Example`s round-robin.

Our pipeline with a single shard, with either tokenizer, must write the same
bytes (tested); `benchmarks/create_pretraining_data_benchmark.py` times the
original script itself. One liberty, which does not change what parses:
examples are serialized with `deterministic=True` (sorted feature names; the
original's order is whatever the protobuf library's map iteration gives).
"""

import collections
import random

import tensorflow as tf

import tokenization
from pretraining_data import instances as instances_lib
from pretraining_data import writer as writer_lib


def read_documents(input_files, tokenizer):
    """All documents of all files, tokenized, as the original reads them.

    Returns:
      list of documents (list of list of str tokens), none empty.
    """
    all_documents = [[]]
    for input_file in input_files:
        with tf.io.gfile.GFile(input_file, "r") as reader:
            while True:
                line = reader.readline()
                if not line:
                    break
                line = line.strip()
                if not line:  # Blank lines separate documents.
                    all_documents.append([])
                tokens = tokenizer.tokenize(line)
                if tokens:
                    all_documents[-1].append(tokens)
    return [document for document in all_documents if document]


def _int_feature(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def _float_feature(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def instance_to_example(instance, tokenizer, max_seq_length, max_predictions_per_seq):
    """The tf.train.Example of a TrainingInstance with str tokens, padded."""
    input_ids = tokenizer.convert_tokens_to_ids(instance.tokens)
    input_mask = [1] * len(input_ids)
    segment_ids = list(instance.segment_ids)
    assert len(input_ids) <= max_seq_length
    padding = [0] * (max_seq_length - len(input_ids))
    masked_lm_positions = list(instance.masked_lm_positions)
    masked_lm_ids = tokenizer.convert_tokens_to_ids(instance.masked_lm_labels)
    masked_lm_weights = [1.0] * len(masked_lm_ids)
    prediction_padding = [0] * (max_predictions_per_seq - len(masked_lm_ids))

    features = collections.OrderedDict()
    features["input_ids"] = _int_feature(input_ids + padding)
    features["input_mask"] = _int_feature(input_mask + padding)
    features["segment_ids"] = _int_feature(segment_ids + padding)
    features["masked_lm_positions"] = _int_feature(masked_lm_positions + prediction_padding)
    features["masked_lm_ids"] = _int_feature(masked_lm_ids + prediction_padding)
    features["masked_lm_weights"] = _float_feature(
        masked_lm_weights + [0.0] * len(prediction_padding))
    features["next_sentence_labels"] = _int_feature([1 if instance.is_random_next else 0])
    return tf.train.Example(features=tf.train.Features(feature=features))


def create_pretraining_data(input_files, output_files, options):
    """Runs the original algorithm on `input_files`, writing `output_files`.

    Args:
      input_files: list[str], already expanded.
      output_files: list[str], written round-robin.
      options: instances.CreatePretrainingDataOptions; its vocab_file,
        do_lower_case, random_seed and instance fields are used.

    Returns:
      int, the number of instances written.
    """
    tokenizer = tokenization.FullTokenizer(options.vocab_file, options.do_lower_case)
    documents = read_documents(input_files, tokenizer)
    rng = random.Random(options.random_seed)
    vocab = instances_lib.InstanceVocab.of_tokens(tokenizer.vocab)
    instances = instances_lib.create_training_instances(documents, vocab, options, rng)

    writers = [tf.io.TFRecordWriter(path) for path in output_files]
    for index, instance in enumerate(instances):
        example = instance_to_example(instance, tokenizer, options.max_seq_length,
                                      options.max_predictions_per_seq)
        record = example.SerializeToString(deterministic=True)
        writers[index % len(writers)].write(record)
        if index < 20:
            writer_lib.log_instance(record, tokenizer.inv_vocab)
    for writer in writers:
        writer.close()
    return len(instances)
