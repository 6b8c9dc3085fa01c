"""TFRecord frames made without TensorFlow are TensorFlow's, byte for byte."""

import pytest
import tensorflow as tf

from pretraining_data import tfrecord_framing

RECORDS = [b"", b"a", b"hello world" * 100, bytes(range(256)) * 40]


def test_frames_equal_tf_record_writer_output(tmp_path):
    path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in RECORDS:
            writer.write(record)
    with open(path, "rb") as f:
        assert f.read() == b"".join(map(tfrecord_framing.frame, RECORDS))


def test_tf_reads_the_frames_and_checks_their_checksums(tmp_path):
    path = tmp_path / "ours.tfrecord"
    path.write_bytes(b"".join(map(tfrecord_framing.frame, RECORDS)))
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(path))] == RECORDS


def test_masked_crc32c_known_value():
    # CRC-32C("123456789") = 0xE3069283 (the standard check value), then masked.
    crc = 0xE3069283
    assert tfrecord_framing.masked_crc32c(b"123456789") == (
        ((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_unframe_round_trips_and_rejects_corrupt_frames():
    for record in RECORDS:
        framed = tfrecord_framing.frame(record)
        assert len(framed) == len(record) + tfrecord_framing.HEADER_BYTES + 4
        assert tfrecord_framing.unframe(framed) == record
        assert tfrecord_framing.unframe(memoryview(framed)) == record
    framed = bytearray(tfrecord_framing.frame(b"some record"))
    framed[14] ^= 1
    with pytest.raises(ValueError, match="Corrupt TFRecord frame"):
        tfrecord_framing.unframe(bytes(framed))
    with pytest.raises(ValueError, match="at least 16 bytes, got 3"):
        tfrecord_framing.unframe(b"abc")
