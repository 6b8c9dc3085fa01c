"""unigram_baseline: counts of masked tokens in real records, the baseline's figures worked by hand, its errors."""

import collections
import json
import math

import pytest

from analysis import unigram_baseline
from analysis.testing import write_masked_lm_records as write_records

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]


@pytest.fixture
def files(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    # Training: "the" 3 times, "cat" twice, "sat" once; the zero-weight padding (id 0 and a stray 7) is not counted.
    train = write_records(tmp_path / "train.tfrecord", [([5, 6, 0], [1, 1, 0]), ([5, 5, 7], [1, 1, 0]),
                                                        ([6, 7, 0], [1, 1, 0])])
    # Held out: "the" once, "cat" once, "sat" twice.
    held_out = write_records(tmp_path / "heldout.tfrecord", [([7, 5, 0], [1, 1, 0]), ([6, 7, 0], [1, 1, 0])])
    return dict(vocab=str(vocab), train=train, held_out=held_out, output=str(tmp_path / "unigram.json"))


def options(files, **overrides):
    values = dict(input_file=files["train"], eval_input_file=files["held_out"], vocab_file=files["vocab"],
                  output_file=files["output"], max_seq_length=8, max_predictions_per_seq=3)
    values.update(overrides)
    return unigram_baseline.UnigramBaselineOptions(**values)


def test_counts_only_the_weighted_positions(files):
    counts = unigram_baseline.masked_token_counts([files["train"]], 8, 3, batch_size=2)
    assert counts == collections.Counter({5: 3, 6: 2, 7: 1})


def test_run_writes_the_baseline_worked_by_hand(files):
    result = unigram_baseline.run(options(files))
    # Always "the": right on 1 of the 4 held-out tokens. Add-one over 8 entries: p = (count + 1) / (6 + 8).
    expected_loss = -(math.log(4 / 14) + math.log(3 / 14) + 2 * math.log(2 / 14)) / 4
    assert result["accuracy"] == pytest.approx(0.25)
    assert result["loss"] == pytest.approx(expected_loss)
    assert (result["most_frequent_id"], result["most_frequent_token"]) == (5, "the")
    assert (result["train_masked_tokens"], result["eval_masked_tokens"], result["vocab_size"]) == (6, 4, 8)
    with open(files["output"], encoding="utf-8") as f:
        assert json.load(f) == result


def test_records_of_another_length_name_the_flag(files):
    with pytest.raises(ValueError,
                       match=r"train.tfrecord: masked_lm_positions has length 3 but --max_predictions_per_seq=5"):
        unigram_baseline.run(options(files, max_predictions_per_seq=5))


def test_a_glob_matching_nothing_names_the_flag(files):
    with pytest.raises(ValueError, match=r"--eval_input_file: the glob .*nothing\*.* matches no file"):
        unigram_baseline.run(options(files, eval_input_file=files["held_out"] + ".nothing*"))


def test_an_id_outside_the_vocabulary_is_an_error():
    with pytest.raises(ValueError, match=r"Token id 9 .* outside the vocabulary of 8 entries"):
        unigram_baseline.score(collections.Counter({9: 1}), collections.Counter({5: 1}), 8)


def test_a_vocab_that_is_not_utf8_and_a_damaged_file_are_named(files, tmp_path):
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"[PAD]\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"^--vocab_file: \S+/latin1.txt line 2 is not UTF-8 \(byte 4\)\.$"):
        unigram_baseline.run(options(files, vocab_file=str(latin1)))
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(open(files["held_out"], "rb").read()[:-5])  # the last record cut short
    with pytest.raises(ValueError, match=r"^Input file \S+/cut.tfrecord is damaged: record 2 \(counting from 1\) "
                                         r"cannot be read \(.*\); recreate the file\.$"):
        unigram_baseline.run(options(files, eval_input_file=str(cut)))
