"""Parity tests: FastFullTokenizer must give exactly FullTokenizer's ids."""

import random
import sys
import unicodedata
import zlib

import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from tokenization import bert_tokenization
from tokenization import fast_tokenization

_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

_CORPUS = [
    # Plain English, punctuation, numbers.
    "The quick brown fox jumps over the lazy dog.",
    "UNwant\u00E9d,running",
    " \tHeLLo!how  \n Are yoU?  ",
    "It's 3:45 p.m. -- isn't it? (Yes/no) $100, 50% off; a^b=c `code` "
    "~tilde~ #1 @user",
    "e-mail: john.doe@example.com, url: https://example.com/a_b?c=d&e=f",
    # Accents (precomposed and combining), ligatures, special casing.
    "Café naïve résumé Ångström ÀÉÎÕÜ",
    "Straße GROSSẞ İstanbul ıİi ﬁne ﬂow ﬀ",
    "e\u0301te\u0301 (combining) o\u0308 A\u030a ṩ \u0344",
    "\u01c5 \u01c4\u01c6 \u1f88 \u2126 \u212a \u212b",
    # Greek, final sigma in every position.
    "ΟΔΥΣΣΕΥΣ ΣΟΦΟΣ. ΑΣ'Β Σ ΝΣ\u00ad",
    "Ὁμηρος ΑΣ\u0301 ΑΣ中Β ΑΣ.Β ΑΣ\u2028Β",
    # CJK, compatibility ideographs, extensions; kana and Hangul.
    "我爱北京天安门。你好，世界！",
    "ah\u535A\u63A8zz \uf900\uf901\ufa0e \U0002f800\U0002f801 "
    "\U00020000\U0002a700\U0002b740\U0002b820 \u3400\u4dbf",
    "ひらがな カタカナー 한국어 \u1100\u1161\u11a8",
    "東京で、「日本語」を話す。",
    # Emoji, ZWJ sequences, skin tones, flags, variation selectors.
    "I \u2764\ufe0f NY 😀😂 👍🏽 👨\u200d👩\u200d👧",
    "🇯🇵 🏳\ufe0f\u200d🌈 a😀b \u263a\ufe0e",
    # Control and format characters.
    "a\x00b c\x07d e\u200bf g\u200dh \ufeffi j\ufffdk l\x7fm n\x1bo p\u00adq "
    "\u2060r \u202es",
    "\x00\x01\x02\ufffd\ufeff",
    # Punctuation, ASCII and Unicode.
    "«Bonjour» — dit-il… ¿Qué? ¡Sí! ‘q’ “dq” 、。 § ¶ † "
    "\u2010\u2011\u00b7",
    "1+1=2 <tag> [x] {y} |z| a\\b × ÷ €5 £5 ¥ °C ™ ©",
    "\u1fef\u1fed\u1fee \u00b4 \u02dc \u0387 \u037e \u055e",
    # Whitespace of every kind.
    "a\tb\nc\rd\u00a0e\u3000f\u2028g\u2029h\x0bi\x0cj\x1ck\x85l\u2003m"
    "\u202fn\u205fo\u1680p\u180eq",
    "   ",
    "",
    "\t\n\r \u00a0\u3000\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x1f\x85",
    # Words of exactly 200 characters and of 201 or more, ASCII and not.
    "a" * 200,
    "a" * 201,
    "x " + "ab" * 100 + " y " + "ab" * 101 + " z",
    "é" * 200 + " " + "é" * 201,
    "ж" * 200 + " " + "Ж" * 201,
    "😀" * 200 + " " + "😀" * 201,
    # 201 characters with combining accents: [UNK] when cased, but only 101
    # or 199 once lower-casing has stripped the accents.
    "e\u0301" * 100 + "e",
    "É" * 199 + "\u0301\u0301",
    "unbelievable" * 17,
    # Other scripts.
    "Привет, мир! Ёё Ж",
    "مرحبا بالعالم؟ ٠١",
    "शब्द किताब। สวัสดี",
    "שלום עולם ა ბ Ա Բ",
    # Unicode 14 letters that TensorFlow's ICU does not lower-case.
    "\U00010570\U00010571 \u2c2f\u2c5f \ua7c0\ua7c1 ΑΣ\U00010570 "
    "Α\U00010597Σ",
]


