"""A fine-tuned SQuAD model as a SavedModel that answers raw questions.

    serving_default(question [batch], context [batch]) ->
        answer [batch] string ("" when the model says there is none),
        start_char, end_char [batch] int64: the answer is context[start:end]
            in characters (whitespace runs inside it read as one space);
            -1 when there is no answer,
        score [batch] float32: start + end logit of the best span,
        is_impossible [batch] bool (SQuAD 2.0 exports only).

Everything run_squad.py does between the JSON and predictions.json happens
in the graph, the same way:
  * the context is split into words on the reader's whitespace (space, tab,
    CR, LF, U+202F), each word wordpieced on its own; the question is
    truncated to max_query_length tokens;
  * windows of max_seq_length - len(question) - 3 doc tokens, each starting
    min(doc_stride, that) after the previous, until one reaches the end;
    a token's max-context window is the one where min(left, right context)
    + 0.01 * window length is largest (the first on ties);
  * per window the n_best_size best start and end positions are paired; a
    pair counts when both are doc tokens, it does not end before it starts,
    it is at most max_answer_length tokens and its start is in its
    max-context window; the best pair over all windows (the first on ties,
    in window, start-rank, end-rank order) is the answer;
  * SQuAD 2.0: the null score is min over windows of start[0] + end[0];
    the answer is "" when null - best > null_score_diff_threshold or no
    pair counts. SQuAD 1.1 with no pair: "empty", as run_squad.py says.
  * The answer's text: the characters from the first piece's first to the
    last piece's last, as get_final_text finds them; when the span holds an
    [UNK] piece, or a word whose normalisation changes its length, the
    whole words, as get_final_text falls back to.

Where this can differ from predictions.json: get_final_text looks the
answer up with str.find in its words, so when the same text occurs earlier
in the first word it takes that one (same text, maybe other case); and
logits of a window computed in another batch can differ in the last bits,
which may reorder exact near-ties.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from serving import saved_model_writer

from serving.text_inputs import ragged_column, ragged_head
from tokenization.fast_tokenization import byte_to_char_offsets
from squad_data import features as squad_features

_STRINGS = tf.TensorSpec([None], tf.string)
# squad_data.examples.SQUAD_WHITESPACE as an RE2 class.
_WHITESPACE_RUN = r"[ \t\r\n\x{202F}]+"
_NO_ANSWER_V1 = "empty"


class SquadServer(tf.Module):
    """Tokenization, windows, the span model and run_squad.py's answer selection in one graph."""

    def __init__(self, model, text_inputs, doc_stride, max_query_length, n_best_size, max_answer_length,
                 version_2_with_negative, null_score_diff_threshold, name="squad"):
        """
        Args:
          model: a built `BertSquadModel`.
          text_inputs: `serving.text_inputs.TextInputs` (its max_seq_length is the windows').
          the rest: run_squad.py's flags of the same names.

        Raises:
          ValueError: as squad_data.features.check_lengths.
        """
        super().__init__(name=name)
        squad_features.check_lengths(text_inputs.max_seq_length, doc_stride, max_query_length)
        self._model = saved_model_writer.ModelReference(model)
        self.variables_of_model = list(model.variables)  # what the signatures read
        self.text_inputs = text_inputs
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.n_best_size = n_best_size
        self.max_answer_length = max_answer_length
        self.version_2_with_negative = version_2_with_negative
        self.null_score_diff_threshold = null_score_diff_threshold
        self.vocab_file = tf.saved_model.Asset(text_inputs.vocab_file)
        self.serving_default = tf.function(self._answer, input_signature=[_STRINGS, _STRINGS])

    def signatures(self):
        return {"serving_default": self.serving_default.get_concrete_function()}

    # ------------------------------------------------------------------ inputs

    def _doc_pieces(self, context):
        """Words and their wordpieces, with character spans.

        Returns:
          dict of RaggedTensors [batch, (pieces)]: ids, word (index of the
          piece's word in its context), begin, end (characters in the
          context), unk (bool), exact (bool: the piece's word maps
          character for character); and word_begin, word_end [batch, (words)].
        """
        words, byte_begin, byte_end = tf_text.regex_split_with_offsets(context, _WHITESPACE_RUN, "")
        word_begin, word_end = byte_to_char_offsets(context, byte_begin, byte_end)
        ids, begin, end, exact = self.text_inputs.tokenizer.tokenize_words_with_spans(words.flat_values)
        flat_word = ids.value_rowids()  # piece -> flat word index
        word_in_context = tf.range(tf.size(words.flat_values, out_type=tf.int64)) - tf.gather(
            words.row_splits, words.value_rowids())

        def per_context(flat_piece_values):
            return tf.RaggedTensor.from_row_splits(
                ids.with_flat_values(flat_piece_values), words.row_splits).merge_dims(1, 2)

        word_offset = tf.gather(word_begin.flat_values, flat_word)
        return dict(
            ids=per_context(ids.flat_values),
            word=per_context(tf.gather(word_in_context, flat_word)),
            begin=per_context(word_offset + begin.flat_values),
            end=per_context(word_offset + end.flat_values),
            unk=per_context(tf.equal(ids.flat_values, self.text_inputs.unk_id)),
            exact=per_context(tf.gather(exact, flat_word)),
            word_begin=word_begin, word_end=word_end,
        )

    # ----------------------------------------------------------------- answer

    def _answer(self, question, context):
        seq_length = self.text_inputs.max_seq_length
        batch_size = tf.shape(context, out_type=tf.int64)[0]
        doc = self._doc_pieces(context)
        query = self.text_inputs.tokenize(question)
        query = ragged_head(query, tf.minimum(query.row_lengths(), self.max_query_length))
        query_length = query.row_lengths()
        num_pieces = doc["ids"].row_lengths()

        # Windows, as squad_lib's doc spans; one (empty) window for an empty context.
        max_tokens = seq_length - query_length - 3
        step = tf.minimum(max_tokens, self.doc_stride)
        num_windows = tf.where(num_pieces > max_tokens,
                               1 + (num_pieces - max_tokens + step - 1) // step, tf.ones_like(num_pieces))
        example = tf.repeat(tf.range(batch_size), num_windows)  # window -> example
        index = tf.ragged.range(num_windows).flat_values  # window -> its rank in the example
        start = index * tf.gather(step, example)
        length = tf.minimum(tf.gather(max_tokens, example), tf.gather(num_pieces, example) - start)
        first_piece = tf.gather(doc["ids"].row_splits, example) + start  # in doc["ids"].flat_values
        window_ids = tf.gather(doc["ids"].flat_values, tf.ragged.range(first_piece, first_piece + length))
        num_windows_total = tf.shape(example, out_type=tf.int64)[0]
        everywhere = tf.ones([num_windows_total], tf.bool)
        dtype = window_ids.dtype
        inputs = self.text_inputs.pack_segments(
            tf.concat([ragged_column(self.text_inputs.cls_id, num_windows_total, everywhere, dtype),
                       tf.gather(query, example),
                       ragged_column(self.text_inputs.sep_id, num_windows_total, everywhere, dtype)], axis=1),
            tf.concat([window_ids, ragged_column(self.text_inputs.sep_id, num_windows_total, everywhere, dtype)], axis=1))
        outputs = self._model.model(dict(input_ids=inputs["input_word_ids"], input_mask=inputs["input_mask"],
                                  token_type_ids=inputs["input_type_ids"]), training=False)
        start_logits = tf.cast(outputs["start_logits"], tf.float32)
        end_logits = tf.cast(outputs["end_logits"], tf.float32)

        # Doc position of each token of each window; -1 outside the doc tokens.
        doc_start = tf.gather(query_length, example) + 2  # token index of the window's first doc token
        token = tf.range(seq_length, dtype=tf.int64)[None, :]
        in_doc = (token >= doc_start[:, None]) & (token < (doc_start + length)[:, None])
        position = tf.where(in_doc, start[:, None] + token - doc_start[:, None], -1)  # [windows, seq]
        is_max_context = self._is_max_context(position, example, index, start, length, num_windows)

        # n-best starts x n-best ends per window.
        k = min(self.n_best_size, seq_length)
        start_logit, start_token = tf.math.top_k(start_logits, k)
        end_logit, end_token = tf.math.top_k(end_logits, k)
        start_ok = tf.gather(in_doc & is_max_context, start_token, batch_dims=1)
        end_ok = tf.gather(in_doc, end_token, batch_dims=1)
        span = end_token[:, None, :] - start_token[:, :, None]  # [windows, k, k]
        valid = (start_ok[:, :, None] & end_ok[:, None, :] & (span >= 0)
                 & (span + 1 <= self.max_answer_length))
        score = tf.where(valid, start_logit[:, :, None] + end_logit[:, None, :], -float("inf"))
        # Per example, candidates in window, start-rank, end-rank order; argmax takes the first best.
        per_example = tf.RaggedTensor.from_row_lengths(
            tf.reshape(score, [-1]), num_windows * k * k).to_tensor(-float("inf"))
        best = tf.argmax(per_example, axis=1)
        best_score = tf.reduce_max(per_example, axis=1)
        has_span = best_score > -float("inf")
        window = tf.cumsum(num_windows, exclusive=True) + best // (k * k)
        start_rank, end_rank = (best % (k * k)) // k, best % k
        first = tf.gather_nd(position, tf.stack(
            [window, tf.cast(tf.gather_nd(start_token, tf.stack([window, start_rank], 1)), tf.int64)], 1))
        last = tf.gather_nd(position, tf.stack(
            [window, tf.cast(tf.gather_nd(end_token, tf.stack([window, end_rank], 1)), tf.int64)], 1))
        answer, begin_char, end_char = self._span_text(context, doc, first, last)

        if self.version_2_with_negative:
            null = tf.math.segment_min(start_logits[:, 0] + end_logits[:, 0], example)
            is_impossible = tf.logical_or(~has_span, null - best_score > self.null_score_diff_threshold)
            none = is_impossible
            no_answer_text = ""
        else:
            none = ~has_span
            no_answer_text = _NO_ANSWER_V1
        result = dict(
            answer=tf.where(none, no_answer_text, answer),
            start_char=tf.where(none, tf.constant(-1, tf.int64), begin_char),
            end_char=tf.where(none, tf.constant(-1, tf.int64), end_char),
            score=best_score,
        )
        if self.version_2_with_negative:
            result["is_impossible"] = is_impossible
        return result

    @staticmethod
    def _is_max_context(position, example, index, start, length, num_windows):
        """bool [windows, seq]: the window is its token's max-context window (squad_lib's rule)."""
        siblings_start = tf.gather(tf.RaggedTensor.from_row_lengths(start, num_windows).to_tensor(0), example)
        siblings_length = tf.gather(tf.RaggedTensor.from_row_lengths(length, num_windows).to_tensor(0), example)
        p = position[:, :, None]
        first, last = siblings_start[:, None, :], (siblings_start + siblings_length - 1)[:, None, :]
        contains = (p >= first) & (p <= last) & (siblings_length[:, None, :] > 0)
        score = (tf.cast(tf.minimum(p - first, last - p), tf.float64)
                 + 0.01 * tf.cast(siblings_length[:, None, :], tf.float64))
        score = tf.where(contains, score, -float("inf"))
        return tf.equal(tf.argmax(score, axis=2), index[:, None]) & (position >= 0)

    @staticmethod
    def _span_text(context, doc, first, last):
        """(text, begin, end) of doc pieces first..last of each example (clipped when there is none)."""
        num_pieces = doc["ids"].row_lengths()
        first = tf.clip_by_value(first, 0, tf.maximum(num_pieces - 1, 0))
        last = tf.clip_by_value(last, 0, tf.maximum(num_pieces - 1, 0))

        def at(ragged, i):
            return tf.gather(tf.pad(ragged.to_tensor(), [[0, 0], [0, 1]]), i, batch_dims=1)

        def count_in_span(flags):
            cumulative = tf.cumsum(tf.cast(flags.to_tensor(False), tf.int64), axis=1, exclusive=False)
            cumulative = tf.pad(cumulative, [[0, 0], [1, 0]])
            return tf.gather(cumulative, last + 1, batch_dims=1) - tf.gather(cumulative, first, batch_dims=1)

        whole_words = (count_in_span(doc["unk"]) > 0) | (count_in_span(doc["exact"].with_flat_values(~doc["exact"].flat_values)) > 0)
        first_word, last_word = at(doc["word"], first), at(doc["word"], last)
        begin = tf.where(whole_words, at(doc["word_begin"], first_word), at(doc["begin"], first))
        end = tf.where(whole_words, at(doc["word_end"], last_word), at(doc["end"], last))
        text = tf.strings.substr(context, begin, end - begin, unit="UTF8_CHAR")
        return tf.strings.regex_replace(text, _WHITESPACE_RUN, " "), begin, end
