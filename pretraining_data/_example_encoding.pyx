# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""`ExampleEncoder.encode` then `tfrecord_framing.frame`, compiled, in one buffer.

In Python a record costs ~6 us of a worker's ~20: five `bytes.join`s over
one- to three-byte varints and two checksum calls. This writes the same
bytes (the headers come from the ExampleEncoder's caches) into one bytes
object and computes CRC-32C (Castagnoli, slicing by 8) in C.
`example_encoder` checks it against the Python code at import and uses it
only if they agree (tested too).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy, memset

# _CRC_TABLE[k][b]: the CRC-32C register update for byte b followed by k zero bytes.
cdef uint32_t _CRC_TABLE[8][256]


cdef void _init_crc_table() noexcept:
    cdef uint32_t crc, b
    cdef int k
    for b in range(256):
        crc = b
        for k in range(8):
            crc = (crc >> 1) ^ (0x82F63B78U if crc & 1 else 0)
        _CRC_TABLE[0][b] = crc
    for b in range(256):
        crc = _CRC_TABLE[0][b]
        for k in range(1, 8):
            crc = _CRC_TABLE[0][crc & 0xFF] ^ (crc >> 8)
            _CRC_TABLE[k][b] = crc


_init_crc_table()


cdef uint32_t _crc32c(const unsigned char* data, Py_ssize_t size) noexcept:
    """CRC-32C of size bytes, eight at a time (byte order independent)."""
    cdef uint32_t crc = 0xFFFFFFFFU, low, high
    while size >= 8:
        low = (data[0] | (<uint32_t>data[1] << 8) | (<uint32_t>data[2] << 16)
               | (<uint32_t>data[3] << 24)) ^ crc
        high = (data[4] | (<uint32_t>data[5] << 8) | (<uint32_t>data[6] << 16)
                | (<uint32_t>data[7] << 24))
        crc = (_CRC_TABLE[7][low & 0xFF] ^ _CRC_TABLE[6][(low >> 8) & 0xFF]
               ^ _CRC_TABLE[5][(low >> 16) & 0xFF] ^ _CRC_TABLE[4][low >> 24]
               ^ _CRC_TABLE[3][high & 0xFF] ^ _CRC_TABLE[2][(high >> 8) & 0xFF]
               ^ _CRC_TABLE[1][(high >> 16) & 0xFF] ^ _CRC_TABLE[0][high >> 24])
        data += 8
        size -= 8
    while size > 0:
        crc = _CRC_TABLE[0][(crc ^ data[0]) & 0xFF] ^ (crc >> 8)
        data += 1
        size -= 1
    return crc ^ 0xFFFFFFFFU


cdef inline void _put_masked_crc(unsigned char* out, uint32_t crc) noexcept:
    """Stores ((crc >> 15) | (crc << 17)) + 0xa282ead8 little-endian, as TFRecord does."""
    cdef int k
    crc = ((crc >> 15) | (crc << 17)) + 0xA282EAD8U
    for k in range(4):
        out[k] = (crc >> (8 * k)) & 0xFF


def crc32c(data):
    """CRC-32C of a bytes object (for tests)."""
    cdef bytes value = data
    return _crc32c(<const unsigned char*>PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))


cdef inline unsigned char* _put(unsigned char* out, bytes value) noexcept:
    cdef Py_ssize_t size = PyBytes_GET_SIZE(value), i
    cdef const unsigned char* source = <const unsigned char*>PyBytes_AS_STRING(value)
    if size > 8:
        memcpy(out, source, size)
    else:  # Varints: a call to memcpy would cost more than the copy.
        for i in range(size):
            out[i] = source[i]
    return out + size


cdef bytes _header(cache, Py_ssize_t size):
    """cache[size] for an ExampleEncoder header cache (a dict subclass, whose
    `[]` would go through a slow generic slot); `__missing__` makes new ones."""
    key = size
    cdef PyObject* found = PyDict_GetItem(cache, key)
    if found == NULL:
        return cache[key]
    return <bytes>found


cdef Py_ssize_t _total_size(list values) except -1:
    cdef Py_ssize_t total = 0
    for value in values:
        total += PyBytes_GET_SIZE(<bytes?>value)
    return total


