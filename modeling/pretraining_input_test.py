"""Reading pre-training records: schema, --input_file globs, length checks, datasets."""

import os
import re

import numpy as np
import pytest
import tensorflow as tf

from modeling import pretraining_input
from training.testing.pretraining_records import write_records

SEQ, PRED, VOCAB = 16, 4, 40
INT_FEATURES = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                "masked_lm_ids", "next_sentence_labels"]
FEATURES = INT_FEATURES + ["masked_lm_weights"]


def _read_records(path):
    """The records of a TFRecord file as dicts of NumPy arrays, read from the protos."""
    records = []
    for raw in tf.data.TFRecordDataset(path):
        feature = tf.train.Example.FromString(raw.numpy()).features.feature
        record = {name: np.array(feature[name].int64_list.value, np.int64) for name in INT_FEATURES}
        record["masked_lm_weights"] = np.array(feature["masked_lm_weights"].float_list.value, np.float32)
        records.append(record)
    return records


def _key(record):
    """A record's identity: its tokens, segment ids and masked-LM targets."""
    return tuple(np.concatenate([record["input_ids"], record["segment_ids"],
                                 record["masked_lm_positions"], record["masked_lm_ids"],
                                 record["next_sentence_labels"]]).tolist())


def _rows(batch):
    """The records of a batch of the dataset, as dicts of NumPy arrays."""
    batch = {name: value.numpy() for name, value in batch.items()}
    size = len(batch["input_ids"])
    return [{name: value[i] for name, value in batch.items()} for i in range(size)]


def _keys(dataset, num_batches=None):
    if num_batches is not None:
        dataset = dataset.take(num_batches)
    return [_key(row) for batch in dataset for row in _rows(batch)]


@pytest.fixture(scope="module")
def record_files(tmp_path_factory):
    """Three files of 10, 7 and 9 records; returns (paths, records per file)."""
    directory = tmp_path_factory.mktemp("records")
    paths = [write_records(str(directory / ("part-%d.tfrecord" % i)), n, VOCAB, SEQ, PRED, seed=i + 1)
             for i, n in enumerate([10, 7, 9])]
    per_file = [_read_records(path) for path in paths]
    keys = [_key(r) for records in per_file for r in records]
    assert len(set(keys)) == len(keys), "test records must be distinguishable"
    return paths, per_file


