"""Next-token examples from lines of text, as tf.data pipelines.

Each non-empty line is one sequence: [bos] + its sub-word ids + [eos]. A
sequence longer than max_seq_length + 1 tokens is split, not dropped, into
pieces of max_seq_length + 1 tokens that overlap by one token, so every token
after bos is predicted exactly once. An example is (padding at the end):

  input_ids   int32 [max_seq_length]  the piece without its last token
  target_ids  int32 [max_seq_length]  the piece without its first token
  input_mask  int32 [max_seq_length]  1 where target_ids holds a real token
  num_chars   int32 []                the line's characters plus its newline (what
                                      eos predicts) on its first piece, else 0;
                                      eval sums it for bits per character

With `pack=True` (run_lm.py --pack_lines) lines are not kept apart: their
tokens, each line [bos] + ids + [eos], run on as one stream cut into examples
of max_seq_length predictions, so every example but the last is full and a
token's context reaches back into earlier lines, up to max_seq_length tokens.
Every token after a bos is still predicted exactly once; num_chars counts the
characters of the lines whose bos falls in the example. The number of
predictions per example is then max_seq_length itself, whatever the lines'
lengths: what a study that varies max_seq_length at a fixed number of tokens
per step needs.
"""

import tensorflow as tf
import tensorflow_text

from file_system import text_files

SHUFFLE_BUFFER = 10000


class TextFiles:
    """Lines of text files, one sentence per line."""

    def __init__(self, files):
        self.files = list(files)

    def describe(self):
        return "%d file(s): %s" % (len(self.files), ", ".join(self.files[:3]) + (", ..." if len(self.files) > 3 else ""))

    def sample_lines(self, max_lines, flag="--train_file"):
        """Up to `max_lines` non-empty lines in file order (to learn a vocabulary from)."""
        return text_files.sample_lines(self.files, max_lines, flag)

    def lines(self, seed=None, input_context=None):
        """A Dataset of lines: in file order, or (with a seed) files shuffled, interleaved and repeated."""
        files = tf.data.Dataset.from_tensor_slices(self.files)
        if seed is None:
            return tf.data.TextLineDataset(files)
        pipelines = input_context.num_input_pipelines if input_context else 1
        if pipelines > 1 and len(self.files) >= pipelines:
            files = files.shard(pipelines, input_context.input_pipeline_id)
        files = files.shuffle(len(self.files), seed=seed, reshuffle_each_iteration=True).repeat()
        lines = files.interleave(tf.data.TextLineDataset, cycle_length=min(len(self.files), 4),
                                 block_length=16)
        if pipelines > 1 and len(self.files) < pipelines:
            lines = lines.shard(pipelines, input_context.input_pipeline_id)
        return lines


def examples(lines, vocabulary, max_seq_length, pack=False):
    """The examples of a Dataset of lines (see the module docstring)."""
    tokenizer = tensorflow_text.SentencepieceTokenizer(model=vocabulary.model_proto)
    bos = tf.constant([vocabulary.bos_id], tf.int32)
    eos = tf.constant([vocabulary.eos_id], tf.int32)
    length = max_seq_length

    def tokenize(line):
        ids = tf.cast(tokenizer.tokenize(line), tf.int32)
        chars = tf.strings.length(line, unit="UTF8_CHAR") + 1
        return tf.concat([bos, ids, eos], 0), chars

    def pieces(tokens, chars):
        starts = tf.range(0, tf.size(tokens) - 1, length)

        def piece(start):
            chunk = tokens[start:start + length + 1]
            real = tf.size(chunk) - 1
            pad = [[0, length - real]]
            return dict(input_ids=tf.ensure_shape(tf.pad(chunk[:-1], pad), [length]),
                        target_ids=tf.ensure_shape(tf.pad(chunk[1:], pad), [length]),
                        input_mask=tf.ensure_shape(tf.pad(tf.ones([real], tf.int32), pad), [length]),
                        num_chars=tf.where(start == 0, chars, 0))

        return tf.data.Dataset.from_tensor_slices(starts).map(piece)

    def pairs(tokens, chars):
        # (input, target, characters) of each prediction of the line: chars on its bos, else 0.
        inputs = tokens[:-1]
        return inputs, tokens[1:], tf.concat([[chars], tf.zeros_like(inputs[1:])], 0)

    def packed(inputs, targets, chars):
        real = tf.size(inputs)
        pad = [[0, length - real]]
        return dict(input_ids=tf.ensure_shape(tf.pad(inputs, pad), [length]),
                    target_ids=tf.ensure_shape(tf.pad(targets, pad), [length]),
                    input_mask=tf.ensure_shape(tf.pad(tf.ones([real], tf.int32), pad), [length]),
                    num_chars=tf.reduce_sum(chars))

    lines = lines.map(tf.strings.strip).filter(lambda line: tf.strings.length(line) > 0)
    tokens = lines.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if pack:
        return tokens.map(pairs).unbatch().batch(length).map(packed)
    return tokens.flat_map(pieces)


def training_dataset(source, vocabulary, max_seq_length, batch_size, seed, input_context=None, pack=False):
    """Endless, seeded batches: files shuffled per epoch, examples through a shuffle buffer."""
    dataset = examples(source.lines(seed, input_context), vocabulary, max_seq_length, pack)
    dataset = dataset.shuffle(SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def evaluation_dataset(source, vocabulary, max_seq_length, batch_size, pack=False):
    """Every example once, in order; the last batch may be smaller."""
    return examples(source.lines(), vocabulary, max_seq_length, pack).batch(batch_size).prefetch(tf.data.AUTOTUNE)
