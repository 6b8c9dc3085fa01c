"""Test support for analysis: tiny BERT checkpoints, their vocabulary and config files; masked-LM records."""

import json
import os

import tensorflow as tf

import modeling
from modeling.testing import original_bert_numpy

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "dog",
    "ran", "##s", "a", ".", "big", "red", "under", "and",
]  # fmt: skip

# Hidden 16 with 3 heads: heads * head_size != hidden whatever the head size.
TINY_CONFIG = dict(
    vocab_size=len(VOCAB),
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=3,
    intermediate_size=32,
    max_position_embeddings=32,
    type_vocab_size=2,
    hidden_act="gelu",
)


def write_files(directory, config):
    """Writes vocab.txt and bert_config.json of `config`; returns their paths."""
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    bert_config_file = os.path.join(directory, "bert_config.json")
    with open(bert_config_file, "w") as f:
        json.dump(config.to_dict(), f)
    return vocab_file, bert_config_file


def write_random_model(directory, head_size, seed=3):
    """A tiny model with random weights far from uniform attention, saved by TF1's Saver.

    The checkpoint holds the pre-training heads too (`cls/...`), as released
    checkpoints do.

    Returns:
      dict of config (`modeling.BertConfig`), tensors ({original name: array}),
      vocab_file, bert_config_file, init_checkpoint.
    """
    config = modeling.BertConfig.from_dict(dict(TINY_CONFIG, head_size=head_size))
    tensors = original_bert_numpy.random_original_tensors(config, seed)
    vocab_file, bert_config_file = write_files(directory, config)
    init_checkpoint = original_bert_numpy.write_tf1_checkpoint(os.path.join(directory, "bert_model.ckpt"), tensors)
    return dict(config=config, tensors=tensors, vocab_file=vocab_file, bert_config_file=bert_config_file,
                init_checkpoint=init_checkpoint)


def write_initial_model(directory, head_size):
    """A tiny model at its seeded initialisation, saved by `modeling.save_checkpoint`.

    Returns:
      dict of config, vocab_file, bert_config_file, init_checkpoint.
    """
    config = modeling.BertConfig.from_dict(dict(TINY_CONFIG, head_size=head_size))
    vocab_file, bert_config_file = write_files(directory, config)
    model = modeling.build_model(modeling.BertModel(config))
    init_checkpoint = modeling.save_checkpoint(model, os.path.join(directory, "model.ckpt"))
    return dict(config=config, vocab_file=vocab_file, bert_config_file=bert_config_file,
                init_checkpoint=init_checkpoint)


def write_masked_lm_records(path, examples, max_seq_length=8, max_predictions=3):
    """TFRecord file of create_pretraining_data's schema; `examples` are (masked ids, weights) pairs."""
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    with tf.io.TFRecordWriter(str(path)) as writer:
        for ids, weights in examples:
            features = {name: ints([0] * max_seq_length) for name in ("input_ids", "input_mask", "segment_ids")}
            features.update(masked_lm_positions=ints([1] * max_predictions), masked_lm_ids=ints(ids),
                            masked_lm_weights=tf.train.Feature(float_list=tf.train.FloatList(value=weights)),
                            next_sentence_labels=ints([0]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    return str(path)
