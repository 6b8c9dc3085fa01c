"""RoundRobinWriter: shards of framed records, round-robin over the files, logging."""

import logging
import os

import pytest
import tensorflow as tf

from pretraining_data import shard_worker
from pretraining_data import tfrecord_framing
from pretraining_data import writer as writer_lib

INV_VOCAB = dict(enumerate(["[PAD]", "[CLS]", "[SEP]", "hello"] + ["w%d" % i for i in range(4, 40)]))


def _example(serial):
    """A serialized tf.train.Example with the original's features; input_ids[1] = serial."""
    ints = lambda values: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    features = {
        "input_ids": ints([1, serial, 2]),
        "input_mask": ints([1, 1, 1]),
        "segment_ids": ints([0, 0, 0]),
        "masked_lm_positions": ints([1]),
        "masked_lm_ids": ints([3]),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0])),
        "next_sentence_labels": ints([0]),
    }
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _shard(index, serials):
    frames = [tfrecord_framing.frame(_example(s)) for s in serials]
    offsets = [0]
    for frame in frames:
        offsets.append(offsets[-1] + len(frame))
    return shard_worker.ShardRecords(index, b"".join(frames), offsets, 0)


def _serials(path):
    return [tf.train.Example.FromString(r.numpy()).features.feature["input_ids"].int64_list.value[1]
            for r in tf.data.TFRecordDataset(path)]


@pytest.mark.parametrize("num_files", [1, 2, 3])
def test_record_k_goes_to_file_k_mod_n_across_shards(tmp_path, num_files):
    paths = [str(tmp_path / ("out-%d.tfrecord" % i)) for i in range(num_files)]
    serial = 0
    with writer_lib.RoundRobinWriter(paths, INV_VOCAB) as writer:
        for index, size in enumerate([4, 5, 1, 0, 7]):
            writer.write_shard(_shard(index, range(serial, serial + size)))
            serial += size
    assert writer.total_written == serial == 17
    for i, path in enumerate(paths):
        assert _serials(path) == list(range(serial))[i::num_files]


def test_logs_the_first_20_instances_over_shards_and_the_total(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    path = str(tmp_path / "out.tfrecord")
    with writer_lib.RoundRobinWriter([path], INV_VOCAB) as writer:
        for index in range(3):
            writer.write_shard(_shard(index, range(3, 3 + 8)))
    messages = [r.getMessage() for r in caplog.records]
    assert messages.count("*** Example ***") == 20
    assert "tokens: [CLS] hello [SEP]" in messages
    assert "masked_lm_weights: 1.0" in messages
    assert messages[-2:] == ["Wrote %s" % path, "Wrote 24 total instances"]


def test_the_files_appear_only_when_complete(tmp_path):
    paths = [str(tmp_path / "out-0.tfrecord"), str(tmp_path / "out-1.tfrecord")]
    with writer_lib.RoundRobinWriter(paths, INV_VOCAB) as writer:
        writer.write_shard(_shard(0, range(5)))
        assert sorted(os.listdir(tmp_path)) == ["out-0.tfrecord.incomplete",
                                                "out-1.tfrecord.incomplete"]
    assert sorted(os.listdir(tmp_path)) == ["out-0.tfrecord", "out-1.tfrecord"]
    assert _serials(paths[0]) == [0, 2, 4] and _serials(paths[1]) == [1, 3]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_an_error_removes_the_files_and_keeps_previous_ones(tmp_path, error):
    previous, fresh = str(tmp_path / "previous.tfrecord"), str(tmp_path / "fresh.tfrecord")
    with writer_lib.RoundRobinWriter([previous], INV_VOCAB) as writer:
        writer.write_shard(_shard(0, [7, 8]))
    with pytest.raises(error):
        with writer_lib.RoundRobinWriter([previous, fresh], INV_VOCAB) as writer:
            writer.write_shard(_shard(0, range(6)))
            raise error
    assert os.listdir(tmp_path) == ["previous.tfrecord"]
    assert _serials(previous) == [7, 8]


def test_a_file_that_cannot_be_created_is_named(tmp_path):
    good = str(tmp_path / "good.tfrecord")
    bad = str(tmp_path / "missing-dir" / "bad.tfrecord")
    with pytest.raises(ValueError, match="Cannot create output file .*missing-dir/bad.tfrecord"):
        writer_lib.RoundRobinWriter([good, bad], INV_VOCAB)
    assert os.listdir(tmp_path) == []  # Nor good.tfrecord.incomplete.


def test_parse_output_files():
    assert writer_lib.parse_output_files(" a.tfrecord, b.tfrecord ,") == ["a.tfrecord", "b.tfrecord"]
    with pytest.raises(ValueError, match="--output_file is empty"):
        writer_lib.parse_output_files(" , ")


def test_a_warning_names_text_the_vocabulary_does_not_cover(caplog):
    covered = ["[CLS]", "[UNK]"] + ["word"] * 9 + ["[SEP]", "[MASK]"]  # 1 piece of 10 unknown: no warning
    with caplog.at_level("WARNING"):
        writer_lib.warn_if_mostly_unknown(covered)
        writer_lib.warn_if_mostly_unknown(["[CLS]", "[SEP]"])
    assert caplog.messages == []
    with caplog.at_level("WARNING"):
        writer_lib.warn_if_mostly_unknown(["[CLS]", "[UNK]", "[UNK]"] + ["word"] * 8 + ["[SEP]"])
    assert caplog.messages == ["2 of the 10 word pieces of the first instances (20%) are [UNK]: the vocabulary does "
                               "not cover this text. Check --vocab_file and --do_lower_case (an uncased vocab needs "
                               "--do_lower_case=True)."]
