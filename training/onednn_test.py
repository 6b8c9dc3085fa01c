"""onednn.enable: sets TF_ENABLE_ONEDNN_OPTS=1 before TensorFlow, keeps a user's value, warns when too late;
onednn.fix_mmap_threshold: glibc's mmap threshold fixed, unless the user set it;
onednn.assume_frozen_weights: bfloat16 predict-only processes only, the same predictions."""

import ctypes
import glob
import os
import subprocess
import sys

import numpy as np
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


def test_frozen_weights_only_for_a_bfloat16_process_that_does_not_train(monkeypatch):
    # Only the variable is set here; TensorFlow reads it once, in the process's first oneDNN
    # product kernel, which this test does not create. setenv first, so that monkeypatch removes
    # what assume_frozen_weights sets: a delenv of an absent variable records nothing to undo, and
    # the variable leaked into the processes later tests of this worker start (their training
    # runs then kept stale weights: the resume test failed whenever it ran after this one).
    monkeypatch.setenv(onednn.FROZEN_WEIGHTS_VARIABLE, "unset by the test")
    monkeypatch.delenv(onednn.FROZEN_WEIGHTS_VARIABLE)
    assert not onednn.assume_frozen_weights("float32", trains=False)
    assert not onednn.assume_frozen_weights("float16", trains=False)
    assert not onednn.assume_frozen_weights("bfloat16", trains=True)
    assert onednn.FROZEN_WEIGHTS_VARIABLE not in os.environ
    assert onednn.assume_frozen_weights("bfloat16", trains=False)
    assert os.environ[onednn.FROZEN_WEIGHTS_VARIABLE] == "1"


def test_the_frozen_weights_test_leaves_the_environment_as_it_found_it():
    # The variable leaking into this worker's later subprocesses made their training keep stale weights.
    with pytest.MonkeyPatch.context() as outer:
        outer.delenv(onednn.FROZEN_WEIGHTS_VARIABLE, raising=False)
        with pytest.MonkeyPatch.context() as inner:
            test_frozen_weights_only_for_a_bfloat16_process_that_does_not_train(inner)
        assert onednn.FROZEN_WEIGHTS_VARIABLE not in os.environ


def test_frozen_weights_the_user_turned_off_stay_off(monkeypatch):
    monkeypatch.setenv(onednn.FROZEN_WEIGHTS_VARIABLE, "0")
    assert not onednn.assume_frozen_weights("bfloat16", trains=False)
    assert os.environ[onednn.FROZEN_WEIGHTS_VARIABLE] == "0"


# A predict-only run in a fresh interpreter: build, then new weights (as a checkpoint restore
# gives them), then the traced forward pass twice, the weights changed in between.
_PREDICT_SCRIPT = """
import sys
import numpy as np
from training import onednn
onednn.enable()
if sys.argv[1] == "frozen":
    assert onednn.assume_frozen_weights("bfloat16", trains=False)
import tensorflow as tf
import tf_keras
import modeling
from training import inference

tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
config = modeling.BertConfig(vocab_size=64, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=128, max_position_embeddings=16)
model = modeling.build_model(modeling.BertModel(config))
rng = np.random.default_rng(0)
for variable in model.weights:
    variable.assign(rng.normal(0, 0.1, variable.shape))
forward = inference.BatchForward(
    lambda ids, mask, segments: tf.cast(model(dict(input_ids=ids, input_mask=mask, token_type_ids=segments),
                                              training=False)["sequence_output"], tf.float32),
    batch_size=4, seq_length=8, jit_compile=False)
ids = rng.integers(0, 64, size=(4, 8)).astype(np.int32)
ones = np.ones_like(ids)
first = forward(ids, ones, 0 * ones).numpy()
for variable in model.weights:
    variable.assign(variable * 1.5)
second = forward(ids, ones, 0 * ones).numpy()
np.save(sys.argv[2], np.stack([first, second]))
"""


def test_frozen_weights_predict_what_plain_weights_do_until_the_weights_change(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k != onednn.FROZEN_WEIGHTS_VARIABLE}
    outputs = {}
    for mode in ("frozen", "plain"):
        path = str(tmp_path / (mode + ".npy"))
        run_env = dict(env, **({} if mode == "frozen" else {onednn.FROZEN_WEIGHTS_VARIABLE: "0"}))
        subprocess.run([sys.executable, "-c", _PREDICT_SCRIPT, mode, path], cwd=root, env=run_env,
                       capture_output=True, text=True, check=True)
        outputs[mode] = np.load(path)
    frozen, plain = outputs["frozen"], outputs["plain"]
    # The weights restored before the first call: the same outputs up to bfloat16 rounding
    # (oneDNN's blocked kernel may sum in another order).
    np.testing.assert_allclose(frozen[0], plain[0], atol=0.05)
    assert not np.allclose(plain[0], plain[1], atol=0.05)
    if np.allclose(frozen[1], plain[1], atol=0.05):
        pytest.skip("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS had no effect here (no oneDNN product kernels)")
    # It took effect: the products kept the first weights they saw, which is why only processes
    # that do not train set it.
