"""file_system: local paths through Python, remote ones through tf.io.gfile."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

import file_system

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_local_operations(tmp_path):
    path = str(tmp_path / "a.txt")
    with file_system.open_file(path, "w") as f:
        f.write("caf\u00e9\r\nx\n")
    assert file_system.exists(path) and not file_system.isdir(path)
    assert file_system.isdir(str(tmp_path))
    assert file_system.size(path) == 9  # UTF-8, no newline translation.
    with file_system.open_file(path) as f:
        assert f.read() == "caf\u00e9\r\nx\n"
    other = str(tmp_path / "b.txt")
    with file_system.open_file(other, "wb") as f:
        f.write(b"old")
    file_system.rename(path, other)  # Replaces b.txt.
    assert file_system.glob(str(tmp_path / "*.txt")) == [other]
    file_system.remove(other)
    assert not file_system.exists(other)


def test_local_errors_are_os_errors(tmp_path):
    with pytest.raises(file_system.errors()) as error:
        file_system.open_file(str(tmp_path / "missing" / "x"), "rb")
    assert isinstance(error.value, OSError)
    assert "No such file or directory" in file_system.reason(error.value)


def test_remote_paths_go_through_gfile():
    # TensorFlow's in-memory file system stands for gs:// here.
    path = "ram://file_system_test/a.txt"
    with file_system.open_file(path, "w") as f:
        f.write("hello\n")
    assert file_system.is_remote(path) and file_system.exists(path)
    assert file_system.size(path) == 6
    assert file_system.glob("ram://file_system_test/*.txt") == [path]
    file_system.rename(path, "ram://file_system_test/b.txt")
    assert not file_system.exists(path)
    with pytest.raises(file_system.errors()) as error:
        file_system.open_file("ram://file_system_test/missing/x", "rb").read()
    assert isinstance(error.value, tf.errors.OpError)
    assert file_system.reason(error.value) == error.value.message


def test_local_paths_do_not_import_tensorflow(tmp_path):
    code = ("import sys, file_system; file_system.glob(%r); file_system.exists(%r); "
            "print('tensorflow' in sys.modules)" % (str(tmp_path / "*"), str(tmp_path)))
    process = subprocess.run([sys.executable, "-c", code], cwd=REPO_DIR, capture_output=True,
                             text=True, check=True)
    assert process.stdout.strip() == "False"
