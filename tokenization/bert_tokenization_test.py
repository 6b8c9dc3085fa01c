"""Tests for the pure-Python BERT tokenizer (the original algorithm)."""

import collections

import pytest

import tokenization
from tokenization import bert_tokenization

_SMALL_VOCAB = [
    "[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn",
    "##ing", ",", "low", "lowest",
]


def _write_vocab(path, tokens):
    path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    return str(path)


@pytest.fixture
def small_vocab_file(tmp_path):
    return _write_vocab(tmp_path / "vocab.txt", _SMALL_VOCAB)


def test_package_exports_original_api():
    for name in [
            "convert_to_unicode", "printable_text", "load_vocab",
            "convert_by_vocab", "convert_tokens_to_ids",
            "convert_ids_to_tokens", "whitespace_tokenize",
            "validate_case_matches_checkpoint", "FullTokenizer",
            "BasicTokenizer", "WordpieceTokenizer", "_is_whitespace",
            "_is_control", "_is_punctuation"]:
        assert getattr(tokenization, name) is getattr(bert_tokenization, name)


def test_full_tokenizer(small_vocab_file):
    tokenizer = tokenization.FullTokenizer(small_vocab_file)
    tokens = tokenizer.tokenize("UNwant\u00E9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
    assert tokenizer.convert_ids_to_tokens([7, 4, 5, 10, 8, 9]) == tokens


def test_full_tokenizer_vocab_attributes(small_vocab_file):
    tokenizer = tokenization.FullTokenizer(small_vocab_file)
    assert isinstance(tokenizer.vocab, collections.OrderedDict)
    assert list(tokenizer.vocab) == _SMALL_VOCAB
    assert tokenizer.inv_vocab == dict(enumerate(_SMALL_VOCAB))


def test_chinese():
    tokenizer = tokenization.BasicTokenizer()
    assert tokenizer.tokenize("ah\u535A\u63A8zz") == [
        "ah", "\u535A", "\u63A8", "zz"]


def test_cjk_ranges_exclude_kana_and_hangul():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)
    # Compatibility ideograph U+F900 and Extension B U+20000 are split off;
    # Hiragana, Katakana and Hangul stay inside their word.
    assert tokenizer.tokenize("a\uF900b\U00020000c") == [
        "a", "\uF900", "b", "\U00020000", "c"]
    assert tokenizer.tokenize("\u3072\u30ab\uD55C") == [
        "\u3072\u30ab\uD55C"]
    # Lower-casing NFD-maps the compatibility ideograph to U+8C48.
    assert tokenization.BasicTokenizer().tokenize("a\uF900b") == [
        "a", "\u8C48", "b"]


def test_basic_tokenizer_lower():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)
    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "hello", "!", "how", "are", "you", "?"]
    assert tokenizer.tokenize("H\u00E9llo") == ["hello"]


def test_basic_tokenizer_no_lower():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)
    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "HeLLo", "!", "how", "Are", "yoU", "?"]
    # Cased models keep accents too: stripping is tied to lower-casing.
    assert tokenizer.tokenize("H\u00E9llo") == ["H\u00E9llo"]


def test_basic_tokenizer_quirks_of_the_original():
    lower = tokenization.BasicTokenizer(do_lower_case=True)
    cased = tokenization.BasicTokenizer(do_lower_case=False)
    # Non-alphanumeric ASCII counts as punctuation even when Unicode says
    # symbol ("$", "^", "`").
    assert cased.tokenize("a$b^c`d") == ["a", "$", "b", "^", "c", "`", "d"]
    # Vertical tab and NEL are Cc: removed, not turned into a space.
    assert cased.tokenize("a\x0bb\x85c") == ["abc"]
    # U+2028 survives cleaning (category Zl) but str.split() splits on it.
    assert cased.tokenize("a\u2028b\u2029c") == ["a", "b", "c"]
    # Zero-width space and BOM are Cf: removed.
    assert cased.tokenize("a\u200bb\ufeffc") == ["abc"]
    # Punctuation is split after NFD: GREEK VARIA (a symbol) becomes "`".
    assert lower.tokenize("a\u1fefb") == ["a", "`", "b"]
    assert cased.tokenize("a\u1fefb") == ["a\u1fefb"]
    # str.lower(): final sigma, dotted capital I, and no case folding.
    assert lower.tokenize("\u039f\u03a3\u039f\u03a3 \u00df") == [
        "\u03bf\u03c3\u03bf\u03c2", "\u00df"]
    assert lower.tokenize("\u0130") == ["i"]


def test_basic_tokenizer_nul_and_replacement_char():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)
    assert tokenizer.tokenize("a\x00b\ufffdc") == ["abc"]
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize(" \t\n\u3000 ") == []