def _example(**features):
    def feature(values):
        if values and isinstance(values[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(
        feature={name: feature(values) for name, values in features.items()}))


def _valid_features(seq=SEQ, pred=PRED):
    return dict(input_ids=[2] + [7] * (seq - 2) + [3], input_mask=[1] * seq, segment_ids=[0] * seq,
                masked_lm_positions=list(range(1, pred + 1)), masked_lm_ids=[9] * pred,
                masked_lm_weights=[1.0] * pred, next_sentence_labels=[1])


def _write_examples(path, examples):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in examples:
            writer.write(example.SerializeToString())
    return str(path)


# ---------------------------------------------------------------- feature_spec

def test_feature_spec_is_the_original_schema():
    spec = pretraining_input.feature_spec(128, 20)
    assert sorted(spec) == sorted(FEATURES)
    for name in ("input_ids", "input_mask", "segment_ids"):
        assert spec[name] == tf.io.FixedLenFeature([128], tf.int64)
    for name in ("masked_lm_positions", "masked_lm_ids"):
        assert spec[name] == tf.io.FixedLenFeature([20], tf.int64)
    assert spec["masked_lm_weights"] == tf.io.FixedLenFeature([20], tf.float32)
    assert spec["next_sentence_labels"] == tf.io.FixedLenFeature([1], tf.int64)


def test_feature_spec_parses_written_records(record_files):
    paths, per_file = record_files
    raw = next(iter(tf.data.TFRecordDataset(paths[0]).batch(3)))
    parsed = tf.io.parse_example(raw, pretraining_input.feature_spec(SEQ, PRED))
    for i, record in enumerate(per_file[0][:3]):
        for name in FEATURES:
            np.testing.assert_array_equal(parsed[name][i].numpy(), record[name], err_msg=name)


# ---------------------------------------------------------------- expand_input_files

def test_expand_input_files_globs_in_flag_order_each_sorted(tmp_path):
    for name in ("b-2", "b-10", "b-1", "a-3", "a-1", "other"):
        (tmp_path / name).write_bytes(b"")
    b_glob, a_glob, single = str(tmp_path / "b-*"), str(tmp_path / "a-?"), str(tmp_path / "other")
    flag = " %s , ,%s,%s, " % (b_glob, a_glob, single)
    expected = [str(tmp_path / n) for n in ("b-1", "b-10", "b-2", "a-1", "a-3", "other")]
    assert pretraining_input.expand_input_files(flag) == expected


def test_expand_input_files_keeps_overlaps_as_the_original(tmp_path):
    # The original extends the list glob by glob (tf.gfile.Glob), without deduplication.
    for name in ("a-1", "a-2"):
        (tmp_path / name).write_bytes(b"")
    flag = "%s,%s" % (tmp_path / "a-*", tmp_path / "a-2")
    assert pretraining_input.expand_input_files(flag) == [
        str(tmp_path / "a-1"), str(tmp_path / "a-2"), str(tmp_path / "a-2")]


@pytest.mark.parametrize("flag", ["", " ", ",", " , ,"])
def test_expand_input_files_empty_flag(flag):
    with pytest.raises(ValueError) as error:
        pretraining_input.expand_input_files(flag)
    assert str(error.value) == "--input_file is empty: give a file, a glob or a comma-separated list."


@pytest.mark.parametrize("missing", ["*.nothing", "absent.tfrecord"])
def test_expand_input_files_glob_matching_nothing(tmp_path, missing):
    (tmp_path / "a.tfrecord").write_bytes(b"")
    pattern = str(tmp_path / missing)
    with pytest.raises(ValueError) as error:
        pretraining_input.expand_input_files("%s, %s" % (tmp_path / "a.tfrecord", pattern))
    assert str(error.value) == "--input_file: the glob '%s' matches no file." % pattern


# ---------------------------------------------------------------- check_record_lengths

def test_check_record_lengths_accepts_matching_files(record_files):
    paths, _ = record_files
    assert pretraining_input.check_record_lengths(paths, SEQ, PRED) is None


@pytest.mark.parametrize("seq,pred,feature,flag,actual,given", [
    (SEQ + 1, PRED, "input_ids", "--max_seq_length", SEQ, SEQ + 1),
    (SEQ, PRED + 2, "masked_lm_positions", "--max_predictions_per_seq", PRED, PRED + 2),
])
def test_check_record_lengths_names_file_feature_and_flag(record_files, seq, pred, feature, flag,
                                                          actual, given):
    paths, _ = record_files
    with pytest.raises(ValueError) as error:
        pretraining_input.check_record_lengths(paths, seq, pred)
    assert str(error.value) == (
        "Input file %s: %s has length %d but %s=%d. Pass the %s the file was created with."
        % (paths[0], feature, actual, flag, given, flag))


def test_check_record_lengths_checks_every_file(record_files, tmp_path):
    paths, _ = record_files
    longer = write_records(str(tmp_path / "longer.tfrecord"), 2, VOCAB, 2 * SEQ, PRED)
    with pytest.raises(ValueError) as error:
        pretraining_input.check_record_lengths(paths + [longer], SEQ, PRED)
    assert str(error.value) == (
        "Input file %s: input_ids has length %d but --max_seq_length=%d. Pass the "
        "--max_seq_length the file was created with." % (longer, 2 * SEQ, SEQ))


@pytest.mark.parametrize("feature,flag", [
    ("input_mask", "--max_seq_length"),
    ("segment_ids", "--max_seq_length"),
    ("masked_lm_ids", "--max_predictions_per_seq"),
    ("masked_lm_weights", "--max_predictions_per_seq"),
])
def test_check_record_lengths_checks_each_feature(tmp_path, feature, flag):
    features = _valid_features()
    features[feature] = features[feature][:-1]
    path = _write_examples(tmp_path / "bad.tfrecord", [_example(**features)])
    with pytest.raises(ValueError) as error:
        pretraining_input.check_record_lengths([path], SEQ, PRED)
    given = SEQ if flag == "--max_seq_length" else PRED
    assert str(error.value) == (
        "Input file %s: %s has length %d but %s=%d. Pass the %s the file was created with."
        % (path, feature, given - 1, flag, given, flag))


def test_check_record_lengths_missing_feature(tmp_path):
    features = _valid_features()
    del features["masked_lm_weights"]
    path = _write_examples(tmp_path / "no_weights.tfrecord", [_example(**features)])
    with pytest.raises(ValueError) as error:
        pretraining_input.check_record_lengths([path], SEQ, PRED)
    assert str(error.value) == (
        "Input file %s: records lack the feature 'masked_lm_weights'; is it a pre-training "
        "file from create_pretraining_data.py?" % path)


def test_check_record_lengths_empty_file(tmp_path):
    path = _write_examples(tmp_path / "empty.tfrecord", [])
    with pytest.raises(ValueError) as error:
        pretraining_input.check_record_lengths([path], SEQ, PRED)
    assert str(error.value) == "Input file %s holds no records." % path


def test_check_record_lengths_not_a_tfrecord_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("This is plain text, not a TFRecord file.\n" * 5)
    with pytest.raises(ValueError, match="^" + re.escape("Input file %s is not a TFRecord file: " % path)):
        pretraining_input.check_record_lengths([str(path)], SEQ, PRED)


# ---------------------------------------------------------------- training_dataset

def test_training_dataset_types_and_static_batch_shape(record_files):
    paths, _ = record_files
    dataset = pretraining_input.training_dataset(paths, 5, SEQ, PRED, seed=1)
    spec = dataset.element_spec
    assert sorted(spec) == sorted(FEATURES)
    for name in INT_FEATURES:
        assert spec[name].dtype == tf.int32, name
    assert spec["masked_lm_weights"].dtype == tf.float32
    # drop_remainder: the batch dimension is static.
    for name in ("input_ids", "input_mask", "segment_ids"):
        assert spec[name].shape == [5, SEQ]
    for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
        assert spec[name].shape == [5, PRED]
    assert spec["next_sentence_labels"].shape == [5, 1]


def test_training_dataset_is_endless_and_yields_the_records(record_files):
    paths, per_file = record_files
    by_key = {_key(r): r for records in per_file for r in records}
    total = len(by_key)  # 26 records: batches of 4 cover them 6.5 times in 40 batches
    batches = list(pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=3).take(40))
    assert len(batches) == 40
    seen = []
    for batch in batches:
        assert batch["input_ids"].shape == [4, SEQ]
        for row in _rows(batch):
            record = by_key[_key(row)]  # every row is one of the written records ...
            for name in FEATURES:  # ... parsed exactly
                np.testing.assert_array_equal(row[name], record[name], err_msg=name)
            seen.append(_key(row))
    assert set(seen) == set(by_key)
    counts = np.array([seen.count(k) for k in by_key])
    # Repeated epoch after epoch: no record is starved or favoured for long.
    assert counts.min() >= 3 and counts.max() <= 10, counts
    assert len(seen) == 160 > total


