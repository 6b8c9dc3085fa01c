"""Tokenizes a shard of text documents into a `shards.Shard` of token ids.

This runs in the worker processes, beside instance creation, so that
tokenization is spread over the workers too. It uses
`tokenization.CachedFullTokenizer`: the original tokenizer's ids, each
distinct word tokenized once (~30x the original's speed on English text, in
pure Python). `fast=False` tokenizes every line with the original
`FullTokenizer` instead, for comparisons with the original tool. Neither
imports TensorFlow (~5 s and ~0.5 GB a process).
"""

import numpy as np

import file_system
import tokenization
from pretraining_data import shards


def load_vocab(vocab_file):
    """The vocab (OrderedDict token -> id), with clear errors.

    Raises:
      ValueError: the vocab file is missing, unreadable or lacks [UNK], [CLS], [SEP] or [MASK].
    """
    if not file_system.exists(vocab_file):
        raise ValueError("--vocab_file: %s does not exist." % vocab_file)
    try:
        vocab = tokenization.load_vocab(vocab_file)
    except file_system.errors() as error:
        raise ValueError("Cannot read --vocab_file %s: %s"
                         % (vocab_file, file_system.reason(error))) from None
    missing = [token for token in ("[UNK]", "[CLS]", "[SEP]", "[MASK]") if token not in vocab]
    if missing:
        raise ValueError("--vocab_file %s lacks %s (%d tokens): pre-training data needs [CLS], [SEP] and "
                         "[MASK], and words outside the vocab need [UNK]." % (vocab_file, ", ".join(missing),
                                                                              len(vocab)))
    return vocab


class _OriginalTokenizer:
    """FullTokenizer over a loaded vocab, with CachedFullTokenizer's `tokenize_lines`."""

    def __init__(self, vocab, do_lower_case):
        self._basic = tokenization.BasicTokenizer(do_lower_case)
        self._wordpiece = tokenization.WordpieceTokenizer(vocab)
        self._vocab = vocab

    def tokenize_lines(self, lines):
        ids, lengths = [], []
        for line in lines:
            line_ids = [self._vocab[piece] for token in self._basic.tokenize(line)
                        for piece in self._wordpiece.tokenize(token)]
            ids += line_ids
            lengths.append(len(line_ids))
        return ids, lengths


class ShardTokenizer:
    """Callable: shards.TextShard -> shards.Shard."""

    def __init__(self, vocab, do_lower_case, fast=True):
        """Args: vocab: dict token -> id, with "[UNK]"; do_lower_case: bool; fast: see module."""
        self._tokenizer = (tokenization.CachedFullTokenizer(vocab, do_lower_case) if fast
                           else _OriginalTokenizer(vocab, do_lower_case))

    def __call__(self, text_shard):
        """Tokenizes the documents (lists of str lines) of `text_shard`."""
        lines = [line for document in text_shard.documents for line in document]
        token_ids, line_lengths = self._tokenizer.tokenize_lines(lines)
        return shards.Shard(text_shard.index, np.array(token_ids, np.int32),
                            np.array(line_lengths, np.int32),
                            np.array([len(document) for document in text_shard.documents], np.int32),
                            text_shard.input_bytes)
