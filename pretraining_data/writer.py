"""Writes records round-robin to the output files, as the original does.

Record k (counting over the whole run) goes to output file k % len(files).
The first 20 instances are logged in the original's format, and the run ends
with the original's "Wrote N total instances". If more than a tenth of the word
pieces of those instances are [UNK], a warning says so: the vocabulary does not
cover the text (a cased text with --do_lower_case=False and an uncased vocab,
say), which the original writes without a word. Records arrive a shard at a
time, already framed as TFRecords (shard_worker.ShardRecords), and are
written through `file_system`, so gs://... paths work too.
Each file is written as `<path>.incomplete` and renamed to `<path>` at the
end (outputs.writing): a failed or killed run leaves no partial output.
"""

import contextlib

from absl import logging

import file_system
import outputs
from pretraining_data import example_encoder


# The original logs this many instances.
_NUM_LOGGED = 20
# The order in which the original logs (and builds) the features.
_FEATURE_ORDER = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                  "masked_lm_ids", "masked_lm_weights", "next_sentence_labels")
_SPECIAL = frozenset(("[CLS]", "[SEP]", "[MASK]"))
_MOST_UNKNOWN = 0.1  # the share of [UNK] word pieces in the logged instances beyond which a warning is logged


def parse_output_files(output_file):
    """--output_file, comma-separated, as a list; ValueError if it names none."""
    files = [path.strip() for path in output_file.split(",") if path.strip()]
    if not files:
        raise ValueError("--output_file is empty: give one or more files, comma-separated.")
    return files


def log_instance(record, inv_vocab):
    """Logs one serialized instance as the original does (tokens, then features); returns its tokens."""
    features = example_encoder.decode(record)
    num_tokens = sum(features["input_mask"])
    tokens = [inv_vocab[i] for i in features["input_ids"][:num_tokens]]
    logging.info("*** Example ***")
    logging.info("tokens: %s", " ".join(tokens))
    for name in _FEATURE_ORDER:
        logging.info("%s: %s", name, " ".join(str(value) for value in features[name]))
    return tokens


def warn_if_mostly_unknown(tokens):
    """Logs a warning when more than _MOST_UNKNOWN of `tokens`' word pieces (the special tokens left out) are [UNK]."""
    pieces = [token for token in tokens if token not in _SPECIAL]
    unknown = sum(token == "[UNK]" for token in pieces)
    if pieces and unknown > _MOST_UNKNOWN * len(pieces):
        logging.warning("%d of the %d word pieces of the first instances (%.0f%%) are [UNK]: the vocabulary does not "
                        "cover this text. Check --vocab_file and --do_lower_case (an uncased vocab needs "
                        "--do_lower_case=True).", unknown, len(pieces), 100.0 * unknown / len(pieces))


class RoundRobinWriter:
    """The output files, fed a shard of framed records at a time; a context manager.

      with RoundRobinWriter(paths, inv_vocab) as writer:
          writer.write_shard(records)

    The files appear at their paths when the block ends normally; if it
    raises, they are removed and the paths are left as they were.

    Attributes:
      output_files: list[str].
      total_written: int.
    """

    def __init__(self, output_files, inv_vocab):
        """Creates every output file (as `<path>.incomplete`) now, so a bad path fails first.

        Args:
          output_files: list[str].
          inv_vocab: dict id -> token, to log the first instances.

        Raises:
          ValueError: an output file cannot be created.
        """
        self.output_files = list(output_files)
        self.total_written = 0
        self._inv_vocab = inv_vocab
        self._logged_tokens = []
        self._files = []
        with contextlib.ExitStack() as stack:
            # Unwound last in, first out: every file is closed before any is
            # renamed (or, on an error, removed).
            temporaries = [stack.enter_context(outputs.writing(path))
                           for path in self.output_files]
            for path, temporary in zip(self.output_files, temporaries):
                try:
                    output = file_system.open_file(temporary, "wb")
                    stack.callback(output.close)
                    output.write(b"")  # A remote file is created on its first write.
                except file_system.errors() as error:
                    raise ValueError("Cannot create output file %s: %s"
                                     % (path, file_system.reason(error))) from None
                self._files.append(output)
            self._outputs = stack.pop_all()

    def write_shard(self, records):
        """Writes a shard's records, continuing the round-robin turn.

        Args:
          records: shard_worker.ShardRecords.
        """
        to_log = min(records.num_records, max(0, _NUM_LOGGED - self.total_written))
        for i in range(to_log):
            self._logged_tokens += log_instance(records.record(i), self._inv_vocab)
        if to_log and self.total_written + to_log == _NUM_LOGGED:
            warn_if_mostly_unknown(self._logged_tokens)
        num_files = len(self._files)
        if num_files == 1:
            self._files[0].write(records.framed)
        else:
            framed, offsets = memoryview(records.framed), records.offsets
            for file_index, output in enumerate(self._files):
                # The shard's first record for this file, then every num_files-th.
                first = (file_index - self.total_written) % num_files
                output.write(b"".join(framed[offsets[i]:offsets[i + 1]]
                                      for i in range(first, records.num_records, num_files)))
        self.total_written += records.num_records

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        """Closes the files; renames them to their paths, or on an exception removes them."""
        self._files = []
        self._outputs.__exit__(exc_type, exc, traceback)
        if exc_type is None:
            if self.total_written < _NUM_LOGGED:  # fewer instances than are logged: not checked yet
                warn_if_mostly_unknown(self._logged_tokens)
            for path in self.output_files:
                logging.info("Wrote %s", path)
            logging.info("Wrote %d total instances", self.total_written)
        return False
