"""FullTokenizer's ids at dictionary speed: each distinct word is tokenized once.

BERT's tokenizer works word by word. After its first two steps (drop control
characters and map whitespace to " ", then space out CJK ideographs), the
text is split with `str.split()`, and from there each word's pieces depend
on that word alone (lower-case, strip accents, split punctuation, WordPiece).
So a word's ids can be cached: a text is split, and each word is looked up,
or tokenized by the original code once and remembered.

For a line of printable ASCII (plus tab, newline, carriage return), the first
two steps change nothing that `str.split()` does not already treat as a
space, so such a line is split as it is; any other line goes through the
original's cleaning first. The ids are FullTokenizer's by construction, and
tested against it.

Pure Python, no TensorFlow: it runs in create_pretraining_data's worker
processes. It also has FullTokenizer's methods (`tokenize`,
`convert_tokens_to_ids`, `convert_ids_to_tokens`, `vocab`, `inv_vocab`), so
run_classifier.py, run_squad.py and extract_features.py tokenize with it
(`from_vocab_file`): SQuAD's conversion calls `tokenize` once per word of
every context, where the original's per-call cleaning costs most. Natural
text repeats its words, so the cache is small beside the text (it is cleared
if it ever grows past `max_cached_words`). A word is kept there only once it
is seen a second time: a first sighting waits among at most `max_new_words`
new words (cleared when full), so words that occur once, which a large
corpus has in the hundreds of thousands, do not grow the memory.
"""

import re

from tokenization import bert_tokenization

# Anything but printable ASCII, tab, newline and carriage return.
_NEEDS_CLEANING = re.compile(r"[^\t\n\r\x20-\x7e]")
# An ASCII word's punctuation (the original's: every printable non-alphanumeric
# character) and the runs between.
_ASCII_PUNCTUATION_SPLIT = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~]+")


class _CleaningTable(dict):
    """str.translate table: the original's _clean_text then _tokenize_chinese_chars.

    Both map each character on its own (dropped, to " ", spaced out or kept),
    so one table does both; an entry is made the first time a character is
    seen.
    """

    def __missing__(self, codepoint):
        char = chr(codepoint)
        if codepoint in (0, 0xFFFD) or bert_tokenization._is_control(char):  # pylint: disable=protected-access
            value = None
        elif bert_tokenization._is_whitespace(char):  # pylint: disable=protected-access
            value = " "
        elif bert_tokenization._is_cjk_codepoint(codepoint):  # pylint: disable=protected-access
            value = " %s " % char
        else:
            value = char
        self[codepoint] = value
        return value


class CachedFullTokenizer:
    """Text -> FullTokenizer's ids, with a per-word cache.

    Attributes:
      vocab: dict token -> id.
      inv_vocab: dict id -> token.
    """

    def __init__(self, vocab, do_lower_case=True, max_cached_words=1 << 17, max_new_words=1 << 14):
        """Args: vocab: dict token -> id (load_vocab's); do_lower_case: as FullTokenizer;
        max_cached_words: words seen twice or more kept; max_new_words: words seen once kept.

        Raises:
          ValueError: the vocab has no "[UNK]", which unknown words map to.
        """
        if "[UNK]" not in vocab:
            raise ValueError("The vocab has no [UNK] token (%d tokens)." % len(vocab))
        self.vocab = vocab
        self.inv_vocab = {i: token for token, i in vocab.items()}
        self._do_lower_case = do_lower_case
        self._basic = bert_tokenization.BasicTokenizer(do_lower_case)
        self._wordpiece = bert_tokenization.WordpieceTokenizer(vocab)
        self._cleaning = _CleaningTable()
        self._max_cached_words = max_cached_words
        self._max_new_words = max_new_words
        self._cache = {}  # Words seen at least twice.
        self._new_words = {}  # Words seen once since it was last cleared.
        self._piece_cache = {}  # Punctuation-split pieces of new words.

    @classmethod
    def from_vocab_file(cls, vocab_file, do_lower_case=True):
        """A tokenizer for a BERT vocab file, in place of `FullTokenizer(vocab_file, do_lower_case)`.

        Raises:
          ValueError: the vocab has no "[UNK]" (the message names the file).
        """
        vocab = bert_tokenization.load_vocab(vocab_file)
        try:
            return cls(vocab, do_lower_case)
        except ValueError as error:
            raise ValueError("Vocab file %s: %s" % (vocab_file, error)) from None

    def tokenize(self, text):
        """FullTokenizer.tokenize: `text` (str or UTF-8 bytes) -> list of str wordpieces."""
        ids, _ = self.tokenize_lines([bert_tokenization.convert_to_unicode(text)])
        inv_vocab = self.inv_vocab
        return [inv_vocab[i] for i in ids]

    def convert_tokens_to_ids(self, tokens):
        """list of str -> list of int. KeyError on a token not in vocab."""
        return bert_tokenization.convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids):
        """list of int -> list of str. KeyError on an unknown id."""
        return bert_tokenization.convert_by_vocab(self.inv_vocab, ids)

    def words(self, text):
        """`text` (str) split as the original splits it before lower-casing."""
        if _NEEDS_CLEANING.search(text):
            text = text.translate(self._cleaning)
        return text.split()

    def _uncached_word(self, word):
        """The ids of a word not in the cache: kept among the new words, or cached if seen again."""
        ids = self._new_words.pop(word, None)
        if ids is not None:
            if len(self._cache) >= self._max_cached_words:
                self._cache.clear()
            self._cache[word] = ids
            return ids
        if len(self._new_words) >= self._max_new_words:
            self._new_words.clear()
        if len(self._piece_cache) >= self._max_cached_words:
            self._piece_cache.clear()
        ids = self._tokenize_word(word)
        self._new_words[word] = ids
        return ids

    def _tokenize_word(self, word):
        """A word's ids, computed by the original's steps."""
        if word.isascii():
            # The original's steps, for ASCII: stripping accents changes nothing.
            tokens = _ASCII_PUNCTUATION_SPLIT.findall(word.lower() if self._do_lower_case else word)
        else:
            tokens = self._basic.tokenize(word)
        ids = []
        for token in tokens:
            token_ids = self._piece_cache.get(token)
            if token_ids is None:
                token_ids = [self.vocab[piece] for piece in self._wordpiece.tokenize(token)]
                self._piece_cache[token] = token_ids
            ids += token_ids
        return ids

    def tokenize_to_ids(self, text):
        """The ids of `text` (str), exactly FullTokenizer's (list of int)."""
        return self.tokenize_lines([text])[0]

    def tokenize_lines(self, lines):
        """Ids of many lines at once.

        Args:
          lines: iterable of str.

        Returns:
          (ids, lengths): list of int, all lines' ids in order; list of int,
          the number of ids of each line.
        """
        ids, lengths = [], []
        cache, words, uncached_word = self._cache, self.words, self._uncached_word
        for line in lines:
            before = len(ids)
            for word in words(line):
                word_ids = cache.get(word)
                if word_ids is None:
                    word_ids = uncached_word(word)
                ids += word_ids
            lengths.append(len(ids) - before)
        return ids, lengths
