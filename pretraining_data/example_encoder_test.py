"""The hand-written records are exactly tf.train.Example's, and parse with the reader's schema."""

import random
import struct

import numpy as np
import pytest
import tensorflow as tf

from modeling import pretraining_input
from pretraining_data import example_encoder


def _tf_example(input_ids, segment_ids, positions, label_ids, is_random_next, max_seq_length,
                max_predictions):
    """The original's features, built with the protobuf library."""
    pad = [0] * (max_seq_length - len(input_ids))
    prediction_pad = [0] * (max_predictions - len(label_ids))

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    return tf.train.Example(features=tf.train.Features(feature={
        "input_ids": ints(input_ids + pad),
        "input_mask": ints([1] * len(input_ids) + pad),
        "segment_ids": ints(segment_ids + pad),
        "masked_lm_positions": ints(positions + prediction_pad),
        "masked_lm_ids": ints(label_ids + prediction_pad),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(
            value=[1.0] * len(label_ids) + [0.0] * len(prediction_pad))),
        "next_sentence_labels": ints([int(is_random_next)]),
    }))


def _random_instance(rng, max_seq_length, max_predictions, vocab_size):
    length = rng.randint(5, max_seq_length)
    len_a = rng.randint(1, length - 4)
    input_ids = [rng.randrange(vocab_size) for _ in range(length)]
    segment_ids = [0] * (len_a + 2) + [1] * (length - len_a - 2)
    positions = sorted(rng.sample(range(1, length), rng.randint(1, min(max_predictions,
                                                                         length - 1))))
    label_ids = [rng.randrange(vocab_size) for _ in positions]
    return input_ids, segment_ids, positions, label_ids, rng.random() < 0.5


@pytest.mark.parametrize("max_seq_length,max_predictions,vocab_size",
                         [(128, 20, 30522), (512, 80, 250000), (8, 1, 100)])
def test_records_are_the_deterministic_protobuf_serialization(max_seq_length, max_predictions,
                                                              vocab_size):
    varints = example_encoder.VarintTable(vocab_size)
    encoder = example_encoder.ExampleEncoder(max_seq_length, max_predictions)
    rng = random.Random(max_seq_length)
    for _ in range(200):
        ids, segments, positions, labels, is_random_next = _random_instance(
            rng, max_seq_length, max_predictions, vocab_size)
        ours = encoder.encode([varints[i] for i in ids], segments, positions,
                              [varints[i] for i in labels], is_random_next)
        expected = _tf_example(ids, segments, positions, labels, is_random_next, max_seq_length,
                               max_predictions)
        assert ours == expected.SerializeToString(deterministic=True)
        assert tf.train.Example.FromString(ours) == expected


