"""Tests for the TSV reader and the processor base class."""

import re

import pytest

from classifier_data import data_processor
from classifier_data.data_processor import Columns


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_read_tsv_keeps_quotes_and_numbers_lines(tmp_path):
    # No quote character: GLUE text with quotes is read verbatim.
    path = _write(tmp_path / "x.tsv", 'h1\th2\n"a\tb"\nc\t\n')
    assert data_processor.read_tsv(path, skip_header=True) == [(2, ['"a', 'b"']), (3, ["c", ""])]
    assert data_processor.read_tsv(path)[0] == (1, ["h1", "h2"])


def test_read_tsv_too_few_columns_names_file_line_and_count(tmp_path):
    path = _write(tmp_path / "x.tsv", "a\tb\tc\nd\te\tf\ng\th\n")
    with pytest.raises(ValueError, match=r"x\.tsv line 3: expected at least 3 .* found 2"):
        data_processor.read_tsv(path, num_columns=3)


def test_read_tsv_blank_line_is_an_error(tmp_path):
    path = _write(tmp_path / "x.tsv", "h\tx\na\tb\n\nc\td\n")
    with pytest.raises(ValueError, match=r"x\.tsv line 3: expected at least 2 .* found 0"):
        data_processor.read_tsv(path, skip_header=True, num_columns=2)


def test_read_tsv_csv_error_names_file_and_line(tmp_path):
    path = _write(tmp_path / "x.tsv", "a\tb\n" + "x" * 140000 + "\tb\n")
    with pytest.raises(ValueError, match=r"x\.tsv line 2: field larger than field limit"):
        data_processor.read_tsv(path)


def test_original_read_tsv_api(tmp_path):
    path = _write(tmp_path / "x.tsv", "a\tb\nc\td\n")
    assert data_processor.DataProcessor._read_tsv(path) == [["a", "b"], ["c", "d"]]


def test_columns_num_columns():
    assert Columns(text_a=3, label=1).num_columns == 4
    assert Columns(text_a=1, text_b=2).num_columns == 3
    # MNLI: the label is the last column, after sentence2 (9).
    assert Columns(text_a=8, text_b=9, label=-1, guid=0).num_columns == 11


class _TwoLabels(data_processor.DataProcessor):

    def get_labels(self):
        return ["yes", "no"]


def test_read_examples_checks_labels_and_numbers_guids(tmp_path):
    path = _write(tmp_path / "train.tsv", "head\ttext\tlabel\n7\thello\tyes\n8\tbye\tno\n")
    examples = _TwoLabels()._read_examples(path, "train", Columns(text_a=1, label=2))
    assert examples == [
        data_processor.InputExample("train-1", "hello", None, "yes"),
        data_processor.InputExample("train-2", "bye", None, "no"),
    ]
    by_index = _TwoLabels()._read_examples(path, "dev", Columns(text_a=1, label=2, guid=0))
    assert [e.guid for e in by_index] == ["dev-7", "dev-8"]

    bad = _write(tmp_path / "bad.tsv", "head\ttext\tlabel\n7\thello\tyes\n8\tbye\tmaybe\n")
    message = r"bad\.tsv line 3: unknown label 'maybe'.*\['yes', 'no'\]"
    with pytest.raises(ValueError, match=message):
        _TwoLabels()._read_examples(bad, "train", Columns(text_a=1, label=2))


class _Scores(data_processor.DataProcessor):
    is_regression = True


def test_regression_label_must_be_a_finite_number(tmp_path):
    path = _write(tmp_path / "train.tsv", "head\ttext\tscore\n7\thello\t-12.5\n8\tbye\tnan\n")
    with pytest.raises(ValueError, match=r"^%s line 3: the label 'nan' is not a finite number$" % re.escape(path)):
        _Scores()._read_examples(path, "train", Columns(text_a=1, label=2))
    _write(tmp_path / "train.tsv", "head\ttext\tscore\n7\thello\t-12.5\n")
    assert _Scores()._read_examples(path, "train", Columns(text_a=1, label=2))[0].label == -12.5


def test_read_tsv_byte_that_is_not_utf8_names_file_line_and_column(tmp_path):
    path = tmp_path / "x.tsv"
    # Column 6 in characters: "ä" is two bytes but one column.
    path.write_bytes("h1\th2\nok\tfine\nbäd\tx".encode("utf-8") + b"\xffy\n")
    with pytest.raises(ValueError) as error:
        data_processor.read_tsv(str(path))
    assert str(error.value) == (
        "%s line 3: not valid UTF-8 (byte 0xff at column 6); the task's TSV files in "
        "--data_dir must be UTF-8." % path)


def test_read_tsv_missing_file_is_file_not_found(tmp_path):
    path = str(tmp_path / "MNLI" / "train.tsv")
    with pytest.raises(FileNotFoundError) as error:
        data_processor.read_tsv(path)
    assert str(error.value) == "%s does not exist." % path
