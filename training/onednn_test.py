"""onednn.enable: sets TF_ENABLE_ONEDNN_OPTS=1 before TensorFlow, keeps a user's value, warns when too late;
onednn.fix_mmap_threshold: glibc's mmap threshold fixed, unless the user set it."""

import ctypes
import glob
import os
import subprocess
import sys

import pytest

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


# Run in a fresh interpreter: the threshold can be fixed only once per process, and
# the test process may have fixed it already (every BatchForward a test builds does).
_THRESHOLD_SCRIPT = """
import ctypes
import sys
from training import onednn

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = MallInfo2

def mmapped_for_a_2mb_block():
    before = mallinfo2().hblkhd  # bytes in blocks glibc mmapped on their own
    block = bytearray(2 << 20)
    return mallinfo2().hblkhd - before >= 2 << 20

fixed = sys.argv[1] == "fix" and onednn.fix_mmap_threshold()  # before the work, as BatchForward does
bytearray(16 << 20)  # freeing a 16 MB block raises glibc's dynamic threshold past 2 MB
print(fixed, mmapped_for_a_2mb_block())
"""


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="glibc >= 2.33 only")
def test_blocks_of_a_few_megabytes_are_mmapped_when_the_threshold_is_fixed():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k != onednn.MMAP_THRESHOLD_VARIABLE}
    outputs = [subprocess.run([sys.executable, "-c", _THRESHOLD_SCRIPT, mode], cwd=root, env=env,
                              capture_output=True, text=True, check=True).stdout.split()
               for mode in ("fix", "leave")]
    # Fixed: its own mapping, returned to the system when freed. glibc's default: from the
    # heap, which keeps it after it is freed.
    assert outputs == [["True", "True"], ["False", "False"]]


def test_a_threshold_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(onednn.MMAP_THRESHOLD_VARIABLE, "65536")
    assert not onednn.fix_mmap_threshold()
