"""Translation examples: eos/bos, teacher forcing, batches by length, too-long pairs skipped, evaluation order."""

import random

import numpy as np
import pytest

from nmt import dataset
from nmt.parallel_text import ParallelText
from tokenization import sentencepiece_vocabulary as vocabulary

WORDS = "the a cat dog sat ran on mat log big small red blue and then it was".split()
MAX_SEQ_LENGTH = 24
BATCH_SIZE = 4
FIELDS = ("source_ids", "target_input_ids", "target_ids")


def _pairs(count=120, seed=0):
    """Sentences of 1 to 20 words; the target reverses the words and their letters (about as long)."""
    rng = random.Random(seed)
    sources = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 20))) for _ in range(count)]
    return [(source, source[::-1]) for source in sources]


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "train.tsv"
    path.write_text("".join("%s\t%s\n" % pair for pair in _pairs()))
    return ParallelText.from_tsv(str(path))


@pytest.fixture(scope="module")
def vocab(text, tmp_path_factory):
    return vocabulary.learn(text.sample_lines(1000), 40, str(tmp_path_factory.mktemp("vocab")))


@pytest.fixture(autouse=True)
def small_shuffle_buffer(monkeypatch):
    # Filling 10000 places from 120 pairs would take most of the test's time.
    monkeypatch.setattr(dataset, "SHUFFLE_BUFFER", 500)


def _too_long(vocab):
    processor = vocab.processor()
    return {source for source, target in _pairs()
            if max(len(processor.EncodeAsIds(source)), len(processor.EncodeAsIds(target))) + 1 > MAX_SEQ_LENGTH}


def _padding(batches):
    return sum(int(np.sum(batch[name] == 0)) for batch in batches for name in FIELDS)


def test_examples_add_eos_and_bos_and_round_trip(text, vocab):
    processor = vocab.processor()
    examples = list(dataset.examples(text.pairs(), vocab).as_numpy_iterator())
    assert len(examples) == len(_pairs())
    for (source, target), example in zip(_pairs(), examples):
        assert all(example[name].dtype == np.int32 for name in FIELDS)
        assert example["source_ids"][-1] == vocab.eos_id and example["target_ids"][-1] == vocab.eos_id
        assert example["target_input_ids"][0] == vocab.bos_id
        np.testing.assert_array_equal(example["target_input_ids"][1:], example["target_ids"][:-1])
        assert processor.DecodeIds(example["source_ids"][:-1].tolist()) == source
        assert processor.DecodeIds(example["target_ids"][:-1].tolist()) == target


def test_training_batches_group_lengths_and_skip_too_long_pairs(text, vocab):
    too_long = _too_long(vocab)
    assert 10 < len(too_long) < len(_pairs()) / 2  # the data exercises the filter
    assert dataset.count_too_long(text, vocab, MAX_SEQ_LENGTH, 1000) == (len(too_long), len(_pairs()))
    assert dataset.count_too_long(text, vocab, MAX_SEQ_LENGTH, 10)[1] == 10
    assert dataset.bucket_lengths(MAX_SEQ_LENGTH) == [8, 16, 24]

    batches = list(dataset.training_dataset(text, vocab, MAX_SEQ_LENGTH, BATCH_SIZE, seed=3)
                   .take(60).as_numpy_iterator())
    processor = vocab.processor()
    for batch in batches:
        widths = {batch[name].shape for name in FIELDS}
        assert len(widths) == 1
        [(rows, width)] = widths
        assert rows == BATCH_SIZE and width in (8, 16, 24)
        real = np.maximum((batch["source_ids"] != 0).sum(1), (batch["target_ids"] != 0).sum(1))
        assert real.max() <= width and real.min() > width - 8  # each batch is one bucket
        for row in batch["source_ids"]:
            assert processor.DecodeIds(row[row != 0][:-1].tolist()) not in too_long

    # The same pairs, shuffled the same way but padded to the longest in each batch.
    plain = dataset.examples(text.pairs(3), vocab).filter(lambda e: dataset._length(e) <= MAX_SEQ_LENGTH)
    plain = plain.shuffle(dataset.SHUFFLE_BUFFER, seed=3).padded_batch(BATCH_SIZE).take(60)
    assert _padding(batches) < 0.6 * _padding(list(plain.as_numpy_iterator()))


def test_training_is_seeded(text, vocab):
    def first(seed):
        batches = dataset.training_dataset(text, vocab, MAX_SEQ_LENGTH, BATCH_SIZE, seed).take(5)
        return [batch["target_ids"] for batch in batches.as_numpy_iterator()]

    def same(a, b):
        return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))

    assert same(first(1), first(1)) and not same(first(1), first(2))


def test_evaluation_keeps_input_order_and_every_pair(text, vocab):
    processor = vocab.processor()
    batches = list(dataset.evaluation_dataset(text, vocab, 32).as_numpy_iterator())
    assert [len(batch["index"]) for batch in batches] == [32, 32, 32, 24]
    assert batches[0]["index"].dtype == np.int64
    np.testing.assert_array_equal(np.concatenate([batch["index"] for batch in batches]), np.arange(len(_pairs())))
    sources = [processor.DecodeIds(row[row != 0][:-1].tolist()) for batch in batches for row in batch["source_ids"]]
    assert sources == [source for source, _ in _pairs()]  # too-long pairs included
    assert max(batch["source_ids"].shape[1] for batch in batches) > MAX_SEQ_LENGTH


def test_bucket_lengths_grow_slowly_and_bad_arguments_are_named(text, vocab):
    assert dataset.bucket_lengths(8) == [8]
    assert dataset.bucket_lengths(100) == [8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 100]
    lengths = dataset.bucket_lengths(1024)
    assert lengths[-1] == 1024 and len(lengths) < 40
    assert all(b - a <= max(8, a / 8) for a, b in zip(lengths, lengths[1:]))
    with pytest.raises(ValueError, match=r"--max_seq_length=1 leaves no room for a sentence"):
        dataset.training_dataset(text, vocab, 1, BATCH_SIZE, seed=1)
    with pytest.raises(ValueError, match=r"--batch_size=0: expected a positive number"):
        dataset.training_dataset(text, vocab, MAX_SEQ_LENGTH, 0, seed=1)


def test_sources_by_length_gives_every_source_once_longest_first(text, vocab):
    expected = [example["source_ids"].numpy().tolist() for example in dataset.examples(text.pairs(), vocab)]
    batches = list(dataset.sources_by_length(text, vocab, 16))
    assert [len(indices) for indices, _ in batches] == [16] * 7 + [8]
    seen, lengths = [], []
    for indices, ids in batches:
        assert ids.dtype == np.int32 and ids.shape == (len(indices), len(expected[indices[0]]))
        for index, row in zip(indices, ids):
            length = len(expected[index])
            assert row[:length].tolist() == expected[index] and not row[length:].any()
            lengths.append(length)
        seen += indices.tolist()
    assert sorted(seen) == list(range(120))
    assert lengths == sorted(lengths, reverse=True)
    # Ties keep input order.
    for first, second in zip(seen, seen[1:]):
        if len(expected[first]) == len(expected[second]):
            assert first < second
