"""Next-token examples: bos/eos, padding, long lines split with every token predicted once, batching."""

import math
import random

import numpy as np
import pytest

from lm import dataset
from tokenization import sentencepiece_vocabulary as vocabulary

WORDS = "the a cat dog sat ran on mat log big small red blue and then it was".split()


def _lines(count=200, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(count)]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    return vocabulary.learn(_lines(), 30, str(tmp_path_factory.mktemp("vocab")))


def test_a_short_line_is_one_padded_example(vocab, tmp_path):
    (tmp_path / "a.txt").write_text("the cat sat\n\n")
    [example] = list(dataset.examples(dataset.TextFiles([str(tmp_path / "a.txt")]).lines(), vocab, 8))
    ids = vocab.processor().EncodeAsIds("the cat sat")
    n = len(ids) + 1
    assert example["input_ids"].numpy().tolist() == ([vocab.bos_id] + ids + [0] * 8)[:8]
    assert example["target_ids"].numpy().tolist() == (ids + [vocab.eos_id] + [0] * 8)[:8]
    assert example["input_mask"].numpy().tolist() == [1] * n + [0] * (8 - n)
    assert int(example["num_chars"]) == len("the cat sat") + 1


def test_long_lines_are_split_not_dropped(vocab, tmp_path):
    line = " ".join(_lines(10, 5))
    (tmp_path / "long.txt").write_text(line + "\n")
    ids = vocab.processor().EncodeAsIds(line)
    pieces = list(dataset.examples(dataset.TextFiles([str(tmp_path / "long.txt")]).lines(), vocab, 16))
    assert len(pieces) == math.ceil((len(ids) + 1) / 16)
    targets = np.concatenate([p["target_ids"].numpy()[p["input_mask"].numpy() == 1] for p in pieces])
    np.testing.assert_array_equal(targets, ids + [vocab.eos_id])
    # Each piece starts with the token the previous one ended on.
    for previous, piece in zip(pieces, pieces[1:]):
        assert piece["input_ids"].numpy()[0] == previous["target_ids"].numpy()[-1]
    assert [int(p["num_chars"]) for p in pieces] == [len(line) + 1] + [0] * (len(pieces) - 1)


def test_training_batches_are_seeded_and_evaluation_keeps_the_last_partial_batch(vocab, tmp_path):
    (tmp_path / "a.txt").write_text("\n".join(_lines(50, 1)) + "\n")
    source = dataset.TextFiles([str(tmp_path / "a.txt")])

    def first_batches(seed):
        iterator = iter(dataset.training_dataset(source, vocab, 16, 4, seed))
        return [next(iterator)["input_ids"].numpy() for _ in range(3)]

    assert all(np.array_equal(a, b) for a, b in zip(first_batches(1), first_batches(1)))
    assert not all(np.array_equal(a, b) for a, b in zip(first_batches(1), first_batches(2)))
    sizes = [len(batch["input_ids"]) for batch in dataset.evaluation_dataset(source, vocab, 64, 8)]
    assert sum(sizes) == 50 and sizes[-1] == 2


def test_packed_lines_run_on_as_one_stream_with_every_token_predicted_once(vocab, tmp_path):
    lines = _lines(12, 3)
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n\n")
    source = dataset.TextFiles([str(tmp_path / "a.txt")])
    stream = []  # What the lines give one after the other: [bos] + ids + [eos] each.
    for line in lines:
        stream += [vocab.bos_id] + vocab.processor().EncodeAsIds(line) + [vocab.eos_id]
    predictions = len(stream) - len(lines)  # Every token but the bos of each line.
    pieces = list(dataset.examples(source.lines(), vocab, 8, pack=True))
    assert len(pieces) == math.ceil(predictions / 8)
    masks = [p["input_mask"].numpy() for p in pieces]
    assert all(m.sum() == 8 for m in masks[:-1]) and 0 < masks[-1].sum() <= 8
    inputs = np.concatenate([p["input_ids"].numpy()[m == 1] for p, m in zip(pieces, masks)])
    targets = np.concatenate([p["target_ids"].numpy()[m == 1] for p, m in zip(pieces, masks)])
    expected_inputs, expected_targets, start = [], [], 0
    for line in lines:  # Within a line, each token predicts the next; a line's eos predicts nothing.
        tokens = [vocab.bos_id] + vocab.processor().EncodeAsIds(line) + [vocab.eos_id]
        expected_inputs += tokens[:-1]
        expected_targets += tokens[1:]
    np.testing.assert_array_equal(inputs, expected_inputs)
    np.testing.assert_array_equal(targets, expected_targets)
    # Characters: each line's, newline included, counted once, in the example holding its bos.
    assert sum(int(p["num_chars"]) for p in pieces) == sum(len(line) + 1 for line in lines)
    first_bos_piece = int(pieces[0]["num_chars"])
    assert first_bos_piece >= len(lines[0]) + 1
    # Evaluation batches the packed examples; training ones are full and seeded.
    sizes = [len(b["input_ids"]) for b in dataset.evaluation_dataset(source, vocab, 8, 4, pack=True)]
    assert sum(sizes) == len(pieces)
    batch = next(iter(dataset.training_dataset(source, vocab, 8, 3, seed=1, pack=True)))
    assert batch["input_ids"].shape == (3, 8)
