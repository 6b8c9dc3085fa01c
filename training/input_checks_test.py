"""Tests of input_checks: a file a run reads later is checked before it trains."""

import pytest
import tensorflow as tf

from training import input_checks


def test_check_readable(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("a\tb\n")
    input_checks.check_readable(str(path), "--do_eval reads it")
    with pytest.raises(FileNotFoundError) as error:
        input_checks.check_readable(str(tmp_path / "test.tsv"), "--do_predict reads it")
    assert str(error.value) == "%s does not exist; --do_predict reads it." % (tmp_path / "test.tsv")
    with pytest.raises(ValueError) as error:
        input_checks.check_readable(str(tmp_path), "--do_train reads it", flag="train_file")
    assert str(error.value) == "--train_file=%s is a directory, not a file; --do_train reads it." % tmp_path


def test_unreadable_file_names_the_reason(tmp_path, monkeypatch):
    path = tmp_path / "train.json"
    path.write_text("{}")

    class Denied(tf.io.gfile.GFile):
        """What the filesystem says to a user without read access (tests may run as root)."""

        def read(self, n=-1):
            raise tf.errors.PermissionDeniedError(None, None, "%s; Permission denied" % path)

    monkeypatch.setattr(tf.io.gfile, "GFile", Denied)
    with pytest.raises(ValueError) as error:
        input_checks.check_readable(str(path), "--do_train reads it", flag="train_file")
    assert str(error.value) == ("--train_file=%s cannot be read (%s; Permission denied); "
                                "--do_train reads it." % (path, path))
