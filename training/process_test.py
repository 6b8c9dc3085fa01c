"""The process of an entry point: --output_dir checks."""

import os

import pytest
from training import process


def test_output_dir_that_is_a_file_is_named(tmp_path):
    path = tmp_path / "out"
    path.write_text("not a directory")
    with pytest.raises(ValueError) as error:
        process.make_output_dir(str(path))
    assert str(error.value) == "--output_dir=%s is a file, not a directory." % path


def test_output_dir_below_a_file_is_named(tmp_path):
    (tmp_path / "file").write_text("")
    path = str(tmp_path / "file" / "out")
    with pytest.raises(ValueError, match=r"^--output_dir=%s is not a writable directory \(.+\)\.$" % path):
        process.make_output_dir(path)


def test_output_dir_without_write_permission_is_named():
    # /proc/1 is a directory nobody can create files in, root included (tests run as root here).
    with pytest.raises(ValueError, match=r"^--output_dir=/proc/1 is not a writable directory \(.+\)\.$"):
        process.make_output_dir("/proc/1")


def test_output_dir_is_created_and_left_empty(tmp_path):
    path = tmp_path / "a" / "b"
    process.make_output_dir(str(path))
    assert os.listdir(path) == []
