"""Serializes training instances as tf.train.Example records, without TensorFlow.

The schema is the original's (and `modeling.pretraining_input.feature_spec`):
  input_ids, input_mask, segment_ids   int64 [max_seq_length], zero padded
  masked_lm_positions, masked_lm_ids   int64 [max_predictions_per_seq], zero padded
  masked_lm_weights                    float [max_predictions_per_seq], 1.0 real, 0.0 pad
  next_sentence_labels                 int64 [1], 1 = B is a random next segment

The protobuf wire format is written by hand: this runs in the worker
processes, which stay free of TensorFlow (~5 s and ~0.5 GB to import each),
and it is several times faster than building `tf.train.Example` messages.
Features are written in sorted name order, as
`tf.train.Example.SerializeToString(deterministic=True)` writes them, so the
records are byte for byte those of the protobuf library (tested).

Token ids travel as their varints (`VarintTable`): instance creation only
compares tokens, so it works on these bytes as well as on ids, and the
packed input_ids of a record is then a single `b"".join`.

`encode_framed` returns the record's TFRecord frame; when
`_example_encoding` (Cython, built by `make setup`) is built and agrees with
this module's code (checked at import), it writes the frame in C: ~3.3 us
instead of ~5.9 us per 128-token record here.
"""

import struct

from pretraining_data import tfrecord_framing

try:
    from pretraining_data import _example_encoding
except ImportError:  # Not built: encode, then tfrecord_framing.frame.
    _example_encoding = None

# Example.features = 1; Features.feature = 1 (a map: entry key = 1, value = 2);
# Feature.float_list = 2, Feature.int64_list = 3; {Int64,Float}List.value = 1.
_LENGTH_DELIMITED = 2
_FLOAT_ONE = struct.pack("<f", 1.0)
_FLOAT_ZERO = struct.pack("<f", 0.0)


