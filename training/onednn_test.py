"""onednn.enable: sets TF_ENABLE_ONEDNN_OPTS=1 before TensorFlow, keeps a user's value, warns when too late."""

import glob
import os
import sys

from training import onednn


def test_sets_the_variable_before_tensorflow_loads(monkeypatch):
    monkeypatch.delenv(onednn.VARIABLE, raising=False)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    onednn.enable()
    assert os.environ[onednn.VARIABLE] == "1"


def test_keeps_a_value_the_user_set(monkeypatch):
    monkeypatch.setenv(onednn.VARIABLE, "0")
    onednn.enable()
    assert os.environ[onednn.VARIABLE] == "0"


def test_warns_and_leaves_it_unset_when_tensorflow_came_first(monkeypatch, caplog):
    monkeypatch.delenv(onednn.VARIABLE, raising=False)
    monkeypatch.setitem(sys.modules, "tensorflow", object())
    onednn.enable()
    assert onednn.VARIABLE not in os.environ
    assert "imported before training.onednn.enable()" in caplog.text


def test_every_entry_point_enables_it_before_importing_tensorflow():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entry_points = [p for p in glob.glob(os.path.join(root, "*.py"))
                    if not p.endswith("_test.py") and os.path.basename(p) != "conftest.py"]
    assert len(entry_points) >= 9
    for path in entry_points:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "onednn.enable()" in text, path
        before = text.split("onednn.enable()")[0]
        assert "tensorflow" not in before.replace("TensorFlow", ""), path
        assert "from training." not in before.replace("from training import onednn", ""), path
