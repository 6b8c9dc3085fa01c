"""vocab_builder: layout, size, the project's tokenizers on its output, streaming, errors."""

import logging
import random

import pytest
import tensorflow as tf

import tokenization
from pretraining_data import instances
from pretraining_data import pipeline
from tokenization import vocab_builder

_ROOTS = "form struct port act nation develop govern measure compute record print connect".split()
_SUFFIXES = ["", "", "ing", "ed", "s", "er", "ation", "able", "ment", "ly"]
_COMMON = ("the of and to a in is that for it as was with be by on not this are or from at which "
           "but have an they were there one all their has been if more when will who can its").split()
# Cased and accented words: lower-casing must fold them, a cased vocabulary must keep them.
_NAMES = ["Paris", "London", "Zoë", "Café", "Émile", "NASA", "Berlin", "Ångström"]


def _sentence(rng):
    words = []
    for _ in range(rng.randint(4, 14)):
        roll = rng.random()
        if roll < 0.6:
            words.append(rng.choice(_COMMON))
        elif roll < 0.9:
            words.append(rng.choice(_ROOTS) + rng.choice(_SUFFIXES))
        else:
            words.append(rng.choice(_NAMES))
    words[0] = words[0][0].upper() + words[0][1:]
    return " ".join(words) + rng.choice([".", ".", "!", "?"])


def write_corpus(path, num_documents, seed):
    """One sentence per line, a blank (sometimes whitespace-only) line between documents."""
    rng = random.Random(seed)
    documents = ["\n".join(_sentence(rng) for _ in range(rng.randint(2, 8)))
                 for _ in range(num_documents)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(doc + rng.choice(["\n\n", "\n   \n", "\n\t\n"]) for doc in documents))
    return str(path)


def _lines(*paths):
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines.extend(line.strip() for line in f if line.strip())
    return lines


def _options(tmp_path, input_file, **kwargs):
    return vocab_builder.CreateVocabOptions(
        input_file=str(input_file), output_file=str(tmp_path / "vocab.txt"), **kwargs)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    directory = tmp_path_factory.mktemp("corpus")
    return [write_corpus(directory / "a.txt", 150, seed=1), write_corpus(directory / "b.txt", 150, seed=2)]


@pytest.fixture(scope="module")
def vocabs(corpus, tmp_path_factory):
    """Vocab files learned from the corpus: uncased and cased, 3 unused slots, at most 300 tokens."""
    directory = tmp_path_factory.mktemp("vocabs")
    files = {}
    for name, lower in (("uncased", True), ("cased", False)):
        files[name] = str(directory / ("%s.txt" % name))
        vocab_builder.run(vocab_builder.CreateVocabOptions(
            input_file=",".join(corpus), output_file=files[name], vocab_size=300,
            do_lower_case=lower, num_unused=3))
    return files


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def test_reserved_tokens_follow_the_released_uncased_layout():
    # google-research/bert's uncased_L-12_H-768_A-12/vocab.txt, lines 1-105 and 999-1000.
    reserved = vocab_builder.reserved_tokens(994)
    assert reserved[0] == "[PAD]"
    assert reserved[1:100] == ["[unused%d]" % i for i in range(99)]
    assert reserved[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert reserved[104] == "[unused99]" and reserved[998] == "[unused993]" and len(reserved) == 999
    # The default: the special tokens keep the released ids with 99 slots.
    default = vocab_builder.reserved_tokens(vocab_builder.DEFAULT_NUM_UNUSED)
    assert default == reserved[:104]
    assert vocab_builder.reserved_tokens(2) == ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]",
                                                "[MASK]"]
    assert vocab_builder.reserved_tokens(0) == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_vocab_file_starts_with_the_reserved_tokens_and_holds_each_token_once(vocabs):
    for path in vocabs.values():
        tokens = _read(path)
        assert tokens[:8] == ["[PAD]", "[unused0]", "[unused1]", "[unused2]", "[UNK]", "[CLS]", "[SEP]",
                              "[MASK]"]
        assert len(tokens) == len(set(tokens)) <= 300
        assert len(tokens) > 100  # Learned pieces beyond the alphabet.
        assert all(token and token.strip() == token for token in tokens)  # No blank lines.
        assert not any(token.startswith("[unused") for token in tokens[8:])
        # load_vocab reads it back with the file's ids.
        assert list(tokenization.load_vocab(path).items()) == [(t, i) for i, t in enumerate(tokens)]