def varint(value):
    """The protobuf base-128 varint (bytes) of a non-negative int."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class VarintTable(list):
    """list: value -> its varint, for 0 <= value < size; one bytes object each,
    shared by every token with that id."""

    def __init__(self, size):
        super().__init__(varint(value) for value in range(size))


def _length_delimited(field_number, payload):
    return bytes([field_number << 3 | _LENGTH_DELIMITED]) + varint(len(payload)) + payload


def _map_entry(name, feature):
    """One `Features.feature` map entry: key `name`, value `feature` (bytes)."""
    entry = _length_delimited(1, name.encode("ascii")) + _length_delimited(2, feature)
    return _length_delimited(1, entry)


def _int64_feature(name, payload):
    """The map entry of an Int64List feature; payload: its packed varints."""
    return _map_entry(name, _length_delimited(3, _length_delimited(1, payload)))


def _float_feature(name, payload):
    """The map entry of a FloatList feature; payload: its packed floats."""
    return _map_entry(name, _length_delimited(2, _length_delimited(1, payload)))


def _header(feature_entry, name, payload_length):
    """The bytes of a feature's map entry before its payload.

    They depend on the name and the payload's length only, so they are made
    once per length from a dummy payload and reused.
    """
    return feature_entry(name, b"\x00" * payload_length)[:-payload_length]


class _HeaderCache(dict):
    """dict payload length -> header bytes, made by `make(length)` on first use."""

    def __init__(self, make):
        super().__init__()
        self._make = make

    def __missing__(self, length):
        header = self[length] = self._make(length)
        return header


class ExampleEncoder:
    """Encodes one instance, its tokens as varints, into a serialized tf.train.Example.

    Attributes:
      max_seq_length, max_predictions_per_seq: int, the padded lengths.
    """

    def __init__(self, max_seq_length, max_predictions_per_seq):
        self.max_seq_length = max_seq_length
        self.max_predictions_per_seq = max_predictions_per_seq
        # An exact list (not a VarintTable), which compiled code indexes directly.
        self._position_varints = list(VarintTable(max_seq_length))
        # Headers of the fixed-size features; those of varint lists, and the
        # Example's own, depend on the lengths and are cached by length.
        self._input_mask = _header(_int64_feature, "input_mask", max_seq_length)
        self._segment_ids = _header(_int64_feature, "segment_ids", max_seq_length)
        self._weights = _header(_float_feature, "masked_lm_weights", 4 * max_predictions_per_seq)
        self._labels = (_int64_feature("next_sentence_labels", varint(0)),
                        _int64_feature("next_sentence_labels", varint(1)))
        self._input_ids = _HeaderCache(lambda n: _header(_int64_feature, "input_ids", n))
        self._masked_lm_ids = _HeaderCache(lambda n: _header(_int64_feature, "masked_lm_ids", n))
        self._masked_lm_positions = _HeaderCache(
            lambda n: _header(_int64_feature, "masked_lm_positions", n))
        self._example = _HeaderCache(lambda n: _length_delimited(1, b"\x00" * n)[:-n])

    def encode(self, tokens, segment_ids, masked_lm_positions, masked_lm_labels, is_random_next):
        """The serialized tf.train.Example of one instance.

        Args:
          tokens: list[bytes], the varints of [CLS] A [SEP] B [SEP] after
            masking, unpadded.
          segment_ids: list[int] of 0 and 1, len(tokens).
          masked_lm_positions: list[int], increasing, unpadded.
          masked_lm_labels: list[bytes], the varints of the original tokens there.
          is_random_next: bool.

        Returns:
          bytes.

        Raises:
          ValueError: the instance does not fit the padded lengths.
        """
        num_tokens = len(tokens)
        num_predictions = len(masked_lm_labels)
        if num_tokens > self.max_seq_length or num_predictions > self.max_predictions_per_seq:
            raise ValueError("An instance of %d tokens and %d predictions does not fit %d and %d."
                             % (num_tokens, num_predictions, self.max_seq_length,
                                self.max_predictions_per_seq))
        # The varint of 0 is b"\x00" and of 1 is b"\x01": padding, mask and
        # segment ids are plain byte strings.
        seq_padding = b"\x00" * (self.max_seq_length - num_tokens)
        prediction_padding = b"\x00" * (self.max_predictions_per_seq - num_predictions)
        input_ids = b"".join(tokens)
        label_ids = b"".join(masked_lm_labels)
        positions = b"".join(map(self._position_varints.__getitem__, masked_lm_positions))
        features = b"".join((
            # Sorted by name, as the deterministic protobuf serialization.
            self._input_ids[len(input_ids) + len(seq_padding)], input_ids, seq_padding,
            self._input_mask, b"\x01" * num_tokens, seq_padding,
            self._masked_lm_ids[len(label_ids) + len(prediction_padding)],
            label_ids, prediction_padding,
            self._masked_lm_positions[len(positions) + len(prediction_padding)],
            positions, prediction_padding,
            self._weights, _FLOAT_ONE * num_predictions, _FLOAT_ZERO * len(prediction_padding),
            self._labels[1 if is_random_next else 0],
            self._segment_ids, bytes(segment_ids), seq_padding,
        ))
        return self._example[len(features)] + features

    def encode_instance(self, instance):
        """encode() for a TrainingInstance whose tokens are varints."""
        return self.encode(instance.tokens, instance.segment_ids, instance.masked_lm_positions,
                           instance.masked_lm_labels, instance.is_random_next)

    def encode_framed(self, instance):
        """The TFRecord frame (tfrecord_framing) of encode_instance(instance)."""
        if COMPILED:
            return _example_encoding.encode_framed(
                self, instance.tokens, instance.segment_ids, instance.masked_lm_positions,
                instance.masked_lm_labels, instance.is_random_next)
        return tfrecord_framing.frame(self.encode_instance(instance))


def _read_varint(data, position):
    """(value, next position) of the varint at data[position]."""
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def _fields(data):
    """Yields (field number, wire type, value) of a message's fields.

    A varint field's value is an int, a 32-bit one its 4 bytes, a
    length-delimited one its bytes (memoryview).
    """
    data, position = memoryview(data), 0
    while position < len(data):
        key, position = _read_varint(data, position)
        wire_type = key & 7
        if wire_type == 0:
            value, position = _read_varint(data, position)
        elif wire_type == 5:
            value, position = data[position:position + 4], position + 4
        elif wire_type == _LENGTH_DELIMITED:
            length, position = _read_varint(data, position)
            value, position = data[position:position + length], position + length
        else:
            raise ValueError("Unexpected protobuf wire type %d." % wire_type)
        yield key >> 3, wire_type, value


def decode(record):
    """The features of a serialized tf.train.Example of int64 and float lists.

    The inverse of `encode`, for logging records without TensorFlow (packed
    and unpacked lists both read).

    Returns:
      dict feature name -> list of int (int64_list) or of float (float_list).
    """
    features = {}
    for _, _, feature_map in _fields(record):  # Example.features
        for _, _, entry in _fields(feature_map):  # Features.feature entries
            name, values = None, []
            for number, _, value in _fields(entry):
                if number == 1:
                    name = bytes(value).decode("utf-8")
                    continue
                for kind, _, value_list in _fields(value):  # Feature: 2 float, 3 int64
                    for _, wire_type, item in _fields(value_list):
                        if kind == 3:
                            values.extend(_packed_varints(item) if wire_type else [item])
                        else:
                            values.extend(struct.unpack("<%df" % (len(item) // 4), item))
            features[name] = values
    return features


def _packed_varints(data):
    values, position = [], 0
    while position < len(data):
        value, position = _read_varint(data, position)
        values.append(value)
    return values


def _compiled_encoding_agrees():
    """True if _example_encoding writes what encode + frame write, here."""
    encoder, varints = ExampleEncoder(16, 4), VarintTable(300)
    cases = [([101, 5, 103, 102, 299, 102], [0, 0, 0, 0, 1, 1], [2, 4], [7, 290], True),
             ([101, 102, 102], [0, 0, 1], [1], [200], False),
             ([101] + [3] * 15, [0] * 16, [1, 2, 3, 15], [1, 2, 3, 4], False)]
    for ids, segments, positions, labels, is_random_next in cases:
        args = ([varints[i] for i in ids], segments, positions, [varints[i] for i in labels],
                is_random_next)
        if (_example_encoding.encode_framed(encoder, *args)
                != tfrecord_framing.frame(encoder.encode(*args))):
            return False
    return True


COMPILED = _example_encoding is not None and _compiled_encoding_agrees()
