"""Raw strings -> BERT's input ids, in TensorFlow ops (for SavedModel signatures).

`TextInputs` tokenizes with `FastFullTokenizer` (exactly `FullTokenizer`'s
ids, tensorflow-text ops only) and packs one or two texts the way
run_classifier.py's `convert_single_example` does:

    [CLS] a [SEP]            segment ids 0 ... 0
    [CLS] a [SEP] b [SEP]    segment ids 0 ... 0 1 ... 1

A pair is truncated as the original's `_truncate_seq_pair` (pop from the
longer text, from b on ties) to max_seq_length - 3 tokens; a single text, or
a b that tokenizes to nothing, to max_seq_length - 2. The pop loop has a
closed form (`truncated_lengths`), so a whole batch is truncated at once.

A SavedModel that calls these ops loads in a process that has imported
`tensorflow_text` (which registers the ops); nothing of this project is
needed there.
"""

import tensorflow as tf

CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
UNK_TOKEN = "[UNK]"


def truncated_lengths(length_a, length_b, budget):
    """The lengths `_truncate_seq_pair` leaves, for whole batches.

    Popping from the longer list (b on ties) until the sum fits keeps the
    shorter text whole if it fits in half the budget, else leaves
    ceil(budget / 2) of a and floor(budget / 2) of b:
      a' = min(a, max(budget - b, ceil(budget / 2))),  b' = min(b, budget - a').

    Args:
      length_a, length_b, budget: int tensors of one shape (budget >= 0).

    Returns:
      (a', b'), int tensors of that shape.
    """
    half_up = budget - budget // 2
    kept_a = tf.minimum(length_a, tf.maximum(budget - length_b, half_up))
    kept_b = tf.minimum(length_b, budget - kept_a)
    return kept_a, kept_b


def ragged_head(tokens, lengths):
    """The first `lengths[i]` tokens of each row of a RaggedTensor [batch, (n)]."""
    return tf.RaggedTensor.from_tensor(tokens.to_tensor(), lengths=lengths)


def ragged_column(value, batch_size, present, dtype):
    """RaggedTensor [batch, (0 or 1)] holding `value` where `present` (bool [batch])."""
    return tf.RaggedTensor.from_tensor(
        tf.fill([batch_size, 1], tf.constant(value, dtype)), lengths=tf.cast(present, tf.int64))


class TextInputs(tf.Module):
    """Tokenizes and packs raw text into `input_word_ids`, `input_mask`, `input_type_ids`.

    Attributes:
      vocab_file: str, the vocabulary read.
      do_lower_case: bool.
      max_seq_length: int, the packed length.
      cls_id, sep_id, unk_id: int ids of [CLS], [SEP], [UNK].
    """

    def __init__(self, vocab_file, do_lower_case, max_seq_length, name="text_inputs"):
        """Loads the vocabulary and builds the tokenizer ops.

        Raises:
          ValueError: if max_seq_length < 3, or the vocab lacks [CLS], [SEP]
            or [UNK] (naming the file).
        """
        super().__init__(name=name)
        # Here, not at the top: tensorflow-text loads only when a model is exported, not for every run that
        # imports the exporter.
        from tokenization.fast_tokenization import FastFullTokenizer  # pylint: disable=import-outside-toplevel

        if max_seq_length < 3:
            raise ValueError("max_seq_length must be at least 3 ([CLS] a [SEP] b [SEP] needs room for "
                             "3 special tokens), got %d" % max_seq_length)
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        self.max_seq_length = max_seq_length
        self.tokenizer = FastFullTokenizer(vocab_file, do_lower_case)
        vocab = self.tokenizer.vocab
        missing = [t for t in (CLS_TOKEN, SEP_TOKEN, UNK_TOKEN) if t not in vocab]
        if missing:
            raise ValueError("Vocab file %s lacks %s, which BERT's inputs need." % (vocab_file, ", ".join(missing)))
        self.cls_id, self.sep_id = vocab[CLS_TOKEN], vocab[SEP_TOKEN]
        self.unk_id = vocab[UNK_TOKEN]
        # Tracked so that tf.saved_model.save keeps the resources they own
        # (the lookup table of the fallback WordPiece op).
        self._wordpiece_ops = list(self.tokenizer.wordpiece_tokenizers())

    def tokenize(self, texts):
        """tf.Tensor[string, [batch]] -> tf.RaggedTensor[int64, [batch, (tokens)]] (FullTokenizer's ids)."""
        return self.tokenizer.tokenize_tensor(texts)

    def pack(self, tokens_a, tokens_b=None):
        """Packs token ids as run_classifier.py does.

        Args:
          tokens_a: tf.RaggedTensor[int64, [batch, (tokens)]].
          tokens_b: the same, or None for single texts. Rows of b that are
            empty are packed as single texts (as the original does).

        Returns:
          dict of int32 tf.Tensor [batch, max_seq_length]: input_word_ids,
          input_mask, input_type_ids.
        """
        batch_size = tokens_a.nrows()
        length_a = tokens_a.row_lengths()
        if tokens_b is None:
            tokens_b = tf.RaggedTensor.from_row_lengths(
                tf.zeros([0], tokens_a.dtype), tf.zeros_like(length_a))
        length_b = tokens_b.row_lengths()
        budget = tf.where(length_b > 0, self.max_seq_length - 3, self.max_seq_length - 2)
        kept_a, kept_b = truncated_lengths(length_a, length_b, tf.cast(budget, length_a.dtype))
        dtype = tokens_a.dtype
        everywhere = tf.ones([batch_size], tf.bool)
        first = tf.concat([ragged_column(self.cls_id, batch_size, everywhere, dtype), ragged_head(tokens_a, kept_a),
                           ragged_column(self.sep_id, batch_size, everywhere, dtype)], axis=1)
        second = tf.concat([ragged_head(tokens_b, kept_b), ragged_column(self.sep_id, batch_size, kept_b > 0, dtype)], axis=1)
        return self.pack_segments(first, second)

    def pack_segments(self, first, second):
        """Concatenates two ragged segments (specials included) and pads them.

        Args:
          first, second: tf.RaggedTensor[int, [batch, (tokens)]]; together at
            most max_seq_length tokens per row.

        Returns:
          dict as `pack`.
        """
        shape = [None, self.max_seq_length]
        ids = tf.concat([first, second], axis=1)
        type_ids = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
        return dict(
            input_word_ids=tf.cast(ids.to_tensor(0, shape=shape), tf.int32),
            input_mask=tf.cast(tf.ones_like(ids).to_tensor(0, shape=shape), tf.int32),
            input_type_ids=tf.cast(type_ids.to_tensor(0, shape=shape), tf.int32),
        )

    def encode(self, text_a, text_b=None):
        """Raw strings [batch] (and [batch]) -> the dict of `pack`."""
        return self.pack(self.tokenize(text_a), None if text_b is None else self.tokenize(text_b))
