"""Tests of outputs.atomic: a path appears only once its content is complete."""

import os

import pytest

from outputs import atomic


def test_write_text_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = str(tmp_path / "config.json")
    atomic.write_text(path, "old\n")
    atomic.write_text(path, "new\n")
    assert open(path).read() == "new\n"
    assert os.listdir(tmp_path) == ["config.json"]


def test_a_failed_write_keeps_the_previous_version_and_removes_the_temporary(tmp_path):
    path = str(tmp_path / "records.tfrecord")
    atomic.write_text(path, "complete\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic.writing(path) as temporary:
            assert temporary == path + ".incomplete"
            with open(temporary, "w") as f:
                f.write("part")
            assert open(path).read() == "complete\n"  # Not yet replaced.
            raise KeyboardInterrupt
    assert open(path).read() == "complete\n"
    assert os.listdir(tmp_path) == ["records.tfrecord"]


def test_nothing_appears_until_the_block_ends(tmp_path):
    path = str(tmp_path / "out.txt")
    with atomic.writing(path) as temporary:
        with open(temporary, "w") as f:
            f.write("x")
        assert not os.path.exists(path)
    assert open(path).read() == "x"
