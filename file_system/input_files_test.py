"""--input_file: files and globs in order, and the errors naming the flag."""

import pytest

from file_system import input_files


def _write(path, data):
    path.write_bytes(data)
    return str(path)


def test_expand_input_files(tmp_path):
    for name in ("b.txt", "a.txt", "c.md"):
        _write(tmp_path / name, b"x\n")
    pattern = str(tmp_path / "*.txt")
    single = str(tmp_path / "c.md")
    assert input_files.expand_input_files("%s, %s" % (pattern, single)) == [
        str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), single]


@pytest.mark.parametrize("flag,message", [
    ("", "--input_file is empty"),
    ("{tmp}/missing.txt", "missing.txt does not exist"),
    ("{tmp}/*.nothing", "the glob '.*\\*.nothing' matches no file"),
    ("{tmp}", "is a directory"),
])
def test_expand_input_files_errors(tmp_path, flag, message):
    with pytest.raises(ValueError, match=message):
        input_files.expand_input_files(flag.format(tmp=tmp_path))