@pytest.mark.parametrize("name,lower", [("uncased", True), ("cased", False)])
def test_full_tokenizer_round_trip_with_few_unknowns(corpus, vocabs, name, lower):
    tokenizer = tokenization.FullTokenizer(vocabs[name], do_lower_case=lower)
    basic = tokenization.BasicTokenizer(do_lower_case=lower)
    num_tokens = num_unknown = 0
    for line in _lines(*corpus):
        pieces = tokenizer.tokenize(line)
        num_tokens += len(pieces)
        num_unknown += pieces.count("[UNK]")
        # Joining the "##" pieces gives back the words BERT's basic tokenizer splits.
        words = " ".join(pieces).replace(" ##", "").split()
        assert words == basic.tokenize(line)
        assert tokenizer.convert_ids_to_tokens(tokenizer.convert_tokens_to_ids(pieces)) == pieces
    assert num_tokens > 10000
    assert num_unknown == 0


def test_lower_case_folds_case_and_accents_and_cased_keeps_them(vocabs):
    uncased = set(_read(vocabs["uncased"])[8:])
    cased = set(_read(vocabs["cased"])[8:])
    assert not any(c.isupper() for token in uncased for c in token)
    assert not any(c in token for c in "éëÉÅ" for token in uncased)
    assert {"P", "Z", "É", "Å", "ë"} <= cased
    assert "paris" in uncased and "Paris" in cased and "paris" not in cased
    # A cased vocabulary on lower-cased text and vice versa: each is for its own setting.
    assert tokenization.FullTokenizer(vocabs["uncased"], do_lower_case=True).tokenize("Zoë") == ["zoe"]
    assert "[UNK]" not in tokenization.FullTokenizer(vocabs["cased"], do_lower_case=False).tokenize("Zoë")


@pytest.mark.parametrize("lower", [True, False])
def test_words_are_full_tokenizers_not_tf_texts_case_folded_ones(tmp_path, lower):
    # tensorflow-text's lower-casing is NFKC case folding: "ß" -> "ss", "²" -> "2", "ﬁ" -> "fi",
    # final "Σ" -> "σ"; and it keeps control characters inside words. FullTokenizer does neither.
    line = "Die Straße ist 5 km² groß, ﬁne ΟΔΟΣ x\x07y Ｆull-width.\n"
    path = tmp_path / "a.txt"
    path.write_text(line * 20)
    vocab = vocab_builder.learn_vocab([str(path)], 200, lower, vocab_builder.reserved_tokens(0))
    (tmp_path / "vocab.txt").write_text("".join(token + "\n" for token in vocab))
    pieces = tokenization.FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=lower).tokenize(line)
    assert "[UNK]" not in pieces
    words = tokenization.BasicTokenizer(do_lower_case=lower).tokenize(line)
    assert words == (["die", "straße", "ist", "5", "km²", "groß", ",", "ﬁne", "οδος", "xy", "ｆull", "-", "width", "."]
                     if lower else
                     ["Die", "Straße", "ist", "5", "km²", "groß", ",", "ﬁne", "ΟΔΟΣ", "xy", "Ｆull", "-", "width", "."])
    assert set(words) <= set(vocab)  # Each occurs 20 times: learned whole.


def test_create_pretraining_data_accepts_the_vocab(corpus, vocabs, tmp_path):
    output = str(tmp_path / "out.tfrecord")
    summary = pipeline.run(instances.CreatePretrainingDataOptions(
        input_file=",".join(corpus), output_file=output, vocab_file=vocabs["uncased"],
        max_seq_length=64, max_predictions_per_seq=10, dupe_factor=1, num_workers=0),
        progress_interval_seconds=0.05)
    assert summary.num_instances > 50
    assert sum(1 for _ in tf.data.TFRecordDataset(output)) == summary.num_instances


