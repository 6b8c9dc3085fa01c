"""Parity tests: FastFullTokenizer must give exactly FullTokenizer's ids."""

import gc
import os
import sys
import unicodedata

import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from tokenization import bert_tokenization
from tokenization import fast_tokenization
from tokenization import parity_cases

_CORPUS = parity_cases.CORPUS
_SPECIAL_TOKENS = parity_cases.SPECIAL_TOKENS
_fuzz_corpus = parity_cases.fuzz_corpus
_sigma_fuzz_corpus = parity_cases.sigma_fuzz_corpus
_vocab_tokens = parity_cases.vocab_tokens


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


def _tracing_count(fast):
    return sum(function.experimental_get_tracing_count()
               for function in fast._tokenize_in_parts.values())


def test_tokenize_to_ids_traces_once(tokenizers):
    _, fast = tokenizers
    fast.tokenize_to_ids(["a b"])
    count = _tracing_count(fast)
    for size in (1, 2, 7, 63):
        fast.tokenize_to_ids(["hello, world"] * size)
    fast.tokenize_to_ids([b"bytes", "str"])
    assert _tracing_count(fast) == count


@pytest.mark.parametrize("num_parallel_parts", [1, 3])
def test_tokenize_to_ids_in_parallel_parts_keeps_rows_in_order(vocab_file, num_parallel_parts):
    pure = bert_tokenization.FullTokenizer(vocab_file, True)
    fast = fast_tokenization.FastFullTokenizer(vocab_file, True,
                                               num_parallel_parts=num_parallel_parts)
    # Rows of different lengths, so a part out of place would show.
    texts = [" ".join(_CORPUS[:1 + index % 5]) + " %d" % index for index in range(200)]
    want = [pure.convert_tokens_to_ids(pure.tokenize(t)) for t in texts]
    for size in (200, 130, 5):  # 3, 2 and 1 parts of at least 64 rows
        assert fast.tokenize_to_ids(texts[:size]) == want[:size]
    expected_parts = {1: [1], 3: [1, 2, 3]}[num_parallel_parts]
    assert sorted(fast._tokenize_in_parts) == expected_parts
    assert _tracing_count(fast) == len(expected_parts)


@pytest.mark.parametrize("gc_enabled", [True, False])
def test_the_ids_become_lists_without_garbage_collections(tokenizers, gc_enabled):
    # A list per row; with the collector running, every 100 new containers would start one.
    _, fast = tokenizers
    texts = [" ".join(_CORPUS[:1 + index % 5]) for index in range(3000)]
    expected = fast.tokenize_to_ids(texts)
    collections_seen = []
    callback = lambda phase, info: phase == "start" and collections_seen.append(info["generation"])
    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(100)
    (gc.enable if gc_enabled else gc.disable)()
    try:
        ids = fast.tokenize_to_ids(texts)
        assert gc.isenabled() is gc_enabled  # the collector's state is the caller's again
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
        gc.enable()
    assert ids == expected
    assert len(collections_seen) <= 3, collections_seen  # not ~30 (3000 rows / 100)


def test_num_parallel_parts_defaults_to_usable_cpus_and_must_be_positive(vocab_file):
    assert (fast_tokenization.FastFullTokenizer(vocab_file).num_parallel_parts
            == len(os.sched_getaffinity(0)))
    with pytest.raises(ValueError, match="num_parallel_parts must be at least 1, got 0"):
        fast_tokenization.FastFullTokenizer(vocab_file, num_parallel_parts=0)


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
