"""Parity tests: CachedFullTokenizer must give exactly FullTokenizer's ids."""

import random
import unicodedata

import pytest

from tokenization import bert_tokenization
from tokenization import cached_tokenization
from tokenization import parity_cases


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    texts = parity_cases.CORPUS + parity_cases.fuzz_corpus() + parity_cases.sigma_fuzz_corpus()
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(parity_cases.vocab_tokens(texts)) + "\n", encoding="utf-8")
    return str(path)


def _expected(full, texts):
    return [full.convert_tokens_to_ids(full.tokenize(text)) for text in texts]


def _assert_same_ids(full, cached, texts):
    assert [cached.tokenize(text) for text in texts] == [full.tokenize(text) for text in texts]
    ids, lengths = cached.tokenize_lines(texts)
    expected = _expected(full, texts)
    assert lengths == [len(line) for line in expected]
    assert ids == [i for line in expected for i in line]
    mismatches = [(text, want) for text, want in zip(texts, expected)
                  if cached.tokenize_to_ids(text) != want]
    assert not mismatches, "first of %d mismatches: %r" % (len(mismatches), mismatches[0])


@pytest.mark.parametrize("do_lower_case", [True, False], ids=["uncased", "cased"])
def test_parity_on_the_fast_tokenizers_cases(vocab_file, do_lower_case):
    full = bert_tokenization.FullTokenizer(vocab_file, do_lower_case)
    cached = cached_tokenization.CachedFullTokenizer(full.vocab, do_lower_case)
    texts = parity_cases.CORPUS + parity_cases.fuzz_corpus() + parity_cases.sigma_fuzz_corpus()
    # Shuffled and repeated, so that words come from the cache in other contexts.
    shuffled = texts * 2
    random.Random(5).shuffle(shuffled)
    _assert_same_ids(full, cached, texts + shuffled)


# Case matters to the ASCII shortcut and to lower-casing; the cleaning of the
# other characters does not depend on it.
@pytest.mark.parametrize("do_lower_case,last_codepoint", [(True, 0xF0000), (False, 0x250)],
                         ids=["uncased", "cased"])
def test_parity_every_codepoint_in_context(tmp_path, do_lower_case, last_codepoint):
    """Every code point assigned in Python's Unicode, alone and inside a word:
    the ids tell whether it was deleted ("a", "##b"), whitespace ("a", "b"),
    punctuation or CJK ("a", x, "b"), or part of a word ("[UNK]")."""
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\na\nb\n##a\n##b\n\u4e2d\n", encoding="utf-8")
    full = bert_tokenization.FullTokenizer(str(path), do_lower_case)
    cached = cached_tokenization.CachedFullTokenizer(full.vocab, do_lower_case)
    texts = ["a%sb %s" % (chr(cp), chr(cp)) for cp in range(last_codepoint)
             if unicodedata.category(chr(cp)) not in ("Cn", "Cs")]
    ids, lengths = cached.tokenize_lines(texts)
    expected = _expected(full, texts)
    assert lengths == [len(line) for line in expected]
    assert ids == [i for line in expected for i in line]


def test_a_full_cache_is_cleared_and_ids_stay_right(vocab_file):
    full = bert_tokenization.FullTokenizer(vocab_file, True)
    cached = cached_tokenization.CachedFullTokenizer(full.vocab, True, max_cached_words=3,
                                                     max_new_words=2)
    texts = parity_cases.CORPUS * 2
    _assert_same_ids(full, cached, texts)
    assert len(cached._cache) <= 3 and len(cached._new_words) <= 2


def test_only_words_seen_twice_are_kept_for_long():
    vocab = {token: i for i, token in enumerate(["[UNK]", "a", "b", "c", "d", "e"])}
    cached = cached_tokenization.CachedFullTokenizer(vocab, max_new_words=2)
    assert cached.tokenize_to_ids("a b") == [1, 2]
    assert cached._cache == {} and cached._new_words == {"a": [1], "b": [2]}
    assert cached.tokenize_to_ids("a") == [1]  # Seen again: cached.
    assert cached._cache == {"a": [1]} and cached._new_words == {"b": [2]}
    # The new words are full: "d" clears them, so "b" is a new word again later.
    assert cached.tokenize_to_ids("c d b") == [3, 4, 2]
    assert cached._new_words == {"d": [4], "b": [2]} and cached._cache == {"a": [1]}
    assert cached.tokenize_to_ids("x a e") == [0, 1, 5]
    assert cached._cache == {"a": [1]} and cached._new_words == {"x": [0], "e": [5]}


def test_ascii_words_take_the_shortcut_with_the_original_punctuation():
    vocab = {token: i for i, token in enumerate(
        ["[UNK]", "a", "##b", "$", "^", "`", "~", "_", "|", "b", "A"])}
    cased = cached_tokenization.CachedFullTokenizer(vocab, do_lower_case=False)
    uncased = cached_tokenization.CachedFullTokenizer(vocab, do_lower_case=True)
    # "$ ^ ` ~ _ |" are punctuation to the original though not all are Unicode P*.
    assert cased.tokenize_to_ids("a$b^ab`~_|A") == [1, 3, 9, 4, 1, 2, 5, 6, 7, 8, 10]
    assert uncased.tokenize_to_ids("A\tAB\x7fb") == [1, 1, 2, 2]  # DEL is dropped.


def test_vocab_without_unk_is_rejected():
    with pytest.raises(ValueError, match=r"no \[UNK\] token \(2 tokens\)"):
        cached_tokenization.CachedFullTokenizer({"a": 0, "b": 1})


def test_from_vocab_file_has_full_tokenizers_methods(vocab_file):
    full = bert_tokenization.FullTokenizer(vocab_file, True)
    cached = cached_tokenization.CachedFullTokenizer.from_vocab_file(vocab_file, True)
    assert cached.vocab == full.vocab and cached.inv_vocab == full.inv_vocab
    # Bytes are decoded as the original decodes them: invalid UTF-8 dropped.
    text = "UNwant\u00e9d,running \u4e2d\u6587".encode("utf-8") + b"\xff!"
    assert cached.tokenize(text) == full.tokenize(text)
    tokens = full.tokenize(parity_cases.CORPUS[0])
    ids = cached.convert_tokens_to_ids(tokens)
    assert ids == full.convert_tokens_to_ids(tokens)
    assert cached.convert_ids_to_tokens(ids) == tokens
    with pytest.raises(KeyError):
        cached.convert_tokens_to_ids(["not-a-token-of-the-vocab"])


def test_a_vocab_file_without_unk_is_named(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"Vocab file .*vocab.txt: The vocab has no \[UNK\] token \(2 tokens\)"):
        cached_tokenization.CachedFullTokenizer.from_vocab_file(str(path))