def _random_text(rng, alphabet_ranges, max_len):
    """A string of assigned (Unicode 14) code points drawn from ranges."""
    chars = []
    for _ in range(rng.randint(0, max_len)):
        if rng.random() < 0.15:
            chars.append(rng.choice(" \t\n\u00a0\u3000"))
            continue
        while True:
            first, last = rng.choice(alphabet_ranges)
            char = chr(rng.randint(first, last))
            if unicodedata.category(char) not in ("Cn", "Cs"):
                break
        chars.append(char)
    return "".join(chars)


_FUZZ_RANGES = [
    (0x00, 0x7F), (0x20, 0x7E), (0x20, 0x7E), (0x80, 0x24F),
    (0x250, 0x2FF), (0x300, 0x36F), (0x370, 0x3FF), (0x3A3, 0x3A3),
    (0x400, 0x52F), (0x590, 0x6FF), (0x890, 0x8FF), (0x900, 0x97F),
    (0xE00, 0xE7F), (0x1100, 0x11FF), (0x1AB0, 0x1AFF), (0x1E00, 0x1FFF),
    (0x2000, 0x206F), (0x2070, 0x2BFF), (0x2C00, 0x2C7F), (0x2E00, 0x2E7F),
    (0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA640, 0xA7FF),
    (0xAC00, 0xD7A3), (0xE000, 0xE0FF), (0xF900, 0xFAFF), (0xFB00, 0xFB4F),
    (0xFE00, 0xFE6F), (0xFF00, 0xFFFF), (0x10000, 0x1007F),
    (0x10570, 0x105BF), (0x1D400, 0x1D7FF), (0x1F000, 0x1FAFF),
    (0x20000, 0x2A6DF), (0x2A700, 0x2CEAF), (0x2F800, 0x2FA1F),
    (0xE0000, 0xE01EF),
]


def _fuzz_corpus():
    rng = random.Random(20240607)
    texts = [_random_text(rng, _FUZZ_RANGES, 60) for _ in range(400)]
    # Long single words around the 200-character limit.
    for length in (199, 200, 201, 250):
        texts.append(_random_text(rng, [(0x61, 0x7A), (0xE0, 0xFF),
                                        (0x430, 0x44F)], 0)
                     + "".join(rng.choice("abc\u00e9\u0436\U0001F600")
                               for _ in range(length)))
    return texts


def _sigma_fuzz_corpus():
    """Strings that stress the final-sigma rule: capital sigma next to
    cased, case-ignorable (incl. Unicode 14 ones), and neutral chars."""
    alphabet = [
        "\u03a3", "\u03a3", "\u03a3", "\u0391", "\u03c2", "a", "\u01c5",
        "'", ".", ":", "\u00b7", "\u0301", "\u02b0", "\u00ad", "\u200b",
        "\u0898", "\u08c9", "\u2c2f", "\U00010597", "\ua7d3", " ", "-",
        "1", "\u4e2d", "\u2028", "\u3042", "\x00",
    ]
    rng = random.Random(7)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
            for _ in range(600)]


def _vocab_tokens(texts):
    """A vocab in which real words, real splits and real [UNK]s all occur.

    Built from the basic tokens of `texts` (both casings): whole words for
    every other word, 1-3 char prefixes and "##" 1-2 char pieces of all
    words, except that characters with code point % 11 == 0 get no piece at
    all, so words containing them become [UNK] (unless whole in the vocab).
    """
    words = set()
    for do_lower_case in (True, False):
        basic = bert_tokenization.BasicTokenizer(do_lower_case=do_lower_case)
        for text in texts:
            words.update(basic.tokenize(text))
    tokens = set()
    for word in sorted(words):
        # Whole words stay short so that FastWordpiece can take the vocab.
        if len(word) <= 40 and zlib.crc32(word.encode("utf-8")) % 2:
            tokens.add(word)
    for word in sorted(words):
        for n in (1, 2, 3):
            prefix = word[:n]
            if not any(ord(c) % 11 == 0 for c in prefix):
                tokens.add(prefix)
        for start in range(1, len(word)):
            for n in (1, 2):
                piece = word[start:start + n]
                if not any(ord(c) % 11 == 0 for c in piece):
                    tokens.add("##" + piece)
    tokens -= set(_SPECIAL_TOKENS)
    # "#" pieces and odd lines exercise the vocab loading of both paths: a
    # duplicated token keeps its last id and the empty line gets an id.
    return (_SPECIAL_TOKENS + sorted(tokens)
            + ["#", "##", "###", "", "the", "[UNK]", "##e"])


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    texts = _CORPUS + _fuzz_corpus() + _sigma_fuzz_corpus()
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(_vocab_tokens(texts)) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizers(request, vocab_file):
    do_lower_case = request.param
    return (bert_tokenization.FullTokenizer(vocab_file, do_lower_case),
            fast_tokenization.FastFullTokenizer(vocab_file, do_lower_case))


