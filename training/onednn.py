"""oneDNN's CPU kernels on before TensorFlow loads; their GEMM buffers returned; weights kept blocked when predicting.

`enable()` sets TF_ENABLE_ONEDNN_OPTS=1; every entry point calls it before
importing TensorFlow. TensorFlow 2.20 uses oneDNN by default only on x86 CPUs
with AVX512-VNNI, AVX512-BF16, AVX-VNNI or AMX and runs Eigen kernels
elsewhere (an AMD EPYC without AVX-512, say), several times slower for
attention's batched products. A value the user set (TF_ENABLE_ONEDNN_OPTS=0)
is kept.

`fix_mmap_threshold()` fixes glibc's mmap threshold at 1 MiB; the forward
pass of prediction calls it (`training.inference.BatchForward`). oneDNN's
float32 inner product (the feed-forward projection in inference,
layers/product_dense.py) allocates packing buffers of a few MB per worker
thread at every call; glibc's default threshold rises to the largest block
freed so far, so once TensorFlow has freed its first large activations those
buffers come from per-thread arenas, which keep them. With the threshold
fixed they go back to the system when freed. Not for every process: it slows
those that map and unmap tensors of a few MB at every step (FastFullTokenizer,
the pre-training step). Only on glibc; a threshold the user set
(MALLOC_MMAP_THRESHOLD_) is kept.

`assume_frozen_weights(dtype, trains)` sets TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1
(a TensorFlow variable for oneDNN builds) for processes that only predict, in
bfloat16 (run_classifier.py and run_squad.py without --do_train). Each oneDNN
product kernel then reorders the weights of its first call into oneDNN's
blocked layout once, keeps that copy and runs its blocked kernel ("brgemm"),
instead of its generic GEMM on the plain layout at every call ("gemm:jit" in
ONEDNN_VERBOSE's log). The copy is never refreshed, so the variable is only
for processes whose weights do not change after the first product of a
traced function runs (a training step in the same process would compute with
stale weights). TensorFlow reads it once, when its first oneDNN product
kernel is created, so the entry points set it in `main`, before the model is
built. float32 is left as it is (its peak rose above Model Garden's encoder;
float16 was not measured). A value the user set
(TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=0 turns it off) is kept.

Measurements: docs/performance.md#why-onednn.
"""

import ctypes
import os
import sys

from absl import logging

VARIABLE = "TF_ENABLE_ONEDNN_OPTS"

MMAP_THRESHOLD_BYTES = 1 << 20
MMAP_THRESHOLD_VARIABLE = "MALLOC_MMAP_THRESHOLD_"  # glibc's own, read at process start
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number in glibc's malloc.h
FROZEN_WEIGHTS_VARIABLE = "TF_ONEDNN_ASSUME_FROZEN_WEIGHTS"


def enable():
    """Sets TF_ENABLE_ONEDNN_OPTS=1 unless set; warns when TensorFlow was imported first."""
    if VARIABLE in os.environ:
        return
    if "tensorflow" in sys.modules:
        logging.warning("TensorFlow was imported before training.onednn.enable(): %s is not set for this "
                        "process.", VARIABLE)
        return
    os.environ[VARIABLE] = "1"


def fix_mmap_threshold():
    """mallopt(M_MMAP_THRESHOLD, 1 MiB) on glibc unless MALLOC_MMAP_THRESHOLD_ is set; whether it was set now."""
    if MMAP_THRESHOLD_VARIABLE in os.environ:
        return False
    process = ctypes.CDLL(None)  # the symbols already loaded, the C library's among them
    if not hasattr(process, "gnu_get_libc_version") or not hasattr(process, "mallopt"):
        return False  # not glibc: its mallopt numbers mean nothing there
    return bool(process.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def assume_frozen_weights(dtype, trains):
    """Sets TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 for a bfloat16 process that only predicts (see the module docstring).

    Args:
      dtype: the compute dtype of the run (--dtype).
      trains: whether the process trains (--do_train): then nothing is set.

    Returns:
      Whether this call set it (not when the user did, or for another dtype).
    """
    if trains or dtype != "bfloat16" or FROZEN_WEIGHTS_VARIABLE in os.environ:
        return False
    os.environ[FROZEN_WEIGHTS_VARIABLE] = "1"
    return True


def refuse_frozen_weights_in_training():
    """Raises ValueError when TF_ONEDNN_ASSUME_FROZEN_WEIGHTS is on in a process that trains.

    oneDNN's product kernels would keep the weights they first see and compute every later step with
    them: training silently goes wrong (and a resumed run differs from an uninterrupted one, which is
    how a test run that leaked the variable into the environment showed it).
    """
    if os.environ.get(FROZEN_WEIGHTS_VARIABLE, "0") not in ("", "0"):
        raise ValueError("%s=%s is set in the environment: oneDNN would keep the weights it first sees and train "
                         "on with them unchanged. Unset it (or set it to 0) to train."
                         % (FROZEN_WEIGHTS_VARIABLE, os.environ[FROZEN_WEIGHTS_VARIABLE]))