def test_training_dataset_is_shuffled_and_interleaves_files(record_files):
    paths, per_file = record_files
    in_file_order = [_key(r) for records in per_file for r in records]
    file_of = {_key(r): i for i, records in enumerate(per_file) for r in records}
    keys = _keys(pretraining_input.training_dataset(paths, 2, SEQ, PRED, seed=5), 13)
    assert keys != in_file_order
    assert sorted(keys) != sorted(in_file_order)  # not one epoch in another order
    # Files are read in parallel (interleaved), not one after the other.
    assert len({file_of[k] for k in keys[:8]}) >= 2
    # Records are shuffled too, not only files: one file does not come out in its order.
    single = _keys(pretraining_input.training_dataset(paths[:1], 2, SEQ, PRED, seed=5), 5)
    assert single != in_file_order[:10]
    assert sorted(single) != sorted(in_file_order[:10])  # epochs blur: repeat, then shuffle


def test_training_dataset_same_seed_same_batches(record_files):
    paths, _ = record_files
    first = pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=7).take(15)
    second = pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=7).take(15)
    for a, b in zip(first, second):
        for name in FEATURES:
            np.testing.assert_array_equal(a[name].numpy(), b[name].numpy(), err_msg=name)
    other = _keys(pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=8), 15)
    assert other != _keys(first)
    assert len(_keys(first)) == 60