def _assert_same_ids(tokenizers, texts):
    pure, fast = tokenizers
    fast_ids = fast.tokenize_to_ids(texts)
    assert len(fast_ids) == len(texts)
    mismatches = []
    for text, ids in zip(texts, fast_ids):
        expected = pure.convert_tokens_to_ids(pure.tokenize(text))
        if ids != expected:
            mismatches.append((text, expected, ids))
    assert not mismatches, "first of %d mismatches: %r" % (
        len(mismatches), mismatches[0])


def test_vocab_exercises_splits_and_unknowns(tokenizers):
    pure, _ = tokenizers
    tokens = [t for text in _CORPUS for t in pure.tokenize(text)]
    assert tokens.count("[UNK]") >= 10
    assert sum(t.startswith("##") for t in tokens) >= 50
    # The duplicated "[UNK]" line moved its id away from 1.
    assert pure.vocab["[UNK]"] > len(_SPECIAL_TOKENS)
    assert "" in pure.vocab


def test_parity_corpus(tokenizers):
    _assert_same_ids(tokenizers, _CORPUS)


def test_parity_random_codepoints(tokenizers):
    _assert_same_ids(tokenizers, _fuzz_corpus())


def test_parity_final_sigma(tokenizers):
    _assert_same_ids(tokenizers, _sigma_fuzz_corpus())


def test_parity_every_codepoint(tokenizers):
    """Every code point assigned in Python's Unicode (14), in contexts that
    probe each step: at both ends, inside a word, after a sigma (is it
    final?), before one (is it preceded by a cased char?), next to CJK."""
    pure, fast = tokenizers
    basic = pure.basic_tokenizer
    texts = []
    # Planes 15-16 hold only private-use chars, like U+E000-F8FF: skipped.
    for cp in range(0xF0000):
        char = chr(cp)
        if unicodedata.category(char) not in ("Cn", "Cs"):
            texts.append("%s\u0391\u03a3%s\u0392%s\u03a3\u4e2d%s" % (
                char, char, char, char))
    # The word-splitting path of tokenize_tensor (valid UTF-8 in, so nothing is dropped).
    got = fast._split_words(fast._normalize(tf.constant(
        [t.encode("utf-8") for t in texts]))).to_list()
    mismatches = []
    for text, words in zip(texts, got):
        expected = basic.tokenize(text)
        if expected != [w.decode("utf-8") for w in words]:
            mismatches.append((text, expected, words))
    assert not mismatches, "first of %d mismatches: %r" % (
        len(mismatches), mismatches[0])


@pytest.mark.parametrize("do_lower_case", [True, False],
                         ids=["uncased", "cased"])
def test_parity_every_codepoint_between_words(tmp_path, do_lower_case):
    """Every code point assigned in Unicode 14 between two words, through
    `tokenize_to_ids` (where FastWordpiece splits words itself): the ids
    tell whether it was deleted ("a", "##b"), whitespace ("a", "b"),
    punctuation or CJK ("a", x, "b"), or part of the word ("[UNK]")."""
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\na\nb\n##a\n##b\n", encoding="utf-8")
    pure = bert_tokenization.FullTokenizer(str(path), do_lower_case)
    fast = fast_tokenization.FastFullTokenizer(str(path), do_lower_case)
    texts = ["a%sb" % chr(cp) for cp in range(0xF0000)
             if unicodedata.category(chr(cp)) not in ("Cn", "Cs")]
    got = fast.tokenize_to_ids(texts)
    mismatches = [(text, ids) for text, ids in zip(texts, got)
                  if ids != pure.convert_tokens_to_ids(pure.tokenize(text))]
    assert not mismatches, "first of %d mismatches: %r" % (
        len(mismatches), mismatches[0])


def test_rows_with_long_runs_keep_order(tokenizers):
    # Rows with a run of over 200 chars without ASCII whitespace take
    # another way than the rest; the batch must keep its order and ids.
    texts = [
        "plain text",
        "x," * 150,  # 300 chars without a space, all short words.
        "a" * 201 + " end",
        "\u00e9" * 200 + " " + "\u0436" * 200,  # 200 chars, 400 bytes.
        "\u4e2d" * 300,  # CJK: single-char words.
        "https://example.com/" + "path/" * 50 + "?q=1",
        "b" * 199 + "\u0301" * 3,  # 202 chars, but 199 once unaccented.
        "",
        "\u00a0".join(["word"] * 60),  # No ASCII whitespace, short words.
    ]
    _assert_same_ids(tokenizers, texts)
    _assert_same_ids(tokenizers, texts[::-1])
    _assert_same_ids(tokenizers, [texts[2]])
    _assert_same_ids(tokenizers, [texts[0]])


