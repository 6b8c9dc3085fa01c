"""Writes records round-robin to the output files, as the original does.

Record k (counting over the whole run) goes to output file k % len(files).
The first 20 instances are logged in the original's format, and the run ends
with the original's "Wrote N total instances".
"""

from absl import logging
import tensorflow as tf

# The original logs this many instances.
_NUM_LOGGED = 20
# The order in which the original logs (and builds) the features.
_FEATURE_ORDER = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                  "masked_lm_ids", "masked_lm_weights", "next_sentence_labels")


def parse_output_files(output_file):
    """--output_file, comma-separated, as a list; ValueError if it names none."""
    files = [path.strip() for path in output_file.split(",") if path.strip()]
    if not files:
        raise ValueError("--output_file is empty: give one or more files, comma-separated.")
    return files


def log_instance(record, inv_vocab):
    """Logs one serialized instance as the original does (tokens, then features)."""
    features = tf.train.Example.FromString(record).features.feature
    num_tokens = sum(features["input_mask"].int64_list.value)
    tokens = [inv_vocab[i] for i in features["input_ids"].int64_list.value[:num_tokens]]
    logging.info("*** Example ***")
    logging.info("tokens: %s", " ".join(tokens))
    for name in _FEATURE_ORDER:
        feature = features[name]
        values = feature.int64_list.value or feature.float_list.value
        logging.info("%s: %s", name, " ".join(str(value) for value in values))


class RoundRobinWriter:
    """TFRecord writers for the output files, fed one record at a time.

    Attributes:
      output_files: list[str].
      total_written: int.
    """

    def __init__(self, output_files, inv_vocab):
        """Opens (creates) every output file now, so a bad path fails first.

        Args:
          output_files: list[str].
          inv_vocab: dict id -> token, to log the first instances.

        Raises:
          ValueError: an output file cannot be created.
        """
        self.output_files = list(output_files)
        self.total_written = 0
        self._inv_vocab = inv_vocab
        self._writers = []
        for path in self.output_files:
            try:
                self._writers.append(tf.io.TFRecordWriter(path))
            except (tf.errors.OpError, OSError) as error:
                self.close(quiet=True)
                raise ValueError("Cannot create output file %s: %s"
                                 % (path, getattr(error, "message", error))) from None

    def write(self, record):
        """Writes one serialized tf.train.Example to the next file in turn."""
        if self.total_written < _NUM_LOGGED:
            log_instance(record, self._inv_vocab)
        self._writers[self.total_written % len(self._writers)].write(record)
        self.total_written += 1

    def close(self, quiet=False):
        """Closes every file; logs the total unless quiet."""
        for writer in self._writers:
            writer.close()
        self._writers = []
        if not quiet:
            logging.info("Wrote %d total instances", self.total_written)
