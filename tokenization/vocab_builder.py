"""Learns a WordPiece vocabulary from text files: the logic of create_vocab.py.

The corpus is streamed. A tf.data pipeline reads the files line by line
(blank lines, which separate documents, are dropped; bytes that are not UTF-8
are dropped as `FullTokenizer` drops them) and splits them into the words
`FullTokenizer` sees; tensorflow-text's `bert_vocab_from_dataset` counts the
words and learns the WordPieces. Memory holds one count per distinct word,
never the text.

The words are `FullTokenizer`'s exactly (control characters dropped,
`str.lower()` and accents stripped when lower-casing, punctuation and CJK
split off), computed by `FastFullTokenizer`'s basic step in TensorFlow ops.
`bert_vocab_from_dataset`'s own lower-casing is not: it is NFKC case folding
("ß" -> "ss", "km²" -> "km2", "ﬁ" -> "fi"), and a vocabulary learned from
folded words lacks pieces FullTokenizer needs, so such words would become
[UNK]. So `bert_vocab_from_dataset` gets the words joined by spaces and is
told not to lower-case; its own splitting then finds the same words.

The file has the layout of the released vocabularies: `[PAD]`, up to 99
`[unused*]` slots, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`, the remaining
`[unused*]` slots, then the learned tokens (every single character first,
then the "##" suffixes and longer pieces by decreasing frequency). With 99 or
more unused slots, [UNK], [CLS], [SEP] and [MASK] get ids 100-103, as in
BERT's uncased and cased vocabularies; `num_unused=994` reproduces the uncased
vocab.txt's layout exactly.
"""

import dataclasses
import os
import tempfile
import time
from typing import List

import tensorflow as tf
from absl import logging
from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset

import outputs
from file_system.input_files import expand_input_files
from options import Options, option
from outputs.progress import format_duration
from tokenization.fast_tokenization import FastFullTokenizer

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
# The released vocabularies put 99 [unused*] slots between [PAD] and [UNK].
UNUSED_BEFORE_UNK = 99
DEFAULT_NUM_UNUSED = UNUSED_BEFORE_UNK
# Lines per tf.data element: large enough that per-batch overhead vanishes.
_LINES_PER_BATCH = 1024


@dataclasses.dataclass(kw_only=True)
class CreateVocabOptions(Options):
    """The create_vocab.py command line."""

    input_file: str = option(
        help="Text input: one sentence per line, a blank line between documents (the format of "
        "create_pretraining_data.py). A file, a glob, or a comma-separated list of them.")
    output_file: str = option(help="The vocabulary file to write, one token per line.", path="output_file")
    vocab_size: int = option(
        30522, "Largest number of tokens, reserved ones included (BERT's uncased vocabulary has "
        "30522). A small corpus gives fewer: beyond single characters, a piece must occur at "
        "least 10 times to be learned.",
        minimum=1)
    do_lower_case: bool = option(
        True, "Lower-case and strip accents before learning: True for an uncased model, False "
        "for a cased one. Pass the same value to the tokenizers that use the vocabulary.")
    num_unused: int = option(
        DEFAULT_NUM_UNUSED, "[unused*] slots to reserve for tokens added later without resizing "
        "the embeddings. Up to 99 go between [PAD] and [UNK], the rest after [MASK], as in "
        "BERT's vocabularies (994 reproduces the uncased one's layout).", minimum=0)

    def validate(self):
        """Raises ValueError, naming the flag, for values the run cannot use."""
        super().validate()
        check_vocab_size(self.vocab_size, reserved_tokens(self.num_unused), "--vocab_size")


def reserved_tokens(num_unused):
    """[PAD], [unused0].., [UNK], [CLS], [SEP], [MASK], [unused99]..: the released layout.

    Args:
      num_unused: int >= 0, the number of [unused*] slots.

    Returns:
      list[str] of 5 + num_unused tokens.
    """
    if num_unused < 0:
        raise ValueError("num_unused must be 0 or more, got %d." % num_unused)
    unused = ["[unused%d]" % i for i in range(num_unused)]
    return ([PAD] + unused[:UNUSED_BEFORE_UNK] + [UNK, CLS, SEP, MASK]
            + unused[UNUSED_BEFORE_UNK:])


def check_vocab_size(vocab_size, reserved, name="vocab_size"):
    """Raises ValueError unless `vocab_size` leaves room for learned tokens."""
    if vocab_size <= len(reserved):
        raise ValueError(
            "%s=%d leaves no room for learned tokens: the reserved tokens take %d (%s and %d "
            "[unused*] slots); expected more than %d." % (
                name, vocab_size, len(reserved), ", ".join([PAD, UNK, CLS, SEP, MASK]),
                len(reserved) - 5, len(reserved)))


