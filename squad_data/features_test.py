"""Tests for squad_data.features: windows, max context, targets, TFRecords."""

import json
import os

import numpy as np
import pytest

import tokenization
from squad_data import examples as squad_examples
from squad_data import features as squad_features

NUMBERS = "zero one two three four five six seven eight nine"
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "what"] + NUMBERS.split() + [
    "sit", "##ting", "(", ")", "-", ".", "1895", "1943"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    with open(path, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    return tokenization.FullTokenizer(path, do_lower_case=True)


def _read(tmp_path, context, qas, is_training=True, version_2=False):
    data = {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}
    path = os.path.join(str(tmp_path), "squad.json")
    with open(path, "w") as f:
        json.dump(data, f)
    read = squad_examples.read_squad_examples(path, is_training, version_2)
    assert read.num_skipped == 0
    return read.examples


def _qa(qid, context, answer, **extra):
    qa = {"id": qid, "question": "Who",
          "answers": [{"text": answer, "answer_start": context.index(answer)}] if answer else []}
    qa.update(extra)
    return qa


# 10 one-token words, query "who" (1 token), max_seq_length 10: a window holds
# 10 - 1 - 3 = 6 doc tokens; with doc_stride 3 the windows are doc tokens
# [0-5], [3-8], [6-9]. Max context = max over windows of min(left, right)
# (+0.01 * window length, ties to the first window), worked out by hand:
#   token:    3      4      5      6      7      8
#   window 0  2.06*  1.06*  0.06
#   window 1  0.06   1.06   2.06*  2.06*  1.06*  0.06
#   window 2                       0.04   1.04   1.04*
WINDOW_ARGS = dict(max_seq_length=10, doc_stride=3, max_query_length=4)
EXPECTED_MAX_CONTEXT = [
    {0: True, 1: True, 2: True, 3: True, 4: True, 5: False},
    {3: False, 4: False, 5: True, 6: True, 7: True, 8: False},
    {6: False, 7: False, 8: True, 9: True},
]
WINDOW_STARTS = [0, 3, 6]


def test_windows_and_max_context(tmp_path, tokenizer):
    examples = _read(tmp_path, NUMBERS, [_qa("q", NUMBERS, "seven")], is_training=False)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, is_training=False, **WINDOW_ARGS)
    assert len(features) == 3
    words = NUMBERS.split()
    for index, feature in enumerate(features):
        start = WINDOW_STARTS[index]
        doc = words[start:start + 6]
        assert feature.tokens == ["[CLS]", "who", "[SEP]"] + doc + ["[SEP]"]
        assert feature.unique_id == 1000000000 + index
        assert (feature.example_index, feature.doc_span_index) == (0, index)
        # Doc token i of the window sits at position 3 + i.
        assert feature.token_to_orig_map == {3 + i: start + i for i in range(len(doc))}
        expected = {3 + word - start: flag
                    for word, flag in EXPECTED_MAX_CONTEXT[index].items()}
        assert feature.token_is_max_context == expected
        assert feature.start_position is None and feature.is_impossible is None
    last = features[2]
    assert last.input_ids == [VOCAB.index(t) for t in last.tokens] + [0, 0]
    assert last.input_mask == [1] * 8 + [0, 0]
    assert last.segment_ids == [0, 0, 0, 1, 1, 1, 1, 1, 0, 0]


def test_targets_inside_windows_else_cls(tmp_path, tokenizer):
    qas = [_qa("seven", NUMBERS, "seven"), _qa("five-six", NUMBERS, "five six"),
           _qa("impossible", NUMBERS, None, is_impossible=True)]
    examples = _read(tmp_path, NUMBERS, qas, version_2=True)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, is_training=True, **WINDOW_ARGS)
    targets = [(f.example_index, f.doc_span_index, f.start_position, f.end_position,
                f.is_impossible) for f in features]
    assert targets == [
        # "seven" (word 7) lies in windows 1 and 2: position 3 + 7 - start.
        (0, 0, 0, 0, True), (0, 1, 7, 7, False), (0, 2, 4, 4, False),
        # "five six" (words 5-6) is cut by window 0's end and window 2's start.
        (1, 0, 0, 0, True), (1, 1, 5, 6, False), (1, 2, 0, 0, True),
        (2, 0, 0, 0, True), (2, 1, 0, 0, True), (2, 2, 0, 0, True),
    ]
    for f in features:
        if not f.is_impossible:
            assert f.tokens[f.start_position:f.end_position + 1] == qas[
                f.example_index]["answers"][0]["text"].split()


def test_wordpieces_and_tighter_answer_span(tmp_path, tokenizer):
    # Words: John(0) sitting(1) (1895-1943).(2); the answer "1895" is inside
    # word 2, and the WordPiece tokens allow a tighter span than the word.
    context = "John sitting (1895-1943)."
    examples = _read(tmp_path, context, [_qa("born", context, "1895")])
    (feature,) = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=20, doc_stride=8, max_query_length=4,
        is_training=True)
    assert feature.tokens == ["[CLS]", "who", "[SEP]", "[UNK]", "sit", "##ting", "(", "1895",
                              "-", "1943", ")", ".", "[SEP]"]
    assert feature.token_to_orig_map == {3: 0, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2, 9: 2, 10: 2, 11: 2}
    assert (feature.start_position, feature.end_position) == (7, 7)


