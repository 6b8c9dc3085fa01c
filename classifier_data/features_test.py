"""Tests for features.py with a tiny vocabulary."""

import logging as std_logging

import numpy as np
import pytest
import tensorflow as tf

import tokenization
from classifier_data import features
from classifier_data.data_processor import InputExample

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "a", "dog",
         "ran", "."]
ID = {token: i for i, token in enumerate(VOCAB)}
LABELS = ["contradiction", "entailment", "neutral"]


@pytest.fixture(name="tokenizer")
def fixture_tokenizer(tmp_path):
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n")
    return tokenization.FullTokenizer(str(vocab_file), do_lower_case=True)


def _ids(text):
    return [ID[token] for token in text.split()]


def _convert(tokenizer, text_a, text_b=None, label="neutral", max_seq_length=10,
             label_list=LABELS):
    example = InputExample("dev-0", text_a, text_b, label)
    return features.convert_single_example(9, example, label_list, max_seq_length, tokenizer)


def test_single_text(tokenizer):
    feature = _convert(tokenizer, "The cat sat.", max_seq_length=8)
    assert feature.input_ids == _ids("[CLS] the cat sat . [SEP]") + [0, 0]
    assert feature.input_mask == [1] * 6 + [0] * 2
    assert feature.segment_ids == [0] * 8
    assert feature.label_id == 2


def test_single_text_keeps_max_seq_length_minus_2_tokens(tokenizer):
    feature = _convert(tokenizer, "the cat sat on the mat", max_seq_length=5)
    assert feature.input_ids == _ids("[CLS] the cat sat [SEP]")
    assert feature.input_mask == [1] * 5


def test_pair_segments_and_padding(tokenizer):
    feature = _convert(tokenizer, "the cat", "a dog ran", max_seq_length=10)
    assert feature.input_ids == _ids("[CLS] the cat [SEP] a dog ran [SEP]") + [0, 0]
    # Segment 0 covers [CLS] a [SEP]; segment 1 covers b [SEP]; padding is 0.
    assert feature.segment_ids == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0]
    assert feature.input_mask == [1] * 8 + [0] * 2


def test_pair_truncation_pops_the_longer_text(tokenizer):
    # Budget 10 - 3 = 7 of 6 + 2 tokens: "mat" goes from the longer a only.
    feature = _convert(tokenizer, "the cat sat on the mat", "a dog", max_seq_length=10)
    assert feature.input_ids == _ids("[CLS] the cat sat on the [SEP] a dog [SEP]")
    # Budget 4 of 3 + 3 tokens: the tie pops b, then a is the longer.
    feature = _convert(tokenizer, "the cat sat", "a dog ran", max_seq_length=7)
    assert feature.input_ids == _ids("[CLS] the cat [SEP] a dog [SEP]")
    assert feature.segment_ids == [0, 0, 0, 0, 1, 1, 1]


def test_truncate_seq_pair_ties_pop_b():
    tokens_a, tokens_b = ["a1", "a2"], ["b1", "b2"]
    features.truncate_seq_pair(tokens_a, tokens_b, 3)
    assert (tokens_a, tokens_b) == (["a1", "a2"], ["b1"])


def test_empty_text_b_is_a_single_text(tokenizer):
    # As the original: no second [SEP] when text_b tokenizes to nothing.
    feature = _convert(tokenizer, "the cat", "  ", max_seq_length=6)
    assert feature.input_ids == _ids("[CLS] the cat [SEP]") + [0, 0]


def test_label_ids(tokenizer):
    assert _convert(tokenizer, "the", label="contradiction").label_id == 0
    assert _convert(tokenizer, "the", label="entailment").label_id == 1
    # Test examples have no label: id 0, as the original's placeholder.
    assert _convert(tokenizer, "the", label=None).label_id == 0
    with pytest.raises(ValueError, match=r"dev-0: unknown label 'maybe'"):
        _convert(tokenizer, "the", label="maybe")


def test_regression_labels_are_floats(tokenizer):
    feature = _convert(tokenizer, "the cat", "a cat", label=3.8, label_list=[])
    assert feature.label_id == 3.8 and isinstance(feature.label_id, float)
    assert _convert(tokenizer, "the", label=None, label_list=None).label_id == 0.0
    assert isinstance(_convert(tokenizer, "the", label="4", label_list=[]).label_id, float)


def test_max_seq_length_too_small(tokenizer):
    with pytest.raises(ValueError, match="max_seq_length must be at least 3"):
        _convert(tokenizer, "the", "cat", max_seq_length=2)


def test_convert_examples_to_features_logs_first_five(tokenizer, caplog):
    examples = [InputExample("train-%d" % i, "the cat", None, "neutral") for i in range(7)]
    with caplog.at_level(std_logging.INFO):
        result = features.convert_examples_to_features(examples, LABELS, 6, tokenizer)
    assert len(result) == 7
    assert result[6].input_ids == _ids("[CLS] the cat [SEP]") + [0, 0]
    logged = caplog.text
    assert "guid: train-4" in logged and "guid: train-5" not in logged
    assert "tokens: [CLS] the cat [SEP]" in logged


