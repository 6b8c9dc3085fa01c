"""Examples, TSV reading and the processor base class of run_classifier.

A processor turns one task's TSV files into `InputExample`s. Reading is the
original's `_read_tsv` (`csv.reader` with a tab delimiter and no quote
character, through `tf.io.gfile`), plus checks the original lacks: a row with
too few columns or an unknown label is an error naming the file and the
1-based line, never a silently dropped or mislabelled example.
"""

import collections
import csv
import dataclasses
import math
import os

import tensorflow as tf


@dataclasses.dataclass
class InputExample:
    """One training, dev or test example.

    Attributes:
      guid: str, unique id such as "train-12" (used only in logs).
      text_a: str, the first (or only) text.
      text_b: str or None, the second text of a pair task.
      label: str (classification), float (regression) or None (test rows,
        which carry no label).
    """

    guid: str
    text_a: str
    text_b: str = None
    label: object = None


class Columns(collections.namedtuple("Columns", ["text_a", "text_b", "label", "guid"])):
    """Where a TSV's fields are, as 0-based column indices.

    Fields:
      text_a: int.
      text_b: int or None (single-text tasks).
      label: int or None (unlabelled test files); -1 means the last column,
        which must come after every other column used (MNLI, STS-B).
      guid: int or None; None numbers the examples by their 0-based line
        index in the file (header included), as the original does.
    """

    def __new__(cls, text_a, text_b=None, label=None, guid=None):
        return super().__new__(cls, text_a, text_b, label, guid)

    @property
    def num_columns(self):
        """int, the fewest columns a row needs."""
        used = [c for c in (self.text_a, self.text_b, self.label, self.guid)
                if c is not None and c >= 0]
        needed = max(used) + 1
        if self.label is not None and self.label < 0:
            needed += 1  # The label comes after the last text column.
        return needed


def _utf8_lines(input_file):
    """The file's lines as str, decoded one at a time so that a bad byte has a line number."""
    with tf.io.gfile.GFile(input_file, "rb") as f:
        for line_number, line in enumerate(f, 1):
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as error:
                column = len(line[:error.start].decode("utf-8")) + 1
                raise ValueError(
                    "%s line %d: not valid UTF-8 (byte 0x%02x at column %d); the task's TSV "
                    "files in --data_dir must be UTF-8."
                    % (input_file, line_number, line[error.start], column)) from None


def read_tsv(input_file, skip_header=False, num_columns=0):
    """Reads a tab-separated file as the original's `_read_tsv` does.

    Without a quote character a record is exactly one line, so a row's
    position is its line number.

    Args:
      input_file: str, path (any tf.io.gfile filesystem).
      skip_header: bool, drop the first line.
      num_columns: int, the fewest columns every (other) row must have.

    Returns:
      list of (line_number, fields): int (1-based), list of str.

    Raises:
      FileNotFoundError: `input_file` does not exist.
      ValueError: a line is not UTF-8 (naming its character column), a row
        has fewer than `num_columns` columns (a blank line included), or
        the csv module rejects a line (e.g. a lone carriage return); the
        message names the file and line.
    """
    if not tf.io.gfile.exists(input_file):
        raise FileNotFoundError("%s does not exist." % input_file)
    rows = []
    reader = csv.reader(_utf8_lines(input_file), delimiter="\t", quotechar=None)
    try:
        for fields in reader:
            if skip_header and reader.line_num == 1:
                continue
            if len(fields) < num_columns:
                raise ValueError(
                    "%s line %d: expected at least %d tab-separated columns, found %d: %r"
                    % (input_file, reader.line_num, num_columns, len(fields),
                       "\t".join(fields)[:200]))
            rows.append((reader.line_num, fields))
    except csv.Error as error:
        raise ValueError("%s line %d: %s" % (input_file, reader.line_num, error)) from None
    return rows


