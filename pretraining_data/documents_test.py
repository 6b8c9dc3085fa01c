"""Reading documents: format, file boundaries, invalid UTF-8, and the errors."""

import pytest

import file_system
from pretraining_data import documents


def _write(path, data):
    path.write_bytes(data)
    return str(path)


def test_documents_are_separated_by_blank_lines_and_by_files(tmp_path):
    first = _write(tmp_path / "a.txt", b"One.\nTwo.\n\n  \t \nThree.\r\nFour.  \n\n\nFive.")
    second = _write(tmp_path / "b.txt", b"Six.\n")
    reader = documents.DocumentReader([first, second])
    # Whitespace-only lines separate too; "\r" is stripped; the end of a file
    # ends its last document even without a blank line.
    assert list(reader) == [["One.", "Two."], ["Three.", "Four."], ["Five."], ["Six."]]
    assert reader.num_documents == 4
    assert reader.bytes_read == reader.total_bytes
    assert not reader.skipped_lines


def test_lines_that_are_not_utf8_are_skipped_and_counted(tmp_path):
    path = _write(tmp_path / "bad.txt",
                  "Caf\u00e9.\n".encode() + b"bad \xff\xfe line\nok\n\n\xc3\n"
                  + "\u4e2d.\n".encode())
    reader = documents.DocumentReader([path])
    assert list(reader) == [["Caf\u00e9.", "ok"], ["\u4e2d."]]
    assert reader.skipped_lines == {path: 2}


def test_lines_are_split_on_newline_only(tmp_path):
    # U+2028 and a form feed are not line breaks for the original's readline().
    path = _write(tmp_path / "a.txt", "a\u2028b\x0cc\nd\n".encode())
    assert list(documents.DocumentReader([path])) == [["a\u2028b\x0cc", "d"]]


def test_long_files_are_read_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "_BLOCK_SIZE", 7)
    lines = ["Sentence number %d." % i for i in range(50)]
    path = _write(tmp_path / "a.txt", ("\n".join(lines[:20]) + "\n\n" + "\n".join(lines[20:]))
                  .encode())
    assert list(documents.DocumentReader([path])) == [lines[:20], lines[20:]]


def test_empty_input_is_an_error(tmp_path):
    paths = [_write(tmp_path / "a.txt", b""), _write(tmp_path / "b.txt", b"")]
    with pytest.raises(ValueError, match="The input files are empty"):
        documents.DocumentReader(paths)


def test_unreadable_file_is_an_error(tmp_path, monkeypatch):
    # Running as root, permissions do not stop reads: make the open fail.
    path = _write(tmp_path / "a.txt", b"x\n")
    real_open = file_system.open_file

    def failing_open(name, mode="r"):
        if name == path:
            raise PermissionError(13, "Permission denied")
        return real_open(name, mode)

    monkeypatch.setattr(file_system, "open_file", failing_open)
    with pytest.raises(ValueError,
                       match=r"Cannot read input file .*a.txt: \[Errno 13\] Permission denied"):
        documents.DocumentReader([path])