def test_feature_spec():
    spec = features.feature_spec(16, is_regression=False)
    assert sorted(spec) == ["input_ids", "input_mask", "label_ids", "segment_ids"]
    assert spec["input_ids"].shape == [16] and spec["input_ids"].dtype == tf.int64
    assert spec["label_ids"].dtype == tf.int64
    assert features.feature_spec(16, is_regression=True)["label_ids"].dtype == tf.float32


def _examples():
    return [InputExample("test-0", "the cat sat", None, "entailment"),
            InputExample("test-1", "a dog", "ran on the mat", "neutral"),
            InputExample("test-2", "the mat", None, "contradiction"),
            InputExample("test-3", "a cat", None, "contradiction")]


def test_tf_example_round_trip(tokenizer, tmp_path):
    output_file = str(tmp_path / "eval.tf_record")
    written = features.file_based_convert_examples_to_features(
        _examples(), LABELS, 8, tokenizer, output_file)
    assert written == 4
    expected = features.convert_examples_to_features(_examples(), LABELS, 8, tokenizer)

    dataset = features.dataset_from_file(output_file, 8, is_regression=False, batch_size=3,
                                         is_training=False, drop_remainder=False)
    batches = list(dataset.as_numpy_iterator())
    assert [len(batch["input_ids"]) for batch in batches] == [3, 1]
    merged = {name: np.concatenate([batch[name] for batch in batches]) for name in batches[0]}
    assert merged["input_ids"].dtype == np.int32
    np.testing.assert_array_equal(merged["input_ids"], [f.input_ids for f in expected])
    np.testing.assert_array_equal(merged["input_mask"], [f.input_mask for f in expected])
    np.testing.assert_array_equal(merged["segment_ids"], [f.segment_ids for f in expected])
    np.testing.assert_array_equal(merged["label_ids"], [1, 2, 0, 0])
    # The original's schema: every record carries is_real_example = 1.
    for record in tf.data.TFRecordDataset(output_file):
        parsed = tf.train.Example.FromString(record.numpy())
        assert parsed.features.feature["is_real_example"].int64_list.value == [1]


def test_regression_round_trip_and_drop_remainder(tokenizer, tmp_path):
    output_file = str(tmp_path / "eval.tf_record")
    examples = [InputExample("dev-%d" % i, "the cat", "a cat", 0.5 * i) for i in range(3)]
    features.file_based_convert_examples_to_features(examples, [], 6, tokenizer, output_file)
    dataset = features.dataset_from_file(output_file, 6, is_regression=True, batch_size=2,
                                         is_training=False, drop_remainder=True)
    assert dataset.element_spec["label_ids"].shape.as_list() == [2]
    batches = list(dataset.as_numpy_iterator())
    assert len(batches) == 1
    assert batches[0]["label_ids"].dtype == np.float32
    np.testing.assert_allclose(batches[0]["label_ids"], [0.0, 0.5])


def test_training_dataset_repeats_and_shuffles_with_a_seed(tokenizer, tmp_path):
    output_file = str(tmp_path / "train.tf_record")
    examples = [InputExample("train-%d" % i, "the cat", None, LABELS[i % 3]) for i in range(6)]
    features.file_based_convert_examples_to_features(examples, LABELS, 6, tokenizer, output_file)

    def labels(seed):
        dataset = features.dataset_from_file(output_file, 6, is_regression=False, batch_size=4,
                                             is_training=True, drop_remainder=True, seed=seed)
        return np.concatenate([b["label_ids"] for b in dataset.take(6).as_numpy_iterator()])

    first = labels(seed=1)
    assert len(first) == 24  # More than the 6 records: it repeats.
    np.testing.assert_array_equal(first, labels(seed=1))
    assert not np.array_equal(first, np.tile([0, 1, 2], 8))  # Not in file order.


def test_check_vocab_fits_config():
    features.check_vocab_fits_config({"t%d" % i: i for i in range(30522)}, 30522)
    features.check_vocab_fits_config({"t%d" % i: i for i in range(100)}, 30522)
    with pytest.raises(ValueError, match=r"^/models/vocab\.txt has 30600 lines \(ids 0-30599\) but bert_config's "
                                         r"vocab_size is 30522: ids >= 30522 have no embedding\."):
        features.check_vocab_fits_config({"t%d" % i: i for i in range(30600)}, 30522, "/models/vocab.txt")
    # A token on two lines: 22 tokens, but ids up to 22 (load_vocab keeps the later line's id).
    repeated = dict({"t%d" % i: i for i in range(22)}, t3=22)
    with pytest.raises(ValueError, match=r"has 23 lines \(ids 0-22\) but bert_config's vocab_size is 22"):
        features.check_vocab_fits_config(repeated, 22)


def test_records_file_appears_only_when_complete(tokenizer, tmp_path):
    output_file = str(tmp_path / "train.tf_record")
    examples = [InputExample("train-0", "the cat", None, "neutral"),
                InputExample("train-1", "a dog", None, "entailment"),
                InputExample("train-2", "the mat", None, "maybe")]
    # The third example fails after two records were written.
    with pytest.raises(ValueError, match="unknown label 'maybe'"):
        features.file_based_convert_examples_to_features(examples, LABELS, 8, tokenizer, output_file)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vocab.txt"]
    features.file_based_convert_examples_to_features(examples[:2], LABELS, 8, tokenizer, output_file)
    assert sum(1 for _ in tf.data.TFRecordDataset(output_file)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.tf_record", "vocab.txt"]
