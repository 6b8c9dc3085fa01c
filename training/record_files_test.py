"""Finding the damaged record of TFRecord files."""

import tensorflow as tf

from training import record_files


def _write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def test_finds_the_file_and_the_record_that_cannot_be_read(tmp_path):
    good, damaged = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    _write(good, [b"x" * 10] * 3)
    _write(damaged, [b"y" * 20] * 4)
    damaged.write_bytes(damaged.read_bytes()[:-5])  # The 4th record is cut short.
    assert record_files.find_damaged_record([str(good), str(damaged)]) == (
        str(damaged), 4, "truncated record at %d' failed with Read less bytes than requested" % (3 * 36))


def test_a_corrupted_byte_is_found_by_its_checksum(tmp_path):
    path = tmp_path / "c.tfrecord"
    _write(path, [b"z" * 20] * 3)
    data = bytearray(path.read_bytes())
    data[36 + 12 + 5] ^= 0xFF  # A data byte of the 2nd record.
    path.write_bytes(bytes(data))
    found_path, number, message = record_files.find_damaged_record([str(path)])
    assert (found_path, number) == (str(path), 2) and "corrupted record" in message


def test_intact_files_give_none_and_a_generic_description(tmp_path):
    path = tmp_path / "d.tfrecord"
    _write(path, [b"ok"])
    assert record_files.find_damaged_record([str(path)]) is None
    error = tf.errors.DataLossError(None, None, "{{function_node x}} bad bytes [Op:IteratorGetNext] name:")
    assert record_files.describe_damage([str(path)], error) == "Reading the input failed (bad bytes)"
