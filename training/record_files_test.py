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


def _example(length):
    return tf.train.Example(features=tf.train.Features(feature={"input_ids": tf.train.Feature(
        int64_list=tf.train.Int64List(value=[1] * length))})).SerializeToString()


def test_a_record_of_another_length_is_found_from_the_parse_ops_error(tmp_path):
    good, mixed = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    _write(good, [_example(4)] * 2)
    _write(mixed, [_example(4)] * 3 + [_example(3)])
    spec = {"input_ids": tf.io.FixedLenFeature([4], tf.int64)}
    dataset = tf.data.TFRecordDataset([str(good), str(mixed)]).batch(2).map(lambda r: tf.io.parse_example(r, spec))
    try:
        list(dataset)
    except tf.errors.InvalidArgumentError as caught:
        error = caught
    assert record_files.is_misfit(error)
    assert record_files.find_misfit_record([str(good), str(mixed)], "input_ids", 4) == (str(mixed), 4, 3, 4)
    assert record_files.find_misfit_record([str(mixed)], "input_ids") == (str(mixed), 4, 3, 4)
    assert record_files.describe_misfit([str(good), str(mixed)], error) == (
        "Input file %s: record 4 (counting from 1) has input_ids of length 3 where 4 is expected (the length the "
        "flags give, checked on the file's first record): the file mixes records made with different settings; "
        "recreate it" % mixed)
    # Files that all fit (another set than the one read): TensorFlow's figures, without a file.
    assert record_files.describe_misfit([str(good)], error) == (
        "Reading the input failed: a record's input_ids cannot be parsed (3 values where 4 are expected)")
    # A record that is not a tf.Example at all.
    _write(mixed, [_example(4), b"not a protocol buffer \xff"])
    assert record_files.describe_misfit([str(mixed)], error) == (
        "Input file %s: record 2 (counting from 1) is not a tf.train.Example; recreate the file" % mixed)
    assert not record_files.is_misfit(tf.errors.InvalidArgumentError(None, None, "indices[0] = 9 is not in [0, 5)"))