def test_training_iterator_checkpoint_resumes_the_stream(record_files, tmp_path):
    # The module promises the iterator can be checkpointed with the model.
    paths, _ = record_files
    iterator = iter(pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=11))
    for _ in range(5):
        next(iterator)
    prefix = tf.train.Checkpoint(iterator=iterator).save(str(tmp_path / "ckpt"))
    expected = [_key(row) for _ in range(8) for row in _rows(next(iterator))]
    resumed = iter(pretraining_input.training_dataset(paths, 4, SEQ, PRED, seed=11))
    tf.train.Checkpoint(iterator=resumed).restore(prefix).assert_consumed()
    assert [_key(row) for _ in range(8) for row in _rows(next(resumed))] == expected


def test_training_dataset_shards_files_by_input_pipeline(record_files):
    paths, per_file = record_files
    file_of = {_key(r): i for i, records in enumerate(per_file) for r in records}

    def files_read(context):
        dataset = pretraining_input.training_dataset(paths, 3, SEQ, PRED, seed=2, input_context=context)
        return {file_of[k] for k in _keys(dataset, 30)}

    # Two hosts of two replicas each: files.shard(2, id) -> files 0, 2 and file 1.
    assert files_read(tf.distribute.InputContext(2, 0, 4)) == {0, 2}
    assert files_read(tf.distribute.InputContext(2, 1, 4)) == {1}
    # One host (however many replicas), or no context: every file.
    assert files_read(tf.distribute.InputContext(1, 0, 2)) == {0, 1, 2}
    assert files_read(None) == {0, 1, 2}


def test_training_dataset_with_fewer_files_than_pipelines_is_still_endless(record_files):
    paths, _ = record_files
    dataset = pretraining_input.training_dataset(
        paths[:1], 2, SEQ, PRED, seed=2, input_context=tf.distribute.InputContext(2, 1, 2))
    assert len(list(dataset.take(3))) == 3


@pytest.mark.parametrize("num_files, pipelines, batch_size", [(1, 2, 4), (2, 3, 2), (1, 4, 1)])
def test_pipelines_with_fewer_files_split_the_one_pipeline_batches(record_files, num_files, pipelines,
                                                                   batch_size):
    # Fewer files than pipelines: each pipeline keeps its slice of every global
    # batch, so together, in pipeline order, they read what one pipeline reads
    # with the global batch (and a multi-worker run trains on a single one's data).
    paths, _ = record_files
    files = paths[:num_files]
    single = list(pretraining_input.training_dataset(files, batch_size * pipelines, SEQ, PRED, seed=4).take(12))
    shares = [list(pretraining_input.training_dataset(
        files, batch_size, SEQ, PRED, seed=4,
        input_context=tf.distribute.InputContext(pipelines, i, pipelines)).take(12)) for i in range(pipelines)]
    for step, whole in enumerate(single):
        for name in FEATURES:
            parts = [share[step][name] for share in shares]
            assert all(part.shape[0] == batch_size for part in parts)
            np.testing.assert_array_equal(np.concatenate(parts), whole[name].numpy(), err_msg=name)
    # Each pipeline its own slice, not a copy of another's.
    firsts = [[_key(row) for step in range(3) for row in _rows(share[step])] for share in shares]
    assert all(a != b for i, a in enumerate(firsts) for b in firsts[i + 1:])