def test_vocab_tokens_that_never_match(tmp_path):
    # Tokens mixing punctuation, "##" punctuation, whitespace and deleted
    # chars can never be output by the original; nor by the fast path.
    tokens = ["[PAD]", "[UNK]", "a.b", "##.", ".", "a", "##b", "b", "#",
              "##a", "ab c", " x", "x", "a\u00adb", "##", "###", "\ufffd",
              "\u4e2d\u6587", "\u4e2d", "##\u6587", "it's", "it", "'", "s"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    texts = ["a.b a. .b ##. x a b ab ab c", " x  ab\u00ad", "#a ## ###",
             "\u4e2d\u6587 \ufffd it's", "a\u00adb \u00adx"]
    for do_lower_case in (True, False):
        pure = bert_tokenization.FullTokenizer(str(path), do_lower_case)
        fast = fast_tokenization.FastFullTokenizer(str(path), do_lower_case)
        assert fast.tokenize_to_ids(texts) == [
            pure.convert_tokens_to_ids(pure.tokenize(t)) for t in texts]


def test_tokenize_to_ids_traces_once(tokenizers):
    _, fast = tokenizers
    fast.tokenize_to_ids(["a b"])
    count = fast._tokenize_batch.experimental_get_tracing_count()
    for size in (1, 2, 7, 64):
        fast.tokenize_to_ids(["hello, world"] * size)
    fast.tokenize_to_ids([b"bytes", "str"])
    assert fast._tokenize_batch.experimental_get_tracing_count() == count


def test_tokenize_returns_pure_tokens(tokenizers):
    pure, fast = tokenizers
    assert fast.tokenize(_CORPUS) == [pure.tokenize(t) for t in _CORPUS]


def test_bytes_input_with_invalid_utf8(tokenizers):
    texts = [
        b"UN\xffwant\xc3\xa9d,\xed\xa0\x80running",
        b"\xe4\xb8a\xe4\xb8\xad\xf0\x9f\x98 \xc3",
        b"\xc0\xaf\xe0\x80\xaf\xf4\x90\x80\x80\xf8\x88\x80\x80\x80 ok",
        b"\xef\xbb\xbfBOM \xfe\xff end",
        "caf\u00e9".encode("utf-8"),
        "mixed str \u00e9",
    ]
    _assert_same_ids(tokenizers, texts)


def test_lone_surrogate_str(tokenizers):
    # Not encodable as UTF-8; tokenized like the original would.
    _assert_same_ids(tokenizers, ["a\ud800b c", "\udcff"])


def test_tokenize_tensor_in_dataset_map(tokenizers):
    pure, fast = tokenizers
    texts = [t.encode("utf-8") for t in _CORPUS]
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(
        fast.tokenize_tensor)
    got = [row for batch in dataset for row in batch.to_list()]
    assert got == [pure.convert_tokens_to_ids(pure.tokenize(t))
                   for t in texts]
    spec = dataset.element_spec
    assert isinstance(spec, tf.RaggedTensorSpec)
    assert spec.dtype == tf.int64 and spec.shape.as_list() == [None, None]


def test_tokenize_tensor_scalar_in_dataset_map(tokenizers):
    pure, fast = tokenizers
    dataset = tf.data.Dataset.from_tensor_slices(_CORPUS[:5]).map(
        fast.tokenize_tensor)
    got = [ids.numpy().tolist() for ids in dataset]
    assert got == [pure.convert_tokens_to_ids(pure.tokenize(t))
                   for t in _CORPUS[:5]]


def test_tokenize_tensor_eager(tokenizers):
    pure, fast = tokenizers
    ids = fast.tokenize_tensor(tf.constant(["UNwant\u00E9d,running", ""]))
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == tf.int64
    assert ids.to_list() == [
        pure.convert_tokens_to_ids(pure.tokenize("UNwant\u00E9d,running")),
        []]


def test_tokenize_tensor_rejects_rank_2(tokenizers):
    _, fast = tokenizers
    with pytest.raises(ValueError, match="1-D batch"):
        fast.tokenize_tensor(tf.constant([["a", "b"]]))


def test_empty_batch(tokenizers):
    _, fast = tokenizers
    assert fast.tokenize_to_ids([]) == []
    assert fast.tokenize([]) == []


def test_unsupported_type(tokenizers):
    _, fast = tokenizers
    with pytest.raises(ValueError, match="Unsupported string type"):
        fast.tokenize_to_ids([5])


def test_vocab_api_matches_full_tokenizer(tokenizers):
    pure, fast = tokenizers
    assert fast.vocab == pure.vocab
    assert list(fast.vocab) == list(pure.vocab)
    assert fast.inv_vocab == pure.inv_vocab
    tokens = pure.tokenize(_CORPUS[1])
    assert fast.convert_tokens_to_ids(tokens) == pure.convert_tokens_to_ids(
        tokens)
    ids = fast.convert_tokens_to_ids(tokens)
    assert fast.convert_ids_to_tokens(ids) == tokens
    with pytest.raises(KeyError):
        fast.convert_tokens_to_ids(["not-a-token"])


def test_small_vocab_example(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join([
        "[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un",
        "runn", "##ing", ","]) + "\n", encoding="utf-8")
    fast = fast_tokenization.FastFullTokenizer(str(path))
    assert fast.tokenize(["UNwant\u00E9d,running", "unwantedX running"]) == [
        ["un", "##want", "##ed", ",", "runn", "##ing"],
        ["[UNK]", "runn", "##ing"]]
    assert fast.tokenize_to_ids(["UNwant\u00E9d,running"]) == [
        [7, 4, 5, 10, 8, 9]]


def test_200_char_limit_with_whole_word_in_vocab(tmp_path):
    # Even a word that is itself in the vocab is [UNK] past 200 characters.
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(["[UNK]", "a" * 201, "a" * 200, "b"]) + "\n",
                    encoding="utf-8")
    fast = fast_tokenization.FastFullTokenizer(str(path))
    assert fast.tokenize_to_ids(["a" * 201, "a" * 200 + " b"]) == [
        [0], [2, 3]]