def encode_framed(encoder, list tokens, list segment_ids, list masked_lm_positions,
                  list masked_lm_labels, bint is_random_next):
    """`tfrecord_framing.frame(encoder.encode(...))`: the same arguments and bytes.

    Args:
      encoder: example_encoder.ExampleEncoder, for the lengths and headers.
      tokens, segment_ids, masked_lm_positions, masked_lm_labels,
        is_random_next: as ExampleEncoder.encode.

    Returns:
      bytes, the TFRecord frame of the serialized tf.train.Example.

    Raises:
      ValueError: the instance does not fit the padded lengths, or its
        lists disagree in length or hold values out of range.
    """
    cdef Py_ssize_t max_seq_length = encoder.max_seq_length
    cdef Py_ssize_t max_predictions = encoder.max_predictions_per_seq
    cdef Py_ssize_t num_tokens = len(tokens), num_predictions = len(masked_lm_labels)
    if num_tokens > max_seq_length or num_predictions > max_predictions:
        raise ValueError("An instance of %d tokens and %d predictions does not fit %d and %d."
                         % (num_tokens, num_predictions, max_seq_length, max_predictions))
    if len(segment_ids) != num_tokens or len(masked_lm_positions) != num_predictions:
        raise ValueError("segment_ids must match tokens and masked_lm_positions must match "
                         "masked_lm_labels in length.")
    cdef list position_varints = encoder._position_varints
    cdef list positions = []
    cdef Py_ssize_t position
    for value in masked_lm_positions:
        position = value
        if position < 0 or position >= max_seq_length:
            raise ValueError("masked_lm_position %d outside [0, %d)." % (position, max_seq_length))
        positions.append(position_varints[position])

    cdef Py_ssize_t seq_padding = max_seq_length - num_tokens
    cdef Py_ssize_t prediction_padding = max_predictions - num_predictions
    cdef Py_ssize_t ids_size = _total_size(tokens)
    cdef Py_ssize_t labels_size = _total_size(masked_lm_labels)
    cdef Py_ssize_t positions_size = _total_size(positions)
    # Sorted by name, as the deterministic protobuf serialization (and encode).
    cdef bytes input_ids_header = _header(encoder._input_ids, ids_size + seq_padding)
    cdef bytes input_mask_header = encoder._input_mask
    cdef bytes labels_header = _header(encoder._masked_lm_ids, labels_size + prediction_padding)
    cdef bytes positions_header = _header(encoder._masked_lm_positions,
                                          positions_size + prediction_padding)
    cdef bytes weights_header = encoder._weights
    cdef bytes next_sentence = encoder._labels[1 if is_random_next else 0]
    cdef bytes segment_ids_header = encoder._segment_ids
    cdef Py_ssize_t features_size = (
        len(input_ids_header) + ids_size + seq_padding
        + len(input_mask_header) + max_seq_length
        + len(labels_header) + labels_size + prediction_padding
        + len(positions_header) + positions_size + prediction_padding
        + len(weights_header) + 4 * max_predictions
        + len(next_sentence)
        + len(segment_ids_header) + max_seq_length)
    cdef bytes example_header = _header(encoder._example, features_size)
    cdef Py_ssize_t record_size = len(example_header) + features_size

    cdef bytes framed = PyBytes_FromStringAndSize(NULL, 12 + record_size + 4)
    cdef unsigned char* start = <unsigned char*>PyBytes_AS_STRING(framed)
    cdef unsigned char* out = start + 12
    cdef Py_ssize_t i
    cdef long segment
    out = _put(out, example_header)
    out = _put(out, input_ids_header)
    for value in tokens:
        out = _put(out, <bytes>value)
    memset(out, 0, seq_padding)
    out += seq_padding
    out = _put(out, input_mask_header)
    memset(out, 1, num_tokens)
    memset(out + num_tokens, 0, seq_padding)
    out += max_seq_length
    out = _put(out, labels_header)
    for value in masked_lm_labels:
        out = _put(out, <bytes>value)
    memset(out, 0, prediction_padding)
    out += prediction_padding
    out = _put(out, positions_header)
    for value in positions:
        out = _put(out, <bytes>value)
    memset(out, 0, prediction_padding)
    out += prediction_padding
    out = _put(out, weights_header)
    for i in range(num_predictions):  # 1.0f, little-endian.
        out[0] = 0x00
        out[1] = 0x00
        out[2] = 0x80
        out[3] = 0x3F
        out += 4
    memset(out, 0, 4 * prediction_padding)
    out += 4 * prediction_padding
    out = _put(out, next_sentence)
    out = _put(out, segment_ids_header)
    for value in segment_ids:
        segment = value
        if segment != 0 and segment != 1:
            raise ValueError("segment ids are 0 or 1, got %d." % segment)
        out[0] = <unsigned char>segment
        out += 1
    memset(out, 0, seq_padding)
    out += seq_padding
    if out != start + 12 + record_size:
        raise AssertionError("encode_framed wrote %d bytes for a record of %d."
                             % (out - start - 12, record_size))

    # The frame: length, its masked CRC, the record, its masked CRC.
    for i in range(8):
        start[i] = (<uint64_t>record_size >> (8 * i)) & 0xFF
    _put_masked_crc(start + 8, _crc32c(start, 8))
    _put_masked_crc(out, _crc32c(start + 12, record_size))
    return framed