class ReadProgress:
    """Counts the lines and bytes the pipeline reads; logs a line every `interval_seconds`.

    `update` runs inside the tf.data pipeline (through `tf.py_function`), once
    per batch; `finish` once the last batch has been read.
    """

    def __init__(self, total_bytes, interval_seconds=10.0, clock=time.monotonic):
        self.total_bytes = max(total_bytes, 1)
        self.lines = 0
        self.text_lines = 0
        self.bytes_read = 0
        self.invalid_lines = 0  # lines with bytes that are not UTF-8 (dropped)
        self._interval = interval_seconds
        self._clock = clock
        self._start = self._last_log = clock()

    def elapsed(self):
        return max(self._clock() - self._start, 1e-9)

    def line(self):
        """The progress line for the counters now (str)."""
        elapsed = self.elapsed()
        fraction = min(self.bytes_read / self.total_bytes, 1.0)
        eta = format_duration(elapsed * (1 - fraction) / fraction) if fraction else "unknown"
        return ("%d lines read (%d with text, %.0f lines/s), %.1f MB, ~%.1f%% of the input, "
                "ETA of the reading %s" % (self.lines, self.text_lines, self.lines / elapsed,
                                           self.bytes_read / 1e6, 100 * fraction, eta))

    def update(self, lines, text_lines, num_bytes, invalid_lines=0):
        """Adds one batch's counts (scalar tensors or ints); returns 0 for the graph."""
        self.lines += int(lines)
        self.text_lines += int(text_lines)
        self.bytes_read += int(num_bytes)
        self.invalid_lines += int(invalid_lines)
        now = self._clock()
        if now - self._last_log >= self._interval:
            self._last_log = now
            logging.info(self.line())
        return 0

    def finish(self):
        if self.invalid_lines:
            logging.warning("Dropped the bytes that are not valid UTF-8 from %d line(s) of the input, as the "
                            "original's tokenizer drops them: is the text in another encoding?", self.invalid_lines)
        logging.info("Input read: %d lines (%d with text), %.1f MB in %.1f s. Learning the "
                     "WordPieces from the word counts (single-threaded; no progress lines "
                     "until it ends).", self.lines, self.text_lines, self.bytes_read / 1e6,
                     self.elapsed())
        return 0


def text_dataset(files, progress=None, lines_per_batch=_LINES_PER_BATCH):
    """The non-blank lines of `files`, streamed, in batches.

    Args:
      files: list[str], text files (any path tf.io.gfile reads).
      progress: optional ReadProgress, updated once per batch and finished
        after the last.
      lines_per_batch: int, lines read per element (fewer come out: blank lines
        are dropped).

    Returns:
      tf.data.Dataset of 1-D tf.string tensors (lines, without "\\n"), valid
      UTF-8.
    """
    def read(batch):
        # As FullTokenizer's convert_to_unicode: invalid bytes vanish.
        valid = tf.strings.unicode_transcode(batch, "UTF-8", "UTF-8", errors="ignore")
        if progress is not None:
            text = tf.strings.length(tf.strings.strip(batch)) > 0
            # +1 per line for its "\n" (the last line of a file may lack one).
            num_bytes = tf.reduce_sum(tf.strings.length(batch)) + tf.size(batch)
            counted = tf.py_function(progress.update, [tf.size(batch), tf.reduce_sum(
                tf.cast(text, tf.int32)), num_bytes, tf.reduce_sum(tf.cast(valid != batch, tf.int32))],
                Tout=tf.int64)
            with tf.control_dependencies([counted]):
                valid = tf.identity(valid)
        return tf.boolean_mask(valid, tf.strings.length(tf.strings.strip(valid)) > 0)

    dataset = tf.data.TextLineDataset(files).batch(lines_per_batch).map(read)
    if progress is not None:
        def finish(batch):
            done = tf.py_function(progress.finish, [], Tout=tf.int64)
            with tf.control_dependencies([done]):
                return tf.identity(batch)
        # One empty batch after the last: it holds no words, and its map says the reading ended.
        dataset = dataset.concatenate(
            tf.data.Dataset.from_tensors(tf.constant([], tf.string)).map(finish))
    return dataset


