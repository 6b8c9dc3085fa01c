"""Test support: small pre-training record files in the original schema.

Tokens are Zipf-distributed, as in text, so that a short training run
visibly lowers the masked-LM loss below the uniform ln(vocab_size).
"""

import numpy as np
import tensorflow as tf


def _int64(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def _float(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def make_example(rng, vocab_size, max_seq_length, max_predictions_per_seq):
    length = rng.randint(max_seq_length // 2, max_seq_length + 1)
    ranks = np.arange(1, vocab_size - 5 + 1)
    zipf = (1.0 / ranks) / (1.0 / ranks).sum()
    ids = list(5 + rng.choice(vocab_size - 5, size=length, p=zipf))
    ids[0], ids[-1] = 2, 3  # [CLS] ... [SEP]
    num_predictions = rng.randint(1, max_predictions_per_seq + 1)
    positions = sorted(rng.choice(np.arange(1, length - 1), num_predictions, replace=False))
    labels = [ids[p] for p in positions]
    for p in positions:
        ids[p] = 4  # [MASK]
    pad = max_seq_length - length
    pred_pad = max_predictions_per_seq - num_predictions
    split = length // 2
    features = {
        "input_ids": _int64(ids + [0] * pad),
        "input_mask": _int64([1] * length + [0] * pad),
        "segment_ids": _int64([0] * split + [1] * (length - split) + [0] * pad),
        "masked_lm_positions": _int64(list(positions) + [0] * pred_pad),
        "masked_lm_ids": _int64(labels + [0] * pred_pad),
        "masked_lm_weights": _float([1.0] * num_predictions + [0.0] * pred_pad),
        "next_sentence_labels": _int64([rng.randint(0, 2)]),
    }
    return tf.train.Example(features=tf.train.Features(feature=features))


def write_records(path, num_examples, vocab_size, max_seq_length, max_predictions_per_seq, seed=0):
    """Writes `num_examples` records to `path` and returns the path."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(num_examples):
            example = make_example(rng, vocab_size, max_seq_length, max_predictions_per_seq)
            writer.write(example.SerializeToString())
    return path


# A tiny BERT for training tests: fixed head size (4 x 12 != hidden 32).
TINY_CONFIG = dict(
    vocab_size=60, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    head_size=12, intermediate_size=48, max_position_embeddings=32, type_vocab_size=2,
)


def write_tiny_setup(directory, max_seq_length=32, max_predictions_per_seq=5, examples_per_file=160):
    """A tiny config and two record files in `directory`.

    Returns:
      (bert_config_file, input_file glob).
    """
    import json
    import os

    config_path = os.path.join(str(directory), "bert_config.json")
    with open(config_path, "w") as f:
        json.dump(TINY_CONFIG, f)
    for part in range(2):
        write_records(os.path.join(str(directory), "part-%d.tfrecord" % part), examples_per_file,
                      TINY_CONFIG["vocab_size"], max_seq_length, max_predictions_per_seq, seed=part + 1)
    return config_path, os.path.join(str(directory), "part-*.tfrecord")