class DataProcessor:
    """Base class: one task's examples and labels.

    Attributes:
      submission_name: str or None, the task's GLUE leaderboard name
        ("CoLA", "MNLI-m", ...); None for non-GLUE tasks.
      is_regression: bool, the label is a float and there are no classes.
      label_range: (low, high), the scores a regression label may take
        (both included); None allows any finite number.
      takes_text_pair: bool, examples have a text_b (what an exported
        model's signature asks for).
    """

    submission_name = None
    is_regression = False
    label_range = None
    takes_text_pair = True
    # Each example set's file under data_dir. The getters read these paths and
    # `input_files` lists them, so the check before a run and the reading agree.
    set_files = {}
    # The sets each mode of run_classifier reads (--do_train, --do_eval, --do_predict).
    mode_sets = {"train": ("train",), "eval": ("dev",), "predict": ("test",)}

    def path(self, data_dir, set_name):
        """str, the file of `set_name` ("train", "dev", "test", ...) in data_dir."""
        return os.path.join(data_dir, self.set_files[set_name])

    def input_files(self, data_dir, mode):
        """The paths the run reads for `mode`: "train", "eval" or "predict".

        A processor written for the original's API (no `set_files`) lists none.
        """
        return [self.path(data_dir, name) for name in self.mode_sets[mode] if name in self.set_files]

    def get_train_examples(self, data_dir):
        """list of `InputExample` for training."""
        raise NotImplementedError()

    def get_dev_examples(self, data_dir):
        """list of labelled `InputExample` for evaluation."""
        raise NotImplementedError()

    def get_test_examples(self, data_dir):
        """list of `InputExample` for prediction (label None when unlabelled)."""
        raise NotImplementedError()

    def get_labels(self):
        """list of str, the classes in the model's output order; [] for regression."""
        raise NotImplementedError()

    def get_submission_sets(self, data_dir):
        """The test sets to write GLUE leaderboard files for.

        Returns:
          list of (submission_name, list of `InputExample`); MNLI adds the
          mismatched and diagnostic sets.
        """
        if self.submission_name is None:
            return []
        return [(self.submission_name, self.get_test_examples(data_dir))]

    def submission_file(self, data_dir, submission_name):
        """str, the file `get_submission_sets` reads the set `submission_name` from: the test set's."""
        return self.path(data_dir, "test")

    @classmethod
    def _read_tsv(cls, input_file, quotechar=None):
        """The original's API: every row of a TSV as a list of str."""
        del quotechar  # The original always passes None; quoting would break GLUE text.
        return [fields for _, fields in read_tsv(input_file)]

    def _parse_label(self, label, input_file, line_number):
        """The checked label of one row: str in get_labels(), or, when regression, a finite float
        in `label_range` (not "nan" or "inf", whose loss would be nan)."""
        if self.is_regression:
            low, high = self.label_range or (-math.inf, math.inf)
            try:
                score = float(label)
            except ValueError:
                score = math.nan
            if not (math.isfinite(score) and low <= score <= high):
                expected = "a number from %g to %g" % (low, high) if self.label_range else "a finite number"
                raise ValueError("%s line %d: the label %r is not %s"
                                 % (input_file, line_number, label, expected))
            return score
        labels = self.get_labels()
        if label not in labels:
            raise ValueError("%s line %d: unknown label %r; the labels of this task are %s"
                             % (input_file, line_number, label, labels))
        return label

    def _read_examples(self, input_file, set_type, columns, skip_header=True):
        """`InputExample`s from a TSV laid out as `columns`.

        Args:
          input_file: str.
          set_type: str, the guid prefix ("train", "dev", "test", ...).
          columns: `Columns`.
          skip_header: bool, the file starts with a header row.

        Returns:
          list of `InputExample`, in file order.
        """
        examples = []
        for line_number, fields in read_tsv(input_file, skip_header, columns.num_columns):
            guid_part = line_number - 1 if columns.guid is None else fields[columns.guid]
            label = None
            if columns.label is not None:
                label = self._parse_label(fields[columns.label], input_file, line_number)
            examples.append(InputExample(
                guid="%s-%s" % (set_type, guid_part),
                text_a=fields[columns.text_a],
                text_b=None if columns.text_b is None else fields[columns.text_b],
                label=label))
        return examples


class GlueTsvProcessor(DataProcessor):
    """A GLUE task stored as train.tsv, dev.tsv and test.tsv.

    Subclasses set `labelled_columns` (train and dev), `test_columns` and,
    when train/dev have no header row (CoLA), `labelled_header = False`.
    """

    labelled_columns = None
    test_columns = None
    labelled_header = True
    test_header = True
    set_files = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}

    def get_train_examples(self, data_dir):
        return self._read_examples(self.path(data_dir, "train"), "train",
                                   self.labelled_columns, self.labelled_header)

    def get_dev_examples(self, data_dir):
        return self._read_examples(self.path(data_dir, "dev"), "dev",
                                   self.labelled_columns, self.labelled_header)

    def get_test_examples(self, data_dir):
        return self._read_examples(self.path(data_dir, "test"), "test",
                                   self.test_columns, self.test_header)