def test_wordpiece_tokenizer():
    vocab = {token: i for i, token in enumerate(_SMALL_VOCAB)}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("unwanted running") == [
        "un", "##want", "##ed", "runn", "##ing"]
    assert tokenizer.tokenize("unwantedX running") == [
        "[UNK]", "runn", "##ing"]
    # Longest match first, not shortest: "lowest" beats "low".
    assert tokenizer.tokenize("lowest") == ["lowest"]


def test_wordpiece_200_char_limit_counts_characters():
    vocab = {"[UNK]": 0, "a": 1, "##a": 2, "\u00e9": 3, "##\u00e9": 4}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)
    assert tokenizer.tokenize("a" * 200) == ["a"] + ["##a"] * 199
    assert tokenizer.tokenize("a" * 201) == ["[UNK]"]
    # 200 two-byte characters are 400 bytes but still within the limit.
    assert tokenizer.tokenize("\u00e9" * 200) == ["\u00e9"] + ["##\u00e9"] * 199
    assert tokenizer.tokenize("\u00e9" * 201 + " a") == ["[UNK]", "a"]
    short = tokenization.WordpieceTokenizer(
        vocab=vocab, unk_token="<unk>", max_input_chars_per_word=3)
    assert short.tokenize("aaa aaaa") == ["a", "##a", "##a", "<unk>"]


def test_full_tokenizer_long_words(tmp_path):
    vocab_file = _write_vocab(tmp_path / "vocab.txt", ["[UNK]", "a", "##a"])
    tokenizer = tokenization.FullTokenizer(vocab_file)
    assert tokenizer.tokenize("a" * 201 + " " + "A" * 200) == (
        ["[UNK]", "a"] + ["##a"] * 199)


def test_convert_tokens_to_ids():
    vocab = {token: i for i, token in enumerate(_SMALL_VOCAB)}
    assert tokenization.convert_tokens_to_ids(
        vocab, ["un", "##want", "##ed", "runn", "##ing"]) == [7, 4, 5, 8, 9]
    inv_vocab = {i: token for token, i in vocab.items()}
    assert tokenization.convert_ids_to_tokens(inv_vocab, [7, 4]) == [
        "un", "##want"]


def test_convert_tokens_to_ids_unknown_token_is_key_error(small_vocab_file):
    vocab = {token: i for i, token in enumerate(_SMALL_VOCAB)}
    with pytest.raises(KeyError):
        tokenization.convert_tokens_to_ids(vocab, ["un", "xyzzy"])
    tokenizer = tokenization.FullTokenizer(small_vocab_file)
    with pytest.raises(KeyError):
        tokenizer.convert_tokens_to_ids(["xyzzy"])
    with pytest.raises(KeyError):
        tokenizer.convert_ids_to_tokens([len(_SMALL_VOCAB)])


def test_is_whitespace():
    assert tokenization._is_whitespace(" ")
    assert tokenization._is_whitespace("\t")
    assert tokenization._is_whitespace("\r")
    assert tokenization._is_whitespace("\n")
    assert tokenization._is_whitespace("\u00A0")
    assert tokenization._is_whitespace("\u3000")
    assert not tokenization._is_whitespace("A")
    assert not tokenization._is_whitespace("-")
    assert not tokenization._is_whitespace("\x0b")  # Cc, not Zs.
    assert not tokenization._is_whitespace("\u2028")  # Zl, not Zs.


def test_is_control():
    assert tokenization._is_control("\u0005")
    assert tokenization._is_control("\x00")
    assert tokenization._is_control("\u200b")  # Cf.
    assert not tokenization._is_control("A")
    assert not tokenization._is_control(" ")
    assert not tokenization._is_control("\t")
    assert not tokenization._is_control("\r")
    assert not tokenization._is_control("\n")
    assert not tokenization._is_control("\U0001F4A9")
    assert not tokenization._is_control("\ue000")  # Co is not Cc/Cf.


def test_is_punctuation():
    assert tokenization._is_punctuation("-")
    assert tokenization._is_punctuation("$")
    assert tokenization._is_punctuation("`")
    assert tokenization._is_punctuation(".")
    assert tokenization._is_punctuation("^")
    assert tokenization._is_punctuation("\u00ab")  # «, Pi.
    assert tokenization._is_punctuation("\u3001")  # 、, Po.
    assert not tokenization._is_punctuation("A")
    assert not tokenization._is_punctuation(" ")
    assert tokenization._is_punctuation("\u00a7")  # §, Po.
    assert not tokenization._is_punctuation("\u20ac")  # €, Sc.
    assert not tokenization._is_punctuation("\u00ac")  # ¬, Sm.


def test_convert_to_unicode():
    assert tokenization.convert_to_unicode("abc\u00e9") == "abc\u00e9"
    assert tokenization.convert_to_unicode(b"abc\xc3\xa9") == "abc\u00e9"
    # Invalid UTF-8 is dropped, not replaced and not an error.
    assert tokenization.convert_to_unicode(
        b"\xe4\xb8\xad\xff\xe4\xb8") == "\u4e2d"
    assert tokenization.printable_text(b"x\xc3") == "x"
    with pytest.raises(ValueError, match="Unsupported string type"):
        tokenization.convert_to_unicode(5)