def test_query_truncated_and_lengths_checked(tmp_path, tokenizer):
    examples = _read(tmp_path, "one two", [{"id": "q", "question": "who what who what",
                                            "answers": []}], is_training=False)
    (feature,) = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=8, doc_stride=2, max_query_length=2,
        is_training=False)
    assert feature.tokens == ["[CLS]", "who", "what", "[SEP]", "one", "two", "[SEP]"]
    with pytest.raises(ValueError, match="max_seq_length"):
        squad_features.check_lengths(max_seq_length=67, doc_stride=128, max_query_length=64)
    with pytest.raises(ValueError, match="doc_stride"):
        squad_features.check_lengths(max_seq_length=384, doc_stride=0, max_query_length=64)
    squad_features.check_lengths(max_seq_length=68, doc_stride=128, max_query_length=64)


def _many_examples(tmp_path, n):
    qas = [_qa("q%d" % i, NUMBERS, NUMBERS.split()[i % 10]) for i in range(n)]
    return _read(tmp_path, NUMBERS, qas)


def test_tfrecord_round_trip_training(tmp_path, tokenizer):
    examples = _many_examples(tmp_path, 2)
    path = os.path.join(str(tmp_path), "train.tf_record")
    count = squad_features.write_features(examples, tokenizer, path, is_training=True,
                                          **WINDOW_ARGS)
    expected = squad_features.convert_examples_to_features(
        examples, tokenizer, is_training=True, **WINDOW_ARGS)
    assert count == len(expected) == 6
    dataset = squad_features.make_dataset(path, 10, is_training=True, batch_size=6,
                                          drop_remainder=True, shuffle=False, repeat=False)
    (batch,) = list(dataset)
    assert sorted(batch) == ["end_positions", "input_ids", "input_mask", "segment_ids",
                             "start_positions", "unique_ids"]
    assert all(t.dtype.name == "int32" for t in batch.values())
    assert batch["input_ids"].shape == (6, 10)
    np.testing.assert_array_equal(batch["input_ids"], [f.input_ids for f in expected])
    np.testing.assert_array_equal(batch["segment_ids"], [f.segment_ids for f in expected])
    np.testing.assert_array_equal(batch["start_positions"], [f.start_position for f in expected])
    np.testing.assert_array_equal(batch["end_positions"], [f.end_position for f in expected])
    np.testing.assert_array_equal(batch["unique_ids"], [f.unique_id for f in expected])
    # As the original: training records also carry is_impossible.
    spec = dict(squad_features.feature_spec(10, True))
    assert "is_impossible" not in spec


def test_tfrecord_prediction_and_drop_remainder(tmp_path, tokenizer):
    examples = _read(tmp_path, NUMBERS, [_qa("q", NUMBERS, "one")], is_training=False)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, is_training=False, **WINDOW_ARGS)
    path = os.path.join(str(tmp_path), "eval.tf_record")
    with squad_features.FeatureWriter(path, is_training=False) as writer:
        for feature in features:
            writer.process_feature(feature)
    assert writer.num_features == 3

    def batches(drop):
        return list(squad_features.make_dataset(path, 10, is_training=False, batch_size=2,
                                                drop_remainder=drop))

    kept = batches(False)
    assert [b["unique_ids"].numpy().tolist() for b in kept] == [
        [1000000000, 1000000001], [1000000002]]
    assert sorted(kept[0]) == ["input_ids", "input_mask", "segment_ids", "unique_ids"]
    assert len(batches(True)) == 1

    in_memory = list(squad_features.features_to_dataset(features, batch_size=2))
    for a, b in zip(kept, in_memory):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_seeded_shuffle(tmp_path, tokenizer):
    examples = _many_examples(tmp_path, 10)
    path = os.path.join(str(tmp_path), "train.tf_record")
    squad_features.write_features(examples, tokenizer, path, is_training=True, **WINDOW_ARGS)

    def order(seed, shuffle=True):
        dataset = squad_features.make_dataset(path, 10, is_training=True, batch_size=30,
                                              drop_remainder=False, shuffle=shuffle,
                                              seed=seed, repeat=False)
        return [int(u) for b in dataset for u in b["unique_ids"]]

    in_order = order(None, shuffle=False)
    assert in_order == list(range(1000000000, 1000000030))
    shuffled = order(7)
    assert shuffled == order(7)
    assert shuffled != in_order and sorted(shuffled) == in_order
    assert order(8) != shuffled
    # Training defaults: repeated forever and shuffled.
    endless = squad_features.make_dataset(path, 10, is_training=True, batch_size=30,
                                          drop_remainder=True, seed=7)
    first, second = [b["unique_ids"].numpy().tolist() for b in endless.take(2)]
    assert first != in_order and len(second) == 30


class _InterruptedAt:
    """The tokenizer, but a Ctrl-C arrives when it sees `text`."""

    def __init__(self, tokenizer, text):
        self._tokenizer, self._text = tokenizer, text

    def tokenize(self, text):
        if text == self._text:
            raise KeyboardInterrupt()
        return self._tokenizer.tokenize(text)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def test_tfrecord_appears_only_when_complete(tmp_path, tokenizer):
    examples = _many_examples(tmp_path, 2)
    examples[1].question_text = "what"
    path = os.path.join(str(tmp_path), "train.tf_record")
    # The first example's three windows are written before the interrupt.
    with pytest.raises(KeyboardInterrupt):
        squad_features.write_features(examples, _InterruptedAt(tokenizer, "what"), path,
                                      is_training=True, **WINDOW_ARGS)
    assert sorted(os.listdir(str(tmp_path))) == ["squad.json"]
    assert squad_features.write_features(examples, tokenizer, path, is_training=True,
                                         **WINDOW_ARGS) == 6
    assert sorted(os.listdir(str(tmp_path))) == ["squad.json", "train.tf_record"]