def test_the_corpus_is_read_as_a_stream_of_its_non_blank_lines(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("first line\n\n  \nsecond line\n")
    dataset = vocab_builder.text_dataset([str(path)], lines_per_batch=2)
    assert isinstance(dataset, tf.data.Dataset)
    # Nothing is read until the dataset is iterated: a file changed now is read as it is then.
    path.write_text("one\n\t\ntwo\n\nthree\n\nfour\n  five  \n")
    batches = [batch.numpy().tolist() for batch in dataset]
    assert batches == [[b"one"], [b"two"], [b"three"], [b"four", b"  five  "]]


def test_learn_vocab_hands_the_stream_to_bert_vocab_from_dataset(corpus, monkeypatch):
    received = []
    original = vocab_builder.bert_vocab_from_dataset.bert_vocab_from_dataset

    def spy(dataset, **kwargs):
        received.append(dataset)
        return original(dataset, **kwargs)

    monkeypatch.setattr(vocab_builder.bert_vocab_from_dataset, "bert_vocab_from_dataset", spy)
    vocab_builder.learn_vocab(corpus[:1], 200, True, vocab_builder.reserved_tokens(0))
    assert len(received) == 1 and isinstance(received[0], tf.data.Dataset)
    assert received[0].element_spec == tf.TensorSpec([None], tf.string)


def test_progress_is_logged_while_reading_and_when_the_reading_ends(corpus, caplog):
    with caplog.at_level(logging.INFO):
        vocab_builder.learn_vocab(corpus[:1], 200, True, vocab_builder.reserved_tokens(0),
                                  progress_interval_seconds=0.0)
    messages = [record.getMessage() for record in caplog.records]
    reading = [m for m in messages if " lines read (" in m]
    assert reading and "ETA" in reading[0]
    total = len(open(corpus[0], encoding="utf-8").read().split("\n")) - 1
    assert any(m.startswith("Input read: %d lines" % total) for m in messages)
    assert any(m.startswith("Learned ") for m in messages)


def test_invalid_utf8_bytes_are_dropped_as_full_tokenizer_drops_them_and_counted(tmp_path, caplog):
    path = tmp_path / "a.txt"
    path.write_bytes(b"caf\xff\xfe\n" * 20 + b"cafe\n" * 20)
    with caplog.at_level(logging.WARNING):
        vocab = vocab_builder.learn_vocab([str(path)], 50, True, vocab_builder.reserved_tokens(0))
    assert "caf" in vocab and not any("\ufffd" in token for token in vocab)
    assert [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING] == [
        "Dropped the bytes that are not valid UTF-8 from 20 line(s) of the input, as the original's tokenizer drops "
        "them: is the text in another encoding?"]


def test_more_characters_than_room_keeps_vocab_size_tokens(tmp_path, caplog):
    path = tmp_path / "a.txt"
    # 60 distinct letters: 120 tokens with their "##" forms, for 40 places.
    letters = [chr(c) for c in range(0x3b1, 0x3c9)] + [chr(c) for c in range(0x430, 0x450)] + list("abc")
    path.write_text("\n".join(" ".join(letters) for _ in range(20)) + "\n")
    with caplog.at_level(logging.WARNING):
        vocab = vocab_builder.learn_vocab([str(path)], 45, True, vocab_builder.reserved_tokens(0))
    assert len(vocab) == 45 and vocab[:5] == vocab_builder.reserved_tokens(0)
    assert "more than vocab_size=45" in caplog.text and "rarest are left out" in caplog.text


def test_the_demo_vocab_keeps_its_five_special_tokens(corpus, tmp_path):
    from reproduction import sample_data

    path = tmp_path / "demo_vocab.txt"
    assert sample_data.build_vocab(corpus[0], str(path), vocab_size=250) == len(_read(path))
    assert _read(path) == vocab_builder.learn_vocab(corpus[:1], 250, True, vocab_builder.reserved_tokens(0))
    assert _read(path)[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_inputs_are_comma_separated_files_and_globs(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha beta\n" * 12)
    (tmp_path / "docs" / "b.txt").write_text("gamma delta\n" * 12)
    (tmp_path / "extra.md").write_text("epsilon\n" * 12)
    options = _options(tmp_path, "%s, %s" % (tmp_path / "docs" / "*.txt", tmp_path / "extra.md"),
                       vocab_size=100, num_unused=0)
    summary = vocab_builder.run(options)
    assert summary.input_files == [str(tmp_path / "docs" / "a.txt"), str(tmp_path / "docs" / "b.txt"),
                                   str(tmp_path / "extra.md")]
    vocab = _read(tmp_path / "vocab.txt")
    assert {"alpha", "beta", "gamma", "delta", "epsilon"} <= set(vocab)
    assert summary.vocab_size == len(vocab) and summary.num_reserved == 5


@pytest.mark.parametrize("input_file,kwargs,message", [
    ("{tmp}/missing.txt", {}, "--input_file: .*missing.txt does not exist"),
    ("{tmp}/*.nothing", {}, "--input_file: the glob .* matches no file"),
    ("{tmp}/text.txt", dict(vocab_size=104), r"--vocab_size=104 leaves no room for learned tokens: "
                                             r"the reserved tokens take 104 .*99 \[unused\*\]"),
    ("{tmp}/text.txt", dict(vocab_size=10, num_unused=5), "--vocab_size=10 .* take 10"),
    ("{tmp}/text.txt", dict(num_unused=-1), "--num_unused=-1 must be >= 0"),
    ("{tmp}/blank.txt", {}, "The input files hold no words .*blank.txt"),
    ("{tmp}/empty.txt", {}, "The input files hold no words .*empty.txt"),
])
def test_errors_name_the_flag_or_file(tmp_path, input_file, kwargs, message):
    (tmp_path / "text.txt").write_text("some words\n")
    (tmp_path / "blank.txt").write_text("\n  \n\t\n\n")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ValueError, match=message):
        vocab_builder.run(_options(tmp_path, input_file.format(tmp=tmp_path), **kwargs))
    assert not (tmp_path / "vocab.txt").exists()
