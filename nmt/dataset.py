"""Translation examples from sentence pairs, as tf.data pipelines.

Both sides are tokenized with the one joint SentencePiece vocabulary
(tokenization.sentencepiece_vocabulary). An example (before batching):

  source_ids        int32 [S]  the source's sub-word ids + [eos]
  target_input_ids  int32 [T]  [bos] + the target's ids (the decoder's input, teacher forcing)
  target_ids        int32 [T]  the target's ids + [eos] (what each position predicts)

so target_input_ids[1:] == target_ids[:-1]. Batches are dicts of int32
[batch, length] tensors, 0 (SentencePiece's pad id here) as padding;
evaluation batches add `index` int64 [batch], each pair's position in the input.

Training batches group pairs of similar length (bucket_by_sequence_length),
so a batch of short sentences is not padded to the longest sentence of the
corpus: the bucket lengths are multiples of 8 up to 64, then grow by about an
eighth (`bucket_lengths`), and each batch is padded to its bucket's length,
which bounds the number of distinct batch shapes (and so of retraced steps).
"""

import numpy as np
import tensorflow as tf
import tensorflow_text

SHUFFLE_BUFFER = 10000
BUCKET_STEP = 8  # lengths are multiples of this (up to 64): tidy shapes for matrix units


def examples(pairs, vocabulary):
    """The examples (see the module docstring) of a Dataset of (source, target) strings.

    Args:
      pairs: a Dataset of (source, target) scalar tf.string, e.g. ParallelText.pairs().
      vocabulary: an tokenization.sentencepiece_vocabulary.Vocabulary.
    """
    tokenizer = tensorflow_text.SentencepieceTokenizer(model=vocabulary.model_proto)
    bos = tf.constant([vocabulary.bos_id], tf.int32)
    eos = tf.constant([vocabulary.eos_id], tf.int32)

    def tokenize(source, target):
        source = tf.cast(tokenizer.tokenize(source), tf.int32)
        target = tf.cast(tokenizer.tokenize(target), tf.int32)
        return dict(source_ids=tf.concat([source, eos], 0),
                    target_input_ids=tf.concat([bos, target], 0),
                    target_ids=tf.concat([target, eos], 0))

    return pairs.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def _length(example):
    """The longer side's length in tokens (target_input_ids is as long as target_ids)."""
    return tf.maximum(tf.size(example["source_ids"]), tf.size(example["target_ids"]))


def bucket_lengths(max_seq_length):
    """The padded lengths of the training buckets, ascending; the last is max_seq_length.

    Multiples of 8 up to 64, then steps of the largest multiple of 8 within an
    eighth of the length (72, 80, ..., 128, 144, ..., 192, 216, 240, 264, 296,
    ...): a row gets fewer than 8 padding tokens up to 64, and less than an
    eighth of its bucket's length beyond, with few buckets even for long
    sequences (25 for 300).
    """
    lengths, length = [], BUCKET_STEP
    while length < max_seq_length:
        lengths.append(length)
        length += max(BUCKET_STEP, length // 8 // BUCKET_STEP * BUCKET_STEP)
    return lengths + [max_seq_length]


def count_too_long(source, vocabulary, max_seq_length, max_pairs):
    """(too long, looked at): pairs among the first `max_pairs` that training_dataset skips.

    A pair is too long when either side, with its eos (or bos), has more than
    max_seq_length tokens. Tokenizes in Python, for the caller to log the share.
    """
    processor = vocabulary.processor()
    too_long = looked_at = 0
    for pair in source.python_pairs():
        if looked_at == max_pairs:
            break
        looked_at += 1
        too_long += max(len(ids) for ids in processor.EncodeAsIds(list(pair))) + 1 > max_seq_length
    return too_long, looked_at


def training_dataset(source, vocabulary, max_seq_length, batch_size, seed, input_context=None):
    """Endless, seeded batches of exactly `batch_size` pairs, grouped by length.

    Pairs where either side has more than max_seq_length tokens (with its eos
    or bos) are skipped, not truncated (a truncated target would teach the
    model to stop mid-sentence), as tensor2tensor and fairseq do;
    count_too_long measures how many. If every pair is too long this dataset
    never yields, so callers should refuse to train then.

    Pairs go through a seeded shuffle buffer, then into the bucket of their
    longer side (`bucket_lengths`); a bucket emits a batch when it holds
    batch_size pairs, all three fields padded with 0 to the bucket's length.

    Args:
      source: a ParallelText (or anything with `pairs(seed, input_context)`).
      input_context: a tf.distribute.InputContext, to read one pipeline's share.
    """
    if max_seq_length < 2:
        raise ValueError("--max_seq_length=%d leaves no room for a sentence: a side is at least one token "
                         "plus eos (or bos)." % max_seq_length)
    if batch_size < 1:
        raise ValueError("--batch_size=%d: expected a positive number of sentence pairs per batch." % batch_size)
    lengths = bucket_lengths(max_seq_length)
    dataset = examples(source.pairs(seed, input_context), vocabulary)
    dataset = dataset.filter(lambda example: _length(example) <= max_seq_length)
    dataset = dataset.shuffle(SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)
    # Bucket i holds lengths below boundary i (lengths[i] + 1), over the previous bucket's;
    # pad_to_bucket_boundary pads to boundary - 1 = lengths[i]. The bucket past the last
    # boundary stays empty: nothing longer than max_seq_length gets through the filter.
    dataset = dataset.bucket_by_sequence_length(
        _length, bucket_boundaries=[length + 1 for length in lengths],
        bucket_batch_sizes=[batch_size] * (len(lengths) + 1), pad_to_bucket_boundary=True,
        drop_remainder=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


def sources_by_length(source, vocabulary, batch_size):
    """Every source once, longest first, in batches: (indices int64 [n], source_ids int32 [n, S]) NumPy pairs.

    What beam search translates: a batch decodes until its last sentence ends,
    so batches of similar lengths end together and pad less. `indices` are the
    sources' positions in the input (from 0); ties keep input order. Each row
    is padded with 0 to the longest in its batch.
    """
    sources = [example["source_ids"].numpy() for example in examples(source.pairs(), vocabulary)]
    order = sorted(range(len(sources)), key=lambda index: -len(sources[index]))
    for start in range(0, len(order), batch_size):
        chosen = order[start:start + batch_size]
        ids = np.zeros([len(chosen), len(sources[chosen[0]])], np.int32)
        for row, index in enumerate(chosen):
            ids[row, :len(sources[index])] = sources[index]
        yield np.array(chosen, np.int64), ids


def evaluation_dataset(source, vocabulary, batch_size):
    """Every pair once, in input order, with no length limit; the last batch may be smaller.

    Each field is padded with 0 to the longest in its batch; `index` int64
    [batch] is each pair's position in the input (from 0), so translations can
    be written in input order.
    """
    dataset = examples(source.pairs(), vocabulary).enumerate()
    dataset = dataset.map(lambda index, example: dict(example, index=index))
    return dataset.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)
