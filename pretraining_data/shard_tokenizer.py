"""Tokenizes groups of documents into `shards.Shard`s, in the main process.

Tokenization runs on TensorFlow Text (`tokenization.FastFullTokenizer`, ids
identical to the original tokenizer) in batches of lines, here in the parent:
it is ~20x faster than the pure-Python tokenizer, so one process keeps up with
the workers, and the workers need no TensorFlow (measured: importing it costs
each worker ~5 s and ~0.5 GB). `fast=False` uses the original pure-Python
`FullTokenizer` instead, for bit-exact comparisons with the original tool.
"""

import numpy as np
import tensorflow as tf

import tokenization
from pretraining_data import shards

# Lines per FastFullTokenizer call: larger batches gained nothing here.
_BATCH_SIZE = 1024


def _check_exists(vocab_file):
    if not tf.io.gfile.exists(vocab_file):
        raise ValueError("--vocab_file: %s does not exist." % vocab_file)


def load_vocab(vocab_file):
    """The vocab (OrderedDict token -> id), with clear errors.

    Raises:
      ValueError: the vocab file is missing or unreadable.
    """
    _check_exists(vocab_file)
    try:
        return tokenization.load_vocab(vocab_file)
    except (tf.errors.OpError, OSError) as error:
        raise ValueError("Cannot read --vocab_file %s: %s" % (vocab_file, error)) from None


def load_tokenizer(vocab_file, do_lower_case, fast=True):
    """A FastFullTokenizer (or FullTokenizer), with clear errors.

    Raises:
      ValueError: the vocab file is missing, unreadable or lacks [UNK].
    """
    _check_exists(vocab_file)
    try:
        if fast:
            return tokenization.FastFullTokenizer(vocab_file, do_lower_case)
        return tokenization.FullTokenizer(vocab_file, do_lower_case)
    except (tf.errors.OpError, OSError) as error:
        raise ValueError("Cannot read --vocab_file %s: %s" % (vocab_file, error)) from None


class ShardTokenizer:
    """Callable: (index, documents of str lines, input_bytes) -> shards.Shard.

    Attributes:
      vocab: OrderedDict token -> id, from the vocab file.
      inv_vocab: dict id -> token.
    """

    def __init__(self, vocab_file, do_lower_case, fast=True):
        self._tokenizer = load_tokenizer(vocab_file, do_lower_case, fast)
        self.vocab = self._tokenizer.vocab
        self.inv_vocab = self._tokenizer.inv_vocab
        self._tokenize_lines = self._fast_ids if fast else self._python_ids

    def __call__(self, index, documents, input_bytes=0):
        """Tokenizes `documents` (lists of str lines) into shard `index`."""
        lines = [line for document in documents for line in document]
        token_ids, line_lengths = self._tokenize_lines(lines)
        document_lengths = np.array([len(document) for document in documents], np.int32)
        return shards.Shard(index, token_ids, line_lengths, document_lengths, input_bytes)

    def _fast_ids(self, lines):
        ids, lengths = [np.zeros([0], np.int32)], [np.zeros([0], np.int32)]
        for start in range(0, len(lines), _BATCH_SIZE):
            batch = [line.encode("utf-8") for line in lines[start:start + _BATCH_SIZE]]
            ragged = self._tokenizer.tokenize_tensor(tf.constant(batch, tf.string))
            ids.append(ragged.flat_values.numpy().astype(np.int32))
            lengths.append(ragged.row_lengths().numpy().astype(np.int32))
        return np.concatenate(ids), np.concatenate(lengths)

    def _python_ids(self, lines):
        tokenizer = self._tokenizer
        per_line = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]
        ids = np.array([i for line in per_line for i in line], np.int32)
        return ids, np.array([len(line) for line in per_line], np.int32)
