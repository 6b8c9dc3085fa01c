"""The unigram baseline of masked-LM records: what word frequencies alone score.

The unigram model predicts every masked token from how often each token is
masked in the training records, whatever its context. Always answering the
most frequent one gives its accuracy; the cross entropy of the add-one
smoothed frequencies (over the vocabulary) gives its loss. Scored on the
held-out records, these are the plateau a pre-training run sits on before it
uses context: a model whose held-out masked-LM accuracy and loss are near them
has learned word frequencies and nothing more.

Output (--output_file, JSON):
  accuracy, loss            the unigram model on the held-out masked tokens
  most_frequent_id, most_frequent_token
  train_masked_tokens, eval_masked_tokens, vocab_size
"""

import collections
import dataclasses
import json
import math

import tensorflow as tf
from absl import logging

import outputs
from modeling import pretraining_input
from options import Options, option
from training import record_files


@dataclasses.dataclass(kw_only=True)
class UnigramBaselineOptions(Options):
    """The unigram_baseline.py flags."""

    input_file: str = option(help="Training records of create_pretraining_data.py (files or globs, "
                             "comma-separated): the frequencies come from their masked tokens.")
    eval_input_file: str = option(help="Held-out records in the same format: the baseline is scored on "
                                  "their masked tokens.", new=True)
    vocab_file: str = option(help="The vocabulary the records were made with: its size for the smoothing, "
                             "its tokens to name the most frequent one.", path="file")
    output_file: str = option(help="JSON file to write.", path="output_file")
    max_seq_length: int = option(128, "The records' sequence length.", minimum=1)
    max_predictions_per_seq: int = option(20, "The records' masked positions per sequence.", minimum=1)


def masked_token_counts(files, max_seq_length, max_predictions_per_seq, batch_size=1024):
    """collections.Counter of the token ids at the masked positions (weight > 0) of the records."""
    spec = pretraining_input.feature_spec(max_seq_length, max_predictions_per_seq)
    spec = {name: spec[name] for name in ("masked_lm_ids", "masked_lm_weights")}
    counts = collections.Counter()
    dataset = tf.data.TFRecordDataset(files).batch(batch_size).map(lambda records: tf.io.parse_example(records, spec))
    try:
        for batch in dataset:
            ids = batch["masked_lm_ids"].numpy()
            counts.update(ids[batch["masked_lm_weights"].numpy() > 0].tolist())
    except tf.errors.DataLossError as error:
        raise ValueError(record_files.describe_damage(files, error) + ".") from None
    return counts


def read_vocab(path):
    """The tokens of a vocab.txt, one per line; ValueError naming the line of a byte that is not UTF-8."""
    tokens = []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                tokens.append(raw.decode("utf-8").rstrip("\n"))
            except UnicodeDecodeError as error:
                raise ValueError("--vocab_file: %s line %d is not UTF-8 (byte %d)." % (path, number, error.start + 1)
                                 ) from None
    return tokens


def score(train_counts, eval_counts, vocab_size):
    """(accuracy, loss, most frequent training id) of the unigram model of `train_counts` on the tokens of `eval_counts`.

    Raises:
      ValueError: when either holds no token, or an id lies outside the vocabulary.
    """
    if not train_counts or not eval_counts:
        raise ValueError("No masked token in the %s records." % ("training" if not train_counts else "held-out"))
    largest = max(max(train_counts), max(eval_counts))
    if largest >= vocab_size:
        raise ValueError("Token id %d in the records is outside the vocabulary of %d entries: were the records "
                         "made with another --vocab_file?" % (largest, vocab_size))
    most_frequent = train_counts.most_common(1)[0][0]
    total_eval = sum(eval_counts.values())
    denominator = sum(train_counts.values()) + vocab_size
    loss = -sum(count * math.log((train_counts[token] + 1) / denominator) for token, count in eval_counts.items())
    return eval_counts[most_frequent] / total_eval, loss / total_eval, most_frequent


def run(options):
    """unigram_baseline.py: counts, scores and writes the JSON; returns its dict."""
    options.validate()
    vocab = read_vocab(options.vocab_file)
    counts = {}
    for name, flag in (("input_file", "--input_file"), ("eval_input_file", "--eval_input_file")):
        files = pretraining_input.expand_input_files(getattr(options, name), flag)
        pretraining_input.check_record_lengths(files, options.max_seq_length, options.max_predictions_per_seq)
        counts[name] = masked_token_counts(files, options.max_seq_length, options.max_predictions_per_seq)
    accuracy, loss, most_frequent = score(counts["input_file"], counts["eval_input_file"], len(vocab))
    result = dict(accuracy=accuracy, loss=loss, most_frequent_id=most_frequent,
                  most_frequent_token=vocab[most_frequent], vocab_size=len(vocab),
                  train_masked_tokens=sum(counts["input_file"].values()),
                  eval_masked_tokens=sum(counts["eval_input_file"].values()))
    outputs.write_text(options.output_file, json.dumps(result, indent=2, sort_keys=True) + "\n")
    logging.info("Unigram baseline on the held-out masked tokens: accuracy %.4f (always %r), loss %.4f; written "
                 "to %s.", accuracy, vocab[most_frequent], loss, options.output_file)
    return result