def test_record_sharded_pipelines_have_static_batch_shapes(record_files):
    paths, _ = record_files
    spec = pretraining_input.training_dataset(
        paths[:1], 3, SEQ, PRED, seed=1, input_context=tf.distribute.InputContext(2, 1, 2)).element_spec
    assert spec["input_ids"].shape == [3, SEQ] and spec["masked_lm_weights"].shape == [3, PRED]


# ---------------------------------------------------------------- evaluation_dataset

def test_evaluation_dataset_one_pass_in_file_order(record_files):
    paths, per_file = record_files
    records = [r for records in per_file for r in records]  # 26 records
    dataset = pretraining_input.evaluation_dataset(paths, 4, SEQ, PRED)
    batches = list(dataset)
    # One pass; as the original (drop_remainder=True) the last 2 records are dropped.
    assert len(batches) == 6
    rows = [row for batch in batches for row in _rows(batch)]
    assert len(rows) == 24
    for row, record in zip(rows, records[:24]):
        for name in FEATURES:
            np.testing.assert_array_equal(row[name], record[name], err_msg=name)
    # Not shuffled: a second pass is identical.
    assert _keys(dataset) == [_key(r) for r in records[:24]]


def test_evaluation_dataset_types_and_shapes(record_files):
    paths, _ = record_files
    spec = pretraining_input.evaluation_dataset(paths, 3, SEQ, PRED).element_spec
    for name in INT_FEATURES:
        assert spec[name].dtype == tf.int32, name
    assert spec["masked_lm_weights"].dtype == tf.float32
    assert spec["input_ids"].shape == [3, SEQ]
    assert spec["masked_lm_weights"].shape == [3, PRED]
    assert spec["next_sentence_labels"].shape == [3, 1]


def test_evaluation_dataset_follows_the_given_file_order(record_files):
    paths, per_file = record_files
    reordered = [paths[2], paths[0]]  # 9 + 10 records
    keys = _keys(pretraining_input.evaluation_dataset(reordered, 19, SEQ, PRED))
    assert keys == [_key(r) for r in per_file[2] + per_file[0]]


def test_evaluation_dataset_smaller_than_a_batch_is_empty(record_files):
    paths, _ = record_files
    assert list(pretraining_input.evaluation_dataset(paths[1:2], 8, SEQ, PRED)) == []


def test_check_record_lengths_needs_next_sentence_labels_and_examples(tmp_path):
    features = _valid_features()
    del features["next_sentence_labels"]
    path = _write_examples(tmp_path / "no_nsp.tfrecord", [_example(**features)])
    with pytest.raises(ValueError, match="^" + re.escape(
            "Input file %s: records lack the feature 'next_sentence_labels'; is it a pre-training file from "
            "create_pretraining_data.py?" % path)):
        pretraining_input.check_record_lengths([path], SEQ, PRED)
    not_examples = tmp_path / "not_examples.tfrecord"
    with tf.io.TFRecordWriter(str(not_examples)) as writer:
        writer.write(b"\xff\xff\xff not a proto")
    with pytest.raises(ValueError, match="^" + re.escape(
            "Input file %s: its records are not tf.train.Example protos (" % not_examples)):
        pretraining_input.check_record_lengths([str(not_examples)], SEQ, PRED)


def test_check_record_lengths_names_ids_beyond_the_model_s_vocabulary(tmp_path):
    path = _write_examples(tmp_path / "ok.tfrecord", [_example(**_valid_features())])
    pretraining_input.check_record_lengths([path], SEQ, PRED, vocab_size=10)  # ids up to 9
    with pytest.raises(ValueError, match="^" + re.escape(
            "Input file %s: masked_lm_ids holds token id 9 but the model's vocab_size is 9 (--bert_config_file): "
            "the file was made with a larger vocabulary than the model's." % path)):
        pretraining_input.check_record_lengths([path], SEQ, PRED, vocab_size=9)
    with pytest.raises(ValueError, match="input_ids holds token id 7 but the model's vocab_size is 5"):
        pretraining_input.check_record_lengths([path], SEQ, PRED, vocab_size=5)
