r"""Batched BERT tokenization in TensorFlow ops, with the original's exact ids.

`FastFullTokenizer` produces exactly the ids of
`bert_tokenization.FullTokenizer` for every input, but tokenizes a whole batch
with a handful of TensorFlow ops, so it runs in C++ and can be called inside
`tf.data.Dataset.map`.

`tensorflow_text.BertTokenizer` cannot give those ids (its case folding is
NFKC, not `str.lower()`; its word limit counts bytes; its control characters
differ), so the original's basic step is rebuilt from primitive string ops:

  1. Drop invalid UTF-8, like `bytes.decode("utf-8", "ignore")`.
  2. Delete Cc except \t\n\r, Cf, and U+FFFD: the deletions of `_clean_text`.
  3. Only when lower-casing: `str.lower()` (see `_lower`: ICU's tables are
     Unicode 13, Python 3.11's are 14), NFD, then delete `\p{Mn}`.
  4. Space out punctuation and CJK characters, turn non-ASCII whitespace into
     spaces, split on whitespace. Most rows leave this to FastWordpiece's
     end-to-end mode, which splits words itself with the same classes for
     every character (tested); see `_tokenize_utf8`.

Step 3 runs on the whole text where the original applies it per word, with
the same result (fast_tokenization_test.py checks every assigned code point).
WordPiece is `tensorflow_text.FastWordpieceTokenizer` (the same result as the
original's greedy loop), or `WordpieceTokenizer` with a lookup table for a
vocab FastWordpiece rejects (a token over 256 bytes). Words over 200
characters become the unknown token before WordPiece (rows that may hold one
take step 4).

Residual differences, none reachable from text that decodes from UTF-8 and
uses only characters assigned in Unicode 14 (Python 3.11's `unicodedata`): a
code point assigned later follows the newer tables of RE2 and ICU inside
TensorFlow (e.g. U+0ECE with lower-casing, U+11B00 in both modes), and a lone
surrogate in a `str` is replaced by U+FFFF, which every step treats as the
original treats the surrogate.

Each step and why it gives the original's ids:
docs/data-and-vocabularies.md#how-fastfulltokenizer-matches-fulltokenizer.
Measurements: docs/performance.md#why-the-tokenizers.
"""

import collections
import functools
import gc
import os
import re
import sys
import unicodedata
from typing import List, Sequence, Union

import tensorflow as tf
import tensorflow_text as tf_text

from tokenization import bert_tokenization

# The original's default limit on characters per word (WordpieceTokenizer).
_MAX_CHARS_PER_WORD = 200
# UTF-8 needs at most 4 bytes per code point.
_MAX_BYTES_PER_WORD = 4 * _MAX_CHARS_PER_WORD
_UNK_TOKEN = "[UNK]"

# FastWordpiece rejects vocab tokens longer than this (UTF-8 bytes, without
# the "##"); a vocab with such a token uses the lookup-table WordPiece.
_FAST_WORDPIECE_MAX_TOKEN_BYTES = 256

# _clean_text deletes NUL, U+FFFD, and _is_control chars: categories Cc
# (exactly U+0000-001F and U+007F-009F, fixed by Unicode's stability policy)
# and Cf, but not \t, \n, \r, which it keeps as whitespace.
_CONTROL_RE = r"[\x{0}-\x{8}\x{B}\x{C}\x{E}-\x{1F}\x{7F}-\x{9F}\p{Cf}\x{FFFD}]"
# What tf.strings.split() splits on (tested): ASCII whitespace only.
_ASCII_WHITESPACE = " \t\n\x0b\x0c\r"
# The rest of what Python's str.split() splits on (tested). Only U+0085 and
# U+001C-001F are not also _is_whitespace; being Cc they are deleted first.
_OTHER_SPLIT_WHITESPACE_CHARS = (
    r"\x{1C}-\x{1F}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}"
    r"\x{202F}\x{205F}\x{3000}")
# _is_punctuation: all non-alphanumeric printable ASCII, and category P*.
_PUNCTUATION_CHARS = (
    r"\x{21}-\x{2F}\x{3A}-\x{40}\x{5B}-\x{60}\x{7B}-\x{7E}\p{P}")