def test_main_fixture_uses_fast_wordpiece(tokenizers):
    _, fast = tokenizers
    assert isinstance(fast._wordpiece, tf_text.FastWordpieceTokenizer)


def test_vocab_with_long_tokens_falls_back_to_table_wordpiece(tmp_path):
    # FastWordpiece rejects tokens over 256 bytes, yet the original can
    # match any token of at most 200 characters (up to 800 bytes).
    long_word = "\U0001F600" * 100
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join([
        "[PAD]", "[UNK]", "a", "##a", long_word, "##" + "\u00e9" * 150,
        "\u00e9", "x" * 300, "the", "the"]) + "\n", encoding="utf-8")
    pure = bert_tokenization.FullTokenizer(str(path))
    fast = fast_tokenization.FastFullTokenizer(str(path))
    assert isinstance(fast._wordpiece, tf_text.WordpieceTokenizer)
    texts = [long_word, "a" + long_word, "\u00e9" * 151, "\u00c9" * 151,
             "aa " + "a" * 201 + " the " + "x" * 300, "b", ""]
    assert fast.tokenize_to_ids(texts) == [
        pure.convert_tokens_to_ids(pure.tokenize(t)) for t in texts]
    assert pure.tokenize(long_word) == [long_word]


def test_vocab_without_unk_is_rejected(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[UNK\]"):
        fast_tokenization.FastFullTokenizer(str(path))


def test_missing_vocab_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing_vocab.txt"):
        fast_tokenization.FastFullTokenizer(str(tmp_path / "missing_vocab.txt"))


def test_split_whitespace_is_python_str_split_whitespace():
    chars = [chr(cp) for cp in range(sys.maxunicode + 1)
             if not 0xD800 <= cp <= 0xDFFF]
    encoded = tf.constant([("a%sb" % c).encode("utf-8") for c in chars])
    split_by_tf = tf.strings.split(encoded).row_lengths().numpy() == 2
    assert {c for c, m in zip(chars, split_by_tf) if m} == set(
        fast_tokenization._ASCII_WHITESPACE)
    matched = tf.strings.regex_full_match(
        encoded, "a[%s]b" % fast_tokenization._OTHER_SPLIT_WHITESPACE_CHARS)
    assert [c for c, m in zip(chars, matched.numpy())
            if m or c in fast_tokenization._ASCII_WHITESPACE] == [
                c for c in chars if c.isspace()]


def test_package_exposes_fast_tokenizer_lazily():
    import tokenization
    assert tokenization.FastFullTokenizer is fast_tokenization.FastFullTokenizer
    with pytest.raises(AttributeError):
        tokenization.NoSuchThing  # pylint: disable=pointless-statement
