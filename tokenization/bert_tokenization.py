"""BERT tokenization in pure Python: the original algorithm, unchanged.

This module is the reference implementation of BERT's text pipeline:

  text -> BasicTokenizer (clean, split CJK, lower-case + strip accents,
          split punctuation) -> WordpieceTokenizer (greedy longest-match-first
          against the vocabulary, continuation pieces prefixed "##").

Its output must stay token-for-token identical to the tokenizer the released
BERT checkpoints were pre-trained with, so every quirk of that algorithm is
kept on purpose (for example `_is_punctuation` treats all non-alphanumeric
printable ASCII such as "$" and "^" as punctuation, and `_is_control` only
looks at categories Cc and Cf). `fast_tokenization.FastFullTokenizer` is the
batched TensorFlow Text version and is tested for parity against this module.

Only the standard library: `load_vocab` reads gs:// paths through `file_system`
(which imports TensorFlow for them alone).
"""

import collections
import logging
import re
import unicodedata

import file_system


def convert_to_unicode(text):
    """Returns `text` as a `str`, decoding UTF-8 bytes (invalid bytes dropped).

    Args:
      text: `str` or `bytes`.

    Returns:
      `str`. A `str` input is returned unchanged.

    Raises:
      ValueError: if `text` is neither `str` nor `bytes`.
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        # errors="ignore" as in the original: corrupt bytes vanish silently
        # instead of failing a whole pre-training shard.
        return text.decode("utf-8", "ignore")
    raise ValueError("Unsupported string type: %s" % (type(text),))


def printable_text(text):
    """Returns `text` as a `str` suitable for print() or logging.

    On Python 3 this is the same as `convert_to_unicode`; it is kept because
    callers written against the original API use it.
    """
    return convert_to_unicode(text)


def load_vocab(vocab_file):
    """Loads a vocabulary file (one token per line) into an ordered dict.

    Args:
      vocab_file: path of the vocab file, local or gs://.

    Returns:
      `collections.OrderedDict` mapping token (`str`, the line stripped of
      surrounding whitespace) -> id (`int`, the zero-based line number).
      As in the original, bytes that are not UTF-8 are dropped and a token on
      several lines keeps the last one's id; both are logged as warnings, naming
      the lines, since the tokens then no longer match the model's ids.

    Raises:
      FileNotFoundError: if `vocab_file` does not exist.
    """
    vocab = collections.OrderedDict()
    if not file_system.exists(vocab_file):
        raise FileNotFoundError("BERT vocab file not found: %s" % (vocab_file,))
    with file_system.open_file(vocab_file, "rb") as reader:
        data = reader.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = convert_to_unicode(data)
        bad = [number for number, raw in enumerate(data.split(b"\n"), 1) if not _is_utf8(raw)]
        logging.warning("%s: %d line(s) are not UTF-8 (%s); their bad bytes are dropped, as the original BERT "
                        "does, so those tokens may not match the text.", vocab_file, len(bad), _lines(bad))
    # Lines are split on "\n" only (as GFile.readline() does), so a stray
    # "\r" or U+2028 inside a line does not shift the ids of later tokens.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # The final newline does not start another token.
    repeated = []
    for index, line in enumerate(lines):
        token = line.strip()
        if token in vocab:
            repeated.append(index + 1)
        vocab[token] = index
    if repeated:
        logging.warning("%s: %d line(s) repeat an earlier token (%s); each such token keeps its last line's id, as "
                        "in the original BERT, and the earlier ids are never produced.", vocab_file, len(repeated),
                        _lines(repeated))
    return vocab


def _is_utf8(raw):
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _lines(numbers, shown=5):
    """'line 3, line 9, ...' of the first `shown` line numbers."""
    return ", ".join("line %d" % n for n in numbers[:shown]) + (", ..." if len(numbers) > shown else "")


def convert_by_vocab(vocab, items):
    """Maps each item through `vocab` (a dict); a missing item is a KeyError.

    Args:
      vocab: dict, e.g. token -> id or id -> token.
      items: iterable of keys of `vocab`.

    Returns:
      list of `vocab[item]`, in order.
    """
    return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
    """Token strings -> ids. Raises KeyError on a token not in `vocab`."""
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    """Ids -> token strings. Raises KeyError on an id not in `inv_vocab`."""
    return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
    """Strips `text` and splits it on runs of whitespace (`str.split()`).

    Note that `str.split()` knows more whitespace than `_is_whitespace`
    (for example U+2028 LINE SEPARATOR); the original relies on this.

    Args:
      text: `str`.

    Returns:
      list of `str`, no empty strings.
    """
    text = text.strip()
    if not text:
        return []
    return text.split()


# Checkpoints released by the BERT authors, grouped by how they were trained.
_LOWER_CASED_MODELS = (
    "uncased_L-24_H-1024_A-16",
    "uncased_L-12_H-768_A-12",
    "multilingual_L-12_H-768_A-12",
    "chinese_L-12_H-768_A-12",
)
_CASED_MODELS = (
    "cased_L-12_H-768_A-12",
    "cased_L-24_H-1024_A-16",
    "multi_cased_L-12_H-768_A-12",
)


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
    """Checks `do_lower_case` against the casing of a known BERT checkpoint.

    Only the released checkpoints can be recognised, by the directory name in
    ".../<model_name>/bert_model.ckpt"; anything else passes unchecked.

    Args:
      do_lower_case: bool, the value of the `--do_lower_case` flag.
      init_checkpoint: str or None, the value of `--init_checkpoint`.

    Raises:
      ValueError: if the checkpoint is known to be cased while
        `do_lower_case` is True, or lower-cased while it is False.
    """
    if not init_checkpoint:
        return
    # Same pattern as the original, unescaped "." included, so that exactly
    # the same paths are recognised.
    match = re.match(r"^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
    if match is None:
        return
    model_name = match.group(1)

    if model_name in _LOWER_CASED_MODELS and not do_lower_case:
        checkpoint_kind, expected_flag = "lower-cased (uncased)", True
    elif model_name in _CASED_MODELS and do_lower_case:
        checkpoint_kind, expected_flag = "cased", False
    else:
        return
    raise ValueError(
        "Casing mismatch: you passed `--do_lower_case=%s` with "
        "`--init_checkpoint=%s`, but `%s` is a %s model, so pass "
        "`--do_lower_case=%s` to tokenize the way the model was pre-trained. "
        "If this check is wrong for your checkpoint, rename its directory or "
        "remove the call to validate_case_matches_checkpoint."
        % (do_lower_case, init_checkpoint, model_name, checkpoint_kind,
           expected_flag))


class FullTokenizer(object):
    """End-to-end tokenization: BasicTokenizer then WordpieceTokenizer.

    Attributes:
      vocab: OrderedDict token (str) -> id (int), from `load_vocab`.
      inv_vocab: dict id (int) -> token (str).
    """

    def __init__(self, vocab_file, do_lower_case=True):
        """Loads `vocab_file`; `do_lower_case` must match the checkpoint."""
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {v: k for k, v in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)

    def tokenize(self, text):
        """Tokenizes one text.

        Args:
          text: `str` or UTF-8 `bytes`.

        Returns:
          list of `str` wordpieces, each a key of `self.vocab` or "[UNK]".
        """
        split_tokens = []
        for token in self.basic_tokenizer.tokenize(text):
            split_tokens.extend(self.wordpiece_tokenizer.tokenize(token))
        return split_tokens

    def convert_tokens_to_ids(self, tokens):
        """list of str -> list of int. KeyError on a token not in vocab."""
        return convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids):
        """list of int -> list of str. KeyError on an unknown id."""
        return convert_by_vocab(self.inv_vocab, ids)


class BasicTokenizer(object):
    """Cleans text and splits it on whitespace, punctuation and CJK chars."""

    def __init__(self, do_lower_case=True):
        """Constructs a BasicTokenizer.

        Args:
          do_lower_case: bool, whether to lower-case and strip accents.
        """
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        """Tokenizes one text into basic (pre-wordpiece) tokens.

        Args:
          text: `str` or UTF-8 `bytes`.

        Returns:
          list of non-empty `str` tokens without whitespace.
        """
        text = convert_to_unicode(text)
        text = self._clean_text(text)
        # Ideographs are spaced out before anything else: CJK text has no
        # spaces, and multilingual/Chinese models treat every ideograph as a
        # word. The English models never saw CJK, so this is harmless there.
        text = self._tokenize_chinese_chars(text)

        split_tokens = []
        for token in whitespace_tokenize(text):
            if self.do_lower_case:
                token = token.lower()
                token = self._run_strip_accents(token)
            split_tokens.extend(self._run_split_on_punc(token))

        return whitespace_tokenize(" ".join(split_tokens))

    def _run_strip_accents(self, text):
        """Removes combining marks (category Mn) after NFD decomposition."""
        text = unicodedata.normalize("NFD", text)
        return "".join(c for c in text if unicodedata.category(c) != "Mn")

    def _run_split_on_punc(self, text):
        """Splits `text` so that every punctuation char is its own token."""
        output = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(chars) for chars in output]

    def _tokenize_chinese_chars(self, text):
        """Surrounds every CJK ideograph with spaces."""
        output = []
        for char in text:
            if self._is_chinese_char(ord(char)):
                output.append(" ")
                output.append(char)
                output.append(" ")
            else:
                output.append(char)
        return "".join(output)

    def _is_chinese_char(self, cp):
        """Whether code point `cp` is a CJK Unified/Compatibility Ideograph.

        Only the blocks listed here count: Hangul, Hiragana and Katakana are
        written with spaces (or tokenized as words) and are not split.
        """
        return _is_cjk_codepoint(cp)

    def _clean_text(self, text):
        """Drops NUL, U+FFFD and control chars; maps whitespace to " "."""
        output = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            if _is_whitespace(char):
                output.append(" ")
            else:
                output.append(char)
        return "".join(output)


class WordpieceTokenizer(object):
    """Greedy longest-match-first wordpiece tokenization against a vocab."""

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=200):
        """Constructs a WordpieceTokenizer.

        Args:
          vocab: container of `str` pieces supporting `in` (dict or set);
            continuation pieces carry the "##" prefix.
          unk_token: str emitted for a word that cannot be tokenized.
          max_input_chars_per_word: int; longer words (counted in Unicode
            code points, not bytes) become `unk_token` without matching.
        """
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        """Tokenizes text into wordpieces.

        The text should already have been through `BasicTokenizer`. Example:
        with vocab {"un", "##aff", "##able"}, "unaffable" ->
        ["un", "##aff", "##able"].

        Args:
          text: `str` or UTF-8 `bytes`; split on whitespace into words.

        Returns:
          list of `str` wordpieces; a word with any part that matches no
          vocab entry becomes a single `unk_token`.
        """
        text = convert_to_unicode(text)

        output_tokens = []
        for token in whitespace_tokenize(text):
            chars = list(token)
            if len(chars) > self.max_input_chars_per_word:
                output_tokens.append(self.unk_token)
                continue

            sub_tokens = []
            start = 0
            while start < len(chars):
                # Longest prefix of chars[start:] that is in the vocab.
                end = len(chars)
                cur_substr = None
                while start < end:
                    substr = "".join(chars[start:end])
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    sub_tokens = None
                    break
                sub_tokens.append(cur_substr)
                start = end

            if sub_tokens is None:
                # All-or-nothing: a half-tokenized word would mislead the
                # model more than one [UNK].
                output_tokens.append(self.unk_token)
            else:
                output_tokens.extend(sub_tokens)
        return output_tokens


def _is_whitespace(char):
    """Whether `char` is whitespace: space, \\t, \\n, \\r or category Zs."""
    # \t, \n and \r are technically control characters (Cc) but they
    # separate words, so they count as whitespace here.
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    """Whether `char` is a control char: category Cc or Cf, not \\t\\n\\r."""
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    """Whether `char` is punctuation: any non-alphanumeric printable ASCII
    char, or a char of a Unicode "P*" category."""
    cp = ord(char)
    # Chars such as "^", "$" and "`" are not in Unicode's P* categories, but
    # the original treats them as punctuation for consistency.
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (
            123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


# CJK Unified Ideographs (+ Extensions A-E) and CJK Compatibility Ideographs
# (+ Supplement), as inclusive (first, last) code point ranges.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk_codepoint(cp):
    """Whether code point `cp` (int) lies in one of `_CJK_RANGES`."""
    for first, last in _CJK_RANGES:
        if first <= cp <= last:
            return True
    return False