# BasicTokenizer._is_chinese_char.
_CJK_CHARS = "".join(
    r"\x{%X}-\x{%X}" % (first, last)
    for first, last in bert_tokenization._CJK_RANGES)
# Rewritten to " \1 ": a punctuation or CJK char becomes a word of its own
# (group 1), and whitespace tf.strings.split() does not know becomes spaces.
# \p{Zs} mirrors _is_whitespace; it is all in the explicit list as well.
_SPACE_OUT_RE = r"([%s%s])|[%s\p{Zs}]" % (
    _PUNCTUATION_CHARS, _CJK_CHARS, _OTHER_SPLIT_WHITESPACE_CHARS)
_COMBINING_MARK_RE = r"\p{Mn}"
# A run of more than 200 chars without ASCII whitespace: the rows where a
# word may exceed the original's limit (a cheap, conservative test, as words
# also end at other whitespace, punctuation and CJK chars).
_LONG_RUN_RE = r"(?s).*[^\t\n\r ]{%d}.*" % (_MAX_CHARS_PER_WORD + 1)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# `tokenize_to_ids` splits a batch into parts of at least this many rows,
# tokenized concurrently; smaller parts cost more in per-op overhead than
# they gain.
_MIN_ROWS_PER_PART = 64


def _usable_cpus():
    """CPUs this process may run on (its affinity mask where there is one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # Not on Linux.
        return os.cpu_count() or 1


def _to_utf8(text: Union[str, bytes]) -> bytes:
    """Returns `text` as valid UTF-8 bytes for `_tokenize_utf8`.

    Raises:
      ValueError: if `text` is neither `str` nor `bytes`, as
        `convert_to_unicode` does.
    """
    if isinstance(text, str):
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates; see the module docstring.
            return _LONE_SURROGATE.sub("\uffff", text).encode("utf-8")
    if isinstance(text, bytes):
        # Drops invalid UTF-8 exactly as `convert_to_unicode` does, and is
        # ~20x faster than the `unicode_transcode` op it saves.
        return text.decode("utf-8", "ignore").encode("utf-8")
    raise ValueError("Unsupported string type: %s" % (type(text),))


def _strip_suffix_indicator(token):
    return token[2:] if token.startswith("##") else token


def _can_match(token):
    """Whether the original WordPiece could ever output vocab `token`.

    Words are non-empty, have no whitespace and at most 200 characters; a
    "##" piece is a non-empty part of a word after its first character.
    """
    piece = _strip_suffix_indicator(token)
    max_len = _MAX_CHARS_PER_WORD - (1 if token.startswith("##") else 0)
    return 0 < len(piece) <= max_len and piece.split() == [piece]


def _char_class(chars):
    """RE2 character-class body (no brackets) matching exactly `chars`."""
    ranges = []
    for cp in sorted(ord(c) for c in chars):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(r"\x{%X}" % first if first == last else
                   r"\x{%X}-\x{%X}" % (first, last) for first, last in ranges)


_CaseTables = collections.namedtuple(
    "_CaseTables", ["lower_gaps", "cased_class", "ignorable_class"])


@functools.lru_cache(maxsize=None)
def _case_tables():
    """What `tf.strings.lower` needs to reproduce Python's `str.lower()`.

    TensorFlow 2.20 lower-cases with an ICU of Unicode 13, Python 3.11 with
    Unicode 14. Two things differ:
      * the 40 capitals added in Unicode 14 (Vithkuqi, some Latin and
        Glagolitic letters) are not lower-cased by ICU;
      * the final-sigma rule ("Σ" -> "ς" when preceded by a cased letter and
        not followed by one, skipping case-ignorable chars) sees letters and
        marks added in Unicode 14 as neither cased nor case-ignorable.
    Both are derived here by probing Python itself (and ICU for the gaps),
    not hard-coded, so they follow either library's upgrades. Costs ~0.3 s
    once per process.

    Returns:
      _CaseTables with
        lower_gaps: tuple of (char, char.lower()) pairs ICU gets wrong;
        cased_class: RE2 class body, chars that are cased and not
          case-ignorable for Python;
        ignorable_class: RE2 class body, case-ignorable chars for Python.
    """
    cased, ignorable, changed = [], [], []
    for cp in range(sys.maxunicode + 1):
        char = chr(cp)
        # Unassigned, surrogate and private-use code points have no case.
        if unicodedata.category(char) in ("Cn", "Cs", "Co"):
            continue
        if char.lower() != char:
            changed.append(char)
        # Python's final-sigma rule skips case-ignorable chars backwards from
        # "Σ" and then looks for a cased char; "-" is neither.
        if ("-" + char + "\u03a3").lower()[-1] == "\u03c2":
            cased.append(char)
        elif ("\u0391" + char + "\u03a3").lower()[-1] == "\u03c2":
            ignorable.append(char)

    with tf.init_scope():  # Eager even if first called while tracing.
        lowered = tf.strings.lower(
            tf.constant([c.encode("utf-8") for c in changed]),
            encoding="utf-8").numpy()
    gaps = tuple((c, c.lower()) for c, l in zip(changed, lowered)
                 if l.decode("utf-8") != c.lower())
    return _CaseTables(gaps, _char_class(cased), _char_class(ignorable))


def _if_any_match(text, char_class, fn):
    """`fn(text)` if any string of `text` contains a char of `char_class`.

    Skipping `fn` costs one regex scan, so rare fix-ups stay cheap.
    """
    found = tf.strings.regex_full_match(text, r"(?s).*[%s].*" % char_class)
    return tf.cond(tf.reduce_any(found), lambda: fn(text), lambda: text)


def _drop_invalid_utf8(strings):
    """Drops invalid UTF-8 like `bytes.decode("utf-8", "ignore")`.

    (errors="replace" would do as well: `_CONTROL_RE` deletes U+FFFD.)
    """
    return tf.strings.unicode_transcode(
        strings, input_encoding="UTF-8", output_encoding="UTF-8",
        errors="ignore")


def byte_to_char_offsets(strings, *byte_offsets):
    """Character indices of byte offsets into UTF-8 strings.

    Args:
      strings: tf.Tensor[string, [n]].
      *byte_offsets: tf.RaggedTensor[int64, [n, (k)]] each, offsets at the
        start of a character of their string, or at its end.

    Returns:
      A list of tf.RaggedTensor[int64, [n, (k)]], one per `byte_offsets`.
    """
    _, char_starts = tf.strings.unicode_decode_with_offsets(strings, "UTF-8")
    # The end (or an empty string) sorts after every start.
    padded = tf.concat([char_starts.to_tensor(tf.int64.max),
                        tf.fill([tf.shape(strings)[0], 1], tf.int64.max)], axis=1)
    return [tf.RaggedTensor.from_tensor(
        tf.searchsorted(padded, offsets.to_tensor(0), side="left", out_type=tf.int64),
        lengths=offsets.row_lengths()) for offsets in byte_offsets]


class FastFullTokenizer(object):
    """Batched, graph-compatible equivalent of `FullTokenizer`.

    Attributes:
      vocab: OrderedDict token (str) -> id (int), from `load_vocab`.
      inv_vocab: dict id (int) -> token (str).
      do_lower_case: bool.
      num_parallel_parts: int, how many parts of a batch `tokenize_to_ids`
        tokenizes at once.
    """

    def __init__(self, vocab_file, do_lower_case=True, num_parallel_parts=None):
        """Loads `vocab_file` and builds the WordPiece ops.

        Args:
          vocab_file: path of a BERT vocab file (one token per line); any
            path `tf.io.gfile` can open.
          do_lower_case: bool, must match the checkpoint, as for
            `FullTokenizer`.
          num_parallel_parts: int >= 1 or None. `tokenize_to_ids` splits a
            batch into up to this many parts of consecutive rows (each of at
            least 64 rows) and tokenizes them concurrently: TensorFlow's
            string ops use one thread each, so one batch keeps one core
            busy. None: the CPUs this process may use.

        Raises:
          FileNotFoundError: if `vocab_file` does not exist.
          ValueError: if the vocab has no "[UNK]" token, or
            `num_parallel_parts` is below 1.
        """
        if num_parallel_parts is None:
            num_parallel_parts = _usable_cpus()
        if num_parallel_parts < 1:
            raise ValueError("num_parallel_parts must be at least 1, got %d."
                             % num_parallel_parts)
        self.num_parallel_parts = num_parallel_parts
        self.vocab = bert_tokenization.load_vocab(vocab_file)
        self.inv_vocab = {v: k for k, v in self.vocab.items()}
        self.do_lower_case = do_lower_case
        # Only lower-casing needs them; computed here, outside any graph.
        self._case_tables = _case_tables() if do_lower_case else None
        if _UNK_TOKEN not in self.vocab:
            raise ValueError(
                "Vocab file %s has no %s token; BERT needs it for words that "
                "cannot be split into wordpieces." % (vocab_file, _UNK_TOKEN))

        self._wordpiece = self._build_wordpiece(split_words=False)
        # None for a vocab FastWordpiece rejects.
        self._split_and_wordpiece = (
            self._build_wordpiece(split_words=True)
            if isinstance(self._wordpiece, tf_text.FastWordpieceTokenizer)
            else None)
        # Part count -> tf.function; `tokenize_to_ids` sends valid UTF-8 only
        # (see `_to_utf8`); one trace for every batch size.
        self._tokenize_in_parts = {}

    def wordpiece_tokenizers(self):
        """The tensorflow_text tokenizers it calls.

        A tf.Module that uses this tokenizer in a SavedModel keeps them as
        attributes, so that the resources they own (the lookup table of the
        fallback WordPiece op) are saved with it.
        """
        return [op for op in (self._wordpiece, self._split_and_wordpiece) if op is not None]

    def _build_wordpiece(self, split_words):
        """A tensorflow_text tokenizer for the WordPiece step.

        Both options below run the original's greedy longest-match-first and
        emit the unknown token for a word with an unmatched part. Their byte
        limit is set so that it never triggers on a word of at most 200
        characters; longer words are handled in `_words_to_ids`.

        Args:
          split_words: False: [..., (words)] -> [..., (words), (ids)].
            True: [batch] normalized text -> [batch, (ids)], splitting words
            inside the op (FastWordpiece only, see `_tokenize_utf8`).

        Returns:
          A FastWordpieceTokenizer, or, for a vocab it rejects and if not
          `split_words`, a WordpieceTokenizer.
        """
        usable = [t for t in self.vocab if _can_match(t)]
        if any(len(_strip_suffix_indicator(t).encode("utf-8")) >
               _FAST_WORDPIECE_MAX_TOKEN_BYTES for t in usable):
            assert not split_words
            # Exotic vocab: ~2x slower over all than FastWordpiece, same ids.
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    list(self.vocab.keys()),
                    tf.constant(list(self.vocab.values()), tf.int64)),
                default_value=-1)
            return tf_text.WordpieceTokenizer(
                table,
                suffix_indicator="##",
                max_bytes_per_word=_MAX_BYTES_PER_WORD,
                token_out_type=tf.int64,
                unknown_token=_UNK_TOKEN)

        # FastWordpiece takes the vocab as a list indexed by id and rejects
        # duplicates. Ids not reachable through `vocab` (a token repeated in
        # the file keeps only its last id, as in load_vocab) and tokens that
        # can never match get a unique placeholder that starts with U+FFFD
        # and so can never match a word either: _CONTROL_RE deletes U+FFFD.
        # (Not whitespace: with a vocab token starting with a space, the
        # end-to-end mode turns whitespace into unknown tokens.)
        num_ids = max(self.vocab.values()) + 1
        id_to_piece = ["\ufffdunused%d" % i for i in range(num_ids)]
        for token in usable:
            id_to_piece[self.vocab[token]] = token
        return tf_text.FastWordpieceTokenizer(
            vocab=id_to_piece,
            suffix_indicator="##",
            max_bytes_per_word=_MAX_BYTES_PER_WORD,
            token_out_type=tf.int64,
            unknown_token=_UNK_TOKEN,
            no_pretokenization=not split_words)

    def tokenize_tensor(self, strings):
        """Tokenizes a batch of strings into wordpiece ids, in graph ops.

        Usable eagerly, inside `tf.function` and in `tf.data.Dataset.map`.

        Args:
          strings: tf.Tensor[string, [batch]] of UTF-8 text (invalid bytes
            are dropped). A scalar string is also accepted.

        Returns:
          tf.RaggedTensor[int64, [batch, (tokens)]] of wordpiece ids, the
          ids `FullTokenizer` gives for each string; for a scalar input a
          tf.Tensor[int64, [tokens]].

        Raises:
          ValueError: if `strings` has rank 2 or more, or unknown rank.
        """
        strings = tf.convert_to_tensor(strings, dtype=tf.string)
        if strings.shape.rank == 0:
            return self.tokenize_tensor(tf.expand_dims(strings, 0))[0]
        if strings.shape.rank != 1:
            raise ValueError(
                "tokenize_tensor expects a scalar or a 1-D batch of strings, "
                "got shape %s" % (strings.shape,))
        return self._tokenize_utf8(_drop_invalid_utf8(strings))

    def basic_words(self, strings):
        """`BasicTokenizer.tokenize`'s words, in graph ops (steps 2-4 of the module docstring).

        Args:
          strings: tf.Tensor[string, [batch]] of valid UTF-8.

        Returns:
          tf.RaggedTensor[string, [batch, (words)]], lower-cased and without
          accents when do_lower_case (create_vocab.py learns from these).
        """
        return self._split_words(self._normalize(strings))

    def tokenize_words_with_spans(self, words):
        """Wordpiece ids of single words, and where each piece is in its word.

        For SQuAD answers in a SavedModel: the characters of a span of
        pieces, as run_squad.py's `get_final_text` recovers them.

        Args:
          words: tf.Tensor[string, [n]], whitespace-free words (valid UTF-8).

        Returns:
          (ids, begin, end, exact):
            ids: tf.RaggedTensor[int64, [n, (pieces)]], `tokenize_tensor`'s ids;
            begin, end: tf.RaggedTensor[int64, [n, (pieces)]], each piece's
              [begin, end) in characters of its word;
            exact: tf.Tensor[bool, [n]], whether those spans are the piece's
              own characters. Not for a word whose normalisation changes
              its number of characters (deleted control characters), or
              that took the 200-character path; its pieces then span the
              whole word, which is also what `get_final_text` falls back to.
        """
        words = tf.convert_to_tensor(words, dtype=tf.string)
        # Normalised once, for the ids (as tokenize_tensor) and for the offsets.
        normalized = self._normalize(_drop_invalid_utf8(words))
        ids = self._tokenize_normalized(normalized)
        word_chars = tf.strings.length(words, unit="UTF8_CHAR")
        piece_row = ids.value_rowids()
        whole_begin = tf.zeros_like(ids.flat_values)
        whole_end = tf.gather(tf.cast(word_chars, tf.int64), piece_row)
        if self._split_and_wordpiece is None:
            exact = tf.zeros_like(word_chars, dtype=tf.bool)
            return ids, ids.with_flat_values(whole_begin), ids.with_flat_values(whole_end), exact
        _, byte_begin, byte_end = self._split_and_wordpiece.tokenize_with_offsets(normalized)
        char_begin, char_end = byte_to_char_offsets(normalized, byte_begin, byte_end)
        exact = tf.logical_and(
            tf.equal(byte_begin.row_lengths(), ids.row_lengths()),
            tf.equal(tf.strings.length(normalized, unit="UTF8_CHAR"), word_chars))
        # Piece j of row r of `ids` is piece j of the same row of the offsets
        # where `exact`; elsewhere the index is clipped and not used.
        position = tf.range(tf.size(ids.flat_values, out_type=tf.int64)) - tf.gather(ids.row_splits, piece_row)
        source = tf.gather(byte_begin.row_splits, piece_row) + tf.minimum(
            position, tf.maximum(tf.gather(byte_begin.row_lengths(), piece_row) - 1, 0))
        exact_piece = tf.gather(exact, piece_row)

        def spans(offsets, whole):
            chars = tf.concat([offsets.flat_values, [0]], axis=0)  # never empty for the gather
            return ids.with_flat_values(tf.where(exact_piece, tf.gather(chars, source), whole))

        return ids, spans(char_begin, whole_begin), spans(char_end, whole_end), exact

    def _tokenize_utf8(self, strings):
        """`tokenize_tensor` for a tf.Tensor[string, [batch]] of valid UTF-8.

        FastWordpiece can split words itself (its end-to-end mode): on
        whitespace, punctuation and CJK chars, with exactly the original's
        classes for every character assigned in Unicode 14 (tested), and
        ~4x faster than `_split_words`. But it cannot apply the original's
        200-character limit (its own limit is in bytes), so rows that may
        hold a longer word take the `_split_words` way.
        """
        return self._tokenize_normalized(self._normalize(strings))

    def _tokenize_normalized(self, text):
        """`_tokenize_utf8` after `_normalize`."""
        if self._split_and_wordpiece is None:
            return self._words_to_ids(self._split_words(text))

        maybe_long = tf.strings.regex_full_match(text, _LONG_RUN_RE)

        def split_rows_by_length():
            short_rows = tf.where(~maybe_long)[:, 0]
            long_rows = tf.where(maybe_long)[:, 0]
            ids = tf.concat([
                self._split_and_wordpiece.tokenize(
                    tf.gather(text, short_rows)),
                self._words_to_ids(self._split_words(
                    tf.gather(text, long_rows))),
            ], axis=0)
            # Back to the input order.
            order = tf.math.invert_permutation(
                tf.concat([short_rows, long_rows], axis=0))
            return tf.gather(ids, order)

        return tf.cond(tf.reduce_any(maybe_long), split_rows_by_length,
                       lambda: self._split_and_wordpiece.tokenize(text))

    def _words_to_ids(self, words):
        """WordPiece with the original's limit of 200 characters per word.

        Args:
          words: tf.RaggedTensor[string, [batch, (words)]].

        Returns:
          tf.RaggedTensor[int64, [batch, (tokens)]].
        """
        # Counted in code points like the original (the WordPiece ops count
        # bytes).
        flat_words = words.flat_values
        too_long = tf.strings.length(
            flat_words, unit="UTF8_CHAR") > _MAX_CHARS_PER_WORD
        flat_words = tf.where(too_long, _UNK_TOKEN, flat_words)
        # [batch, (words), (pieces)] -> [batch, (pieces)].
        pieces = self._wordpiece.tokenize(words.with_flat_values(flat_words))
        return pieces.merge_dims(1, 2)

    def _normalize(self, text):
        """Steps 2 and 3 of the module docstring, on valid UTF-8."""
        # Must come before lower-casing: tf.strings.lower stops at a NUL.
        text = tf.strings.regex_replace(text, _CONTROL_RE, "")
        if self.do_lower_case:
            text = self._lower(text)
            text = tf_text.normalize_utf8(text, "NFD")
            text = tf.strings.regex_replace(text, _COMBINING_MARK_RE, "")
        return text

    @staticmethod
    def _split_words(text):
        """Step 4 of the module docstring: [batch] -> [batch, (words)]."""
        text = tf.strings.regex_replace(text, _SPACE_OUT_RE, r" \1 ")
        return tf.strings.split(text)

    def _lower(self, text):
        """`str.lower()` on a tf.Tensor[string] of valid UTF-8 without NUL.

        Args:
          text: tf.Tensor[string, [batch]].

        Returns:
          tf.Tensor[string, [batch]], each string as Python lower-cases it.


        `tf.strings.lower` (ICU) does the work; see `_case_tables` for the
        characters fixed up beforehand. All "Σ" are lower-cased first, by
        Python's rule, because ICU decides final sigma with older tables.
        Each fix-up only runs on batches that need it; one scan for both
        tells whether any does (on most text neither).
        """
        tables = self._case_tables
        gaps_class = "".join(r"\x{%X}" % ord(c) for c, _ in tables.lower_gaps)

        def fix_gaps(fixed):
            for upper, lower in tables.lower_gaps:
                fixed = tf.strings.regex_replace(
                    fixed, r"\x{%X}" % ord(upper), lower)
            return fixed

        def fix_up(fixed):
            fixed = _if_any_match(fixed, r"\x{3A3}",
                                  self._lower_capital_sigma)
            if tables.lower_gaps:
                fixed = _if_any_match(fixed, gaps_class, fix_gaps)
            return fixed

        text = _if_any_match(text, r"\x{3A3}" + gaps_class, fix_up)
        return tf.strings.lower(text, encoding="utf-8")

    def _lower_capital_sigma(self, text):
        """Replaces every "Σ" by "σ" or final "ς" exactly as `str.lower()`.

        Python: "Σ" is final iff  cased ignorable* Σ  and not followed by
        ignorable* cased, where "cased" here means cased and not ignorable
        (the search skips every ignorable char first). RE2 has no
        look-around, so this is done in passes, each a plain regex_replace.
        Whitespace and CJK chars are neither cased nor ignorable, so running
        this on the whole text gives what the original gets per token.
        """
        cased = "[%s]" % self._case_tables.cased_class
        ignorable = "[%s]*" % self._case_tables.ignorable_class
        # Pass 1 and 2: "Σ" followed by a cased char is never final. A match
        # consumes the following char, so a "Σ" that was the following char
        # of the previous match is only handled by the second pass; "σ" is
        # cased too, so it still counts as the following char of a "Σ".
        not_final = r"\x{3A3}(%s%s)" % (ignorable, cased)
        for _ in range(2):
            text = tf.strings.regex_replace(text, not_final, "\u03c3\\1")
        # Pass 3: a "Σ" left now is final iff a cased char precedes it. That
        # char is never a "Σ" left, or pass 1/2 would have replaced that one.
        text = tf.strings.regex_replace(
            text, r"(%s%s)\x{3A3}" % (cased, ignorable), "\\1\u03c2")
        # Pass 4: the rest (no cased char before) is plain sigma.
        return tf.strings.regex_replace(text, r"\x{3A3}", "\u03c3")

    def tokenize_to_ids(
            self, texts: Sequence[Union[str, bytes]]) -> List[List[int]]:
        """Tokenizes a batch of texts into wordpiece ids.

        Args:
          texts: sequence of `str` or UTF-8 `bytes`, length batch.

        Returns:
          list (length batch) of lists of int ids, equal to
          `FullTokenizer.convert_tokens_to_ids(FullTokenizer.tokenize(t))`.
        """
        data = [_to_utf8(t) for t in texts]
        if not data:
            return []
        num_parts = max(1, min(self.num_parallel_parts, len(data) // _MIN_ROWS_PER_PART))
        ids = self._batch_function(num_parts)(tf.constant(data, dtype=tf.string))
        return _to_lists(ids)

    def _batch_function(self, num_parts):
        """A tf.function: tf.Tensor[string, [batch]] -> `_tokenize_utf8`'s ids.

        The rows are cut into `num_parts` runs of consecutive rows, each
        tokenized by its own ops; nothing connects the runs until the final
        concat, so TensorFlow's executor runs them on separate threads.
        """
        function = self._tokenize_in_parts.get(num_parts)
        if function is None:
            def tokenize_parts(strings):
                size = tf.shape(strings)[0]
                bounds = [size * part // num_parts for part in range(num_parts + 1)]
                return tf.concat([self._tokenize_utf8(strings[begin:end])
                                  for begin, end in zip(bounds, bounds[1:])], axis=0)

            function = tf.function(
                tokenize_parts if num_parts > 1 else self._tokenize_utf8,
                input_signature=[tf.TensorSpec([None], tf.string)])
            self._tokenize_in_parts[num_parts] = function
        return function

    def tokenize(self, texts: Sequence[Union[str, bytes]]) -> List[List[str]]:
        """Tokenizes a batch of texts into wordpiece strings.

        Args:
          texts: sequence of `str` or UTF-8 `bytes`, length batch.

        Returns:
          list (length batch) of lists of `str` wordpieces, equal to
          `FullTokenizer.tokenize(t)` for each text.
        """
        inv_vocab = self.inv_vocab
        return [[inv_vocab[i] for i in row]
                for row in self.tokenize_to_ids(texts)]

    def convert_tokens_to_ids(self, tokens):
        """list of str -> list of int. KeyError on a token not in vocab."""
        return bert_tokenization.convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids):
        """list of int -> list of str. KeyError on an unknown id."""
        return bert_tokenization.convert_by_vocab(self.inv_vocab, ids)


def _to_lists(ragged):
    """tf.RaggedTensor [batch, (tokens)] -> list of lists of int, with Python's cyclic GC paused.

    The lists hold ints only and can form no cycle, but creating one per row
    counts towards the collector's allocation threshold, and the collections
    that triggers walk every container the process holds. In the tokenization
    benchmark, which keeps the ids of the other paths, the default two parts
    ran at 2.4-2.6M tokens/s with the collector running and 6.1M with it off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ragged.to_list()
    finally:
        if was_enabled:
            gc.enable()