class FullTokenizerWords:
    """`FullTokenizer`'s words of a batch of lines, in TensorFlow ops, joined by single spaces.

    Usable in `tf.data.Dataset.map`: [batch] valid UTF-8 lines -> [batch] strings.
    """

    def __init__(self, do_lower_case):
        # FastFullTokenizer wants a vocab with [UNK] and a piece its WordPiece op can match;
        # only its basic step is used here.
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "vocab.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(UNK + "\na\n")
            self._tokenizer = FastFullTokenizer(path, do_lower_case)

    def __call__(self, lines):
        # The basic step of FastFullTokenizer (module docstring of fast_tokenization.py,
        # steps 2-4): exactly FullTokenizer's BasicTokenizer, tested character by character.
        words = self._tokenizer.basic_words(lines)
        return tf.strings.reduce_join(words, axis=-1, separator=" ")


def _writable_token(token):
    """Whether `token` survives a one-token-per-line file read back by `load_vocab` (strip)."""
    return bool(token) and "\n" not in token and token.strip() == token


def learn_vocab(files, vocab_size, do_lower_case, reserved, progress_interval_seconds=10.0):
    """Learns a WordPiece vocabulary from `files`, streaming them.

    Args:
      files: list[str], text files, one sentence per line.
      vocab_size: int, the most tokens, reserved ones included.
      do_lower_case: bool, lower-case and strip accents first.
      reserved: list[str], tokens that come first, in order.
      progress_interval_seconds: float, how often to log the reading's progress.

    Returns:
      list[str]: `reserved`, then the learned tokens; at most `vocab_size`, no
      duplicates.

    Raises:
      ValueError: when the files hold no words, or `vocab_size` leaves no room
        for learned tokens.
    """
    check_vocab_size(vocab_size, reserved)
    total_bytes = sum(tf.io.gfile.stat(path).length for path in files)
    progress = ReadProgress(total_bytes, progress_interval_seconds)
    logging.info("Reading %d file(s), %.1f MB, for a vocabulary of at most %d tokens "
                 "(do_lower_case=%s).", len(files), total_bytes / 1e6, vocab_size, do_lower_case)
    started = time.monotonic()
    try:
        vocab = bert_vocab_from_dataset.bert_vocab_from_dataset(
            text_dataset(files, progress).map(FullTokenizerWords(do_lower_case)),
            vocab_size=vocab_size,
            reserved_tokens=list(reserved),
            # The words are lower-cased already, as FullTokenizer does (see the module docstring).
            bert_tokenizer_params=dict(lower_case=False),
            learn_params={},
        )
    except StopIteration:
        # count_words takes the first word to see its type: there was none.
        raise ValueError("The input files hold no words (%d lines read, none with a word): %s."
                         % (progress.lines, ", ".join(files))) from None
    learned = [token for token in vocab[len(reserved):] if token not in reserved]
    dropped = [token for token in learned if not _writable_token(token)]
    if dropped:
        logging.warning("Left out %d learned token(s) that a one-token-per-line file cannot hold "
                        "(whitespace or line breaks at their ends): %r", len(dropped), dropped[:10])
        learned = [token for token in learned if _writable_token(token)]
    vocab = list(reserved) + learned
    if len(vocab) > vocab_size:
        # The learner's search stops at the alphabet (every character and its
        # "##" form): more distinct characters than vocab_size holds. Its last
        # tokens are the rarest.
        logging.warning("The learned vocabulary has %d tokens, more than vocab_size=%d (the "
                        "corpus has many distinct characters); the %d rarest are left out.",
                        len(vocab), vocab_size, len(vocab) - vocab_size)
        vocab = vocab[:vocab_size]
    logging.info("Learned %d tokens (%d reserved) in %.1f s.", len(vocab), len(reserved),
                 time.monotonic() - started)
    return vocab


def write_vocab(vocab, path):
    """Writes one token per line; the file appears only when complete."""
    outputs.write_text(path, "".join(token + "\n" for token in vocab))
    return path


@dataclasses.dataclass
class Summary:
    """What a run did."""

    input_files: List[str]
    output_file: str
    vocab_size: int
    num_reserved: int


def run(options, progress_interval_seconds=10.0):
    """Learns the vocabulary described by `options` and writes it.

    Args:
      options: CreateVocabOptions.
      progress_interval_seconds: float, how often to log the reading's progress.

    Returns:
      Summary.

    Raises:
      ValueError: naming the flag or file (bad flag, missing file, glob matching
        nothing, empty corpus, vocab_size too small).
    """
    options.validate()
    reserved = reserved_tokens(options.num_unused)
    files = expand_input_files(options.input_file)
    vocab = learn_vocab(files, options.vocab_size, options.do_lower_case, reserved,
                        progress_interval_seconds)
    write_vocab(vocab, options.output_file)
    logging.info("Wrote %s: %d tokens.", options.output_file, len(vocab))
    return Summary(files, options.output_file, len(vocab), len(reserved))
