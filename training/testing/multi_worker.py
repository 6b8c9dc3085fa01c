"""Test support for multi-worker runs: a one-layer BERT, pre-training records, and checkpoints compared.

Two workers (TF_CONFIG on loopback: training/multi_worker_test.py; Slurm's
srun: tests/slurm/) must train as one process does on the same global batch.
"""

import json
import os

import numpy as np
import tensorflow as tf

SEQ, PRED = 16, 3
# 1 layer, hidden 16, no dropout: the runs differ only in where the batch is computed.
CONFIG = dict(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, head_size=8,
              intermediate_size=32, max_position_embeddings=SEQ, type_vocab_size=2,
              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
# Checkpoints at 4 and 8; a loop is 2 steps.
FLAGS = dict(max_seq_length=SEQ, max_predictions_per_seq=PRED, do_train=True, train_batch_size=16,
             learning_rate=1e-3, num_train_steps=8, num_warmup_steps=2, save_checkpoints_steps=4,
             iterations_per_loop=2, random_seed=3)


def write_records(path, count, seed):
    """Pre-training records with exactly PRED masked tokens each.

    Each replica's masked-LM loss is its mean over its own predictions (as the
    original's per TPU core); with the same number in every record that is the
    mean over the global batch, so one device given the global batch computes
    the update two workers compute together.
    """
    rng = np.random.RandomState(seed)

    def int64s(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))

    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(count):
            length = rng.randint(SEQ // 2, SEQ + 1)
            ids = [2] + list(rng.randint(5, CONFIG["vocab_size"], size=length - 2)) + [3]  # [CLS] .. [SEP]
            positions = sorted(rng.choice(np.arange(1, length - 1), PRED, replace=False))
            labels = [ids[p] for p in positions]
            for p in positions:
                ids[p] = 4  # [MASK]
            pad = [0] * (SEQ - length)
            features = dict(
                input_ids=int64s(ids + pad), input_mask=int64s([1] * length + pad),
                segment_ids=int64s([0] * (length // 2) + [1] * (length - length // 2) + pad),
                masked_lm_positions=int64s(positions), masked_lm_ids=int64s(labels),
                masked_lm_weights=tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] * PRED)),
                next_sentence_labels=int64s([rng.randint(2)]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())


def command_line(flags):
    return ["--%s=%s" % (name, value) for name, value in flags.items()]


def assert_checkpoints_agree(path, reference_path):
    """Every tensor of the two training checkpoints (weights, Adam slots, step) agrees."""
    a, b = tf.train.load_checkpoint(path), tf.train.load_checkpoint(reference_path)
    names = sorted(b.get_variable_to_shape_map())
    assert sorted(a.get_variable_to_shape_map()) == names
    assert any(name.endswith("/adam_v") for name in names)
    for name in names:
        expected = b.get_tensor(name)
        # The same sums in another order (two halves of the batch, added by a
        # ring all-reduce between the processes), each rounded to float32:
        # below 1e-6 of a tensor's scale after 8 Adam steps; 1e-5 leaves room.
        # (The attention key bias has no gradient, only rounding noise: 1e-9.)
        # With records of varying numbers of predictions, whose per-replica
        # normalisation differs, one device is off by ~1e-1 of the scale.
        np.testing.assert_allclose(a.get_tensor(name), expected, rtol=0,
                                   atol=1e-5 * np.abs(expected).max() + 1e-9, err_msg=name)


def write_setup(directory):
    """The config and one file of 64 records in `directory`; run_pretraining.py's flags for them (FLAGS with both).

    One input file for two workers: each keeps its half of every global batch.
    """
    os.makedirs(directory, exist_ok=True)
    config = os.path.join(directory, "bert_config.json")
    with open(config, "w") as f:
        json.dump(CONFIG, f)
    records = os.path.join(directory, "part-0.tfrecord")
    write_records(records, 64, seed=5)
    return dict(FLAGS, bert_config_file=config, input_file=records)