def test_bytes_with_invalid_utf8(small_vocab_file):
    tokenizer = tokenization.FullTokenizer(small_vocab_file)
    assert tokenizer.tokenize(b"UN\xffwant\xc3\xa9d,\xed\xa0\x80running") == [
        "un", "##want", "##ed", ",", "runn", "##ing"]


def test_whitespace_tokenize():
    assert tokenization.whitespace_tokenize("") == []
    assert tokenization.whitespace_tokenize(" \t\n") == []
    assert tokenization.whitespace_tokenize(" a  b\u2028c\u00a0d\n") == [
        "a", "b", "c", "d"]


def test_load_vocab(tmp_path):
    path = tmp_path / "vocab.txt"
    # Surrounding whitespace is stripped; ids are line numbers; "\r\n" and
    # a missing final newline are fine.
    path.write_bytes(b"[PAD]\r\n  [UNK]\n\xc3\xa9t\xc3\xa9 \n##s")
    vocab = tokenization.load_vocab(str(path))
    assert isinstance(vocab, collections.OrderedDict)
    assert list(vocab.items()) == [
        ("[PAD]", 0), ("[UNK]", 1), ("\u00e9t\u00e9", 2), ("##s", 3)]


def test_load_vocab_duplicate_token_keeps_last_id_and_warns(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\na\n\nc\n", encoding="utf-8")
    with caplog.at_level("WARNING"):
        vocab = tokenization.load_vocab(str(path))
    assert vocab == {"a": 2, "b": 1, "": 3, "c": 4}
    assert caplog.messages == ["%s: 1 line(s) repeat an earlier token (line 3); each such token keeps its last "
                               "line's id, as in the original BERT, and the earlier ids are never produced." % path]


def test_load_vocab_drops_bytes_that_are_not_utf8_as_the_original_and_names_the_lines(tmp_path, caplog):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\ncaf\xe9\nthe\n\xff\xfe\n")  # Latin-1, not UTF-8
    with caplog.at_level("WARNING"):
        vocab = tokenization.load_vocab(str(path))
    assert vocab == {"[PAD]": 0, "caf": 1, "the": 2, "": 3}
    assert caplog.messages == ["%s: 2 line(s) are not UTF-8 (line 2, line 4); their bad bytes are dropped, as the "
                               "original BERT does, so those tokens may not match the text." % path]
    caplog.clear()
    path.write_text("".join("t%d\n" % i for i in range(8)) * 2, encoding="utf-8")
    with caplog.at_level("WARNING"):
        tokenization.load_vocab(str(path))
    assert "8 line(s) repeat an earlier token (line 9, line 10, line 11, line 12, line 13, ...)" in caplog.text


def test_missing_vocab_file_is_clear_error(tmp_path):
    missing = str(tmp_path / "no_such_vocab.txt")
    with pytest.raises(FileNotFoundError, match="no_such_vocab.txt"):
        tokenization.load_vocab(missing)
    with pytest.raises(FileNotFoundError, match="no_such_vocab.txt"):
        tokenization.FullTokenizer(missing)


@pytest.mark.parametrize("do_lower_case,checkpoint", [
    (True, None),
    (False, ""),
    (True, "/data/uncased_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "gs://bucket/cased_L-24_H-1024_A-16/bert_model.ckpt"),
    (True, "gs://bucket/chinese_L-12_H-768_A-12/bert_model.ckpt"),
    (False, "/data/my_model/bert_model.ckpt"),  # Unknown: not checked.
    (True, "/data/cased_L-12_H-768_A-12/model.ckpt-1000"),  # No match.
])
def test_validate_case_matches_checkpoint_accepts(do_lower_case, checkpoint):
    tokenization.validate_case_matches_checkpoint(do_lower_case, checkpoint)


@pytest.mark.parametrize("do_lower_case,model", [
    (False, "uncased_L-24_H-1024_A-16"),
    (False, "uncased_L-12_H-768_A-12"),
    (False, "multilingual_L-12_H-768_A-12"),
    (False, "chinese_L-12_H-768_A-12"),
    (True, "cased_L-12_H-768_A-12"),
    (True, "cased_L-24_H-1024_A-16"),
    (True, "multi_cased_L-12_H-768_A-12"),
])
def test_validate_case_matches_checkpoint_rejects(do_lower_case, model):
    checkpoint = "/models/%s/bert_model.ckpt" % model
    with pytest.raises(ValueError) as info:
        tokenization.validate_case_matches_checkpoint(
            do_lower_case, checkpoint)
    message = str(info.value)
    assert "`--do_lower_case=%s`" % do_lower_case in message
    assert "`--do_lower_case=%s`" % (not do_lower_case) in message
    assert checkpoint in message
    assert ("is a cased model" in message) == do_lower_case