def test_records_parse_with_the_training_schema():
    varints = example_encoder.VarintTable(30522)
    encoder = example_encoder.ExampleEncoder(16, 4)
    ids = [101, 7592, 103, 102, 30521, 102]
    record = encoder.encode([varints[i] for i in ids], [0, 0, 0, 0, 1, 1], [2, 4],
                            [varints[2088], varints[999]], True)
    parsed = tf.io.parse_single_example(record, pretraining_input.feature_spec(16, 4))
    np.testing.assert_array_equal(parsed["input_ids"], ids + [0] * 10)
    np.testing.assert_array_equal(parsed["input_mask"], [1] * 6 + [0] * 10)
    np.testing.assert_array_equal(parsed["segment_ids"], [0] * 4 + [1] * 2 + [0] * 10)
    np.testing.assert_array_equal(parsed["masked_lm_positions"], [2, 4, 0, 0])
    np.testing.assert_array_equal(parsed["masked_lm_ids"], [2088, 999, 0, 0])
    np.testing.assert_array_equal(parsed["masked_lm_weights"], [1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(parsed["next_sentence_labels"], [1])


def test_varint():
    assert example_encoder.varint(0) == b"\x00"
    assert example_encoder.varint(127) == b"\x7f"
    assert example_encoder.varint(300) == b"\xac\x02"
    assert example_encoder.varint(2**21) == b"\x80\x80\x80\x01"


def test_an_instance_too_long_is_an_error():
    encoder = example_encoder.ExampleEncoder(4, 1)
    with pytest.raises(ValueError, match="does not fit"):
        encoder.encode([b"\x01"] * 5, [0] * 5, [1], [b"\x01"], False)


def test_the_compiled_encoding_is_built_and_in_use():
    assert example_encoder.COMPILED, "pretraining_data/_example_encoding is not built: make setup"


@pytest.mark.parametrize("max_seq_length,max_predictions,vocab_size",
                         [(128, 20, 30522), (512, 80, 250000), (8, 1, 100), (5, 5, 3)])
def test_encode_framed_is_encode_then_frame(max_seq_length, max_predictions, vocab_size):
    from pretraining_data import instances, tfrecord_framing
    varints = example_encoder.VarintTable(vocab_size)
    encoder = example_encoder.ExampleEncoder(max_seq_length, max_predictions)
    rng = random.Random(vocab_size)
    for _ in range(300):
        ids, segments, positions, labels, is_random_next = _random_instance(
            rng, max_seq_length, max_predictions, vocab_size)
        instance = instances.TrainingInstance([varints[i] for i in ids], segments, is_random_next,
                                              positions, [varints[i] for i in labels])
        framed = encoder.encode_framed(instance)
        assert framed == tfrecord_framing.frame(encoder.encode_instance(instance))
        assert tfrecord_framing.unframe(framed) == encoder.encode_instance(instance)


@pytest.mark.skipif(not example_encoder.COMPILED, reason="see test_the_compiled_encoding_is_built")
def test_compiled_encoding_errors_and_checksums():
    from pretraining_data import _example_encoding
    import google_crc32c
    rng = random.Random(0)
    for size in list(range(0, 40)) + [1000, 4099]:
        data = bytes(rng.randrange(256) for _ in range(size))
        assert _example_encoding.crc32c(data) == google_crc32c.value(data)
    encoder = example_encoder.ExampleEncoder(4, 1)
    encode = lambda *args: _example_encoding.encode_framed(encoder, *args)
    with pytest.raises(ValueError, match="does not fit"):
        encode([b"\x01"] * 5, [0] * 5, [1], [b"\x01"], False)
    with pytest.raises(ValueError, match="must match"):
        encode([b"\x01"] * 3, [0] * 2, [1], [b"\x01"], False)
    with pytest.raises(ValueError, match=r"masked_lm_position 4 outside \[0, 4\)"):
        encode([b"\x01"] * 3, [0] * 3, [4], [b"\x01"], False)
    with pytest.raises(ValueError, match="segment ids are 0 or 1, got 2"):
        encode([b"\x01"] * 3, [0, 2, 1], [1], [b"\x01"], False)
    with pytest.raises(TypeError):
        encode([b"\x01", "x", b"\x01"], [0] * 3, [1], [b"\x01"], False)


def test_decode_reads_what_protobuf_writes_packed_or_not():
    example = tf.train.Example(features=tf.train.Features(feature={
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[0, 1, 127, 128, 30521, 2**40])),
        "weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 0.0, 0.25])),
        "empty": tf.train.Feature(int64_list=tf.train.Int64List(value=[])),
    }))
    expected = {"ids": [0, 1, 127, 128, 30521, 2**40], "weights": [1.0, 0.0, 0.25], "empty": []}
    assert example_encoder.decode(example.SerializeToString()) == expected
    # Unpacked repeated fields, as other writers may emit them: Int64List.value
    # as varint fields (key 0x08), FloatList.value as 32-bit ones (key 0x0d).
    unpacked_ids = b"".join(b"\x08" + example_encoder.varint(v) for v in (3, 300))
    unpacked_floats = b"\x0d" + struct.pack("<f", 0.5)
    record = b"".join(example_encoder._map_entry(name, example_encoder._length_delimited(kind, payload))
                      for name, kind, payload in (("a", 3, unpacked_ids), ("b", 2, unpacked_floats)))
    assert example_encoder.decode(example_encoder._length_delimited(1, record)) == {
        "a": [3, 300], "b": [0.5]}
