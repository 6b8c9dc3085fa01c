"""oneDNN's CPU kernels on before TensorFlow loads; their GEMM buffers returned; weights kept blocked when predicting.

TensorFlow 2.20 uses oneDNN by default only on x86 CPUs with AVX512-VNNI,
AVX512-BF16, AVX-VNNI or AMX; elsewhere (an AMD EPYC without AVX-512, say) it
runs Eigen kernels. On such a CPU oneDNN measured 4-5x faster for the batched
matrix products and the softmax of attention, and made the language model's
training step 1.3-1.6x faster (benchmarks/lm_benchmark.py). Every entry point
calls `enable()` before importing TensorFlow. A value the user set
(TF_ENABLE_ONEDNN_OPTS=0) is kept.

`fix_mmap_threshold()` fixes glibc's mmap threshold at 1 MiB; the forward
pass of prediction calls it (`training.inference.BatchForward`). oneDNN's
float32 matrix product with a fused bias and GELU (an inner product on
oneDNN's own GEMM: the feed-forward projection in inference,
modeling/product_dense.py) allocates packing buffers of 1-4 MB at every call
in each worker thread. glibc's default threshold is dynamic: it rises to the
size of the largest block freed so far (up to 32 MB), so once TensorFlow has
freed its first 8-33 MB activations, those buffers come from per-thread
arenas, which keep them after they are freed. BERT's inference forward pass
(4 layers, hidden 512, batch 32 x 128) peaked 35-50 MB higher that way than
with Keras's einsum products (which need no such buffers). With the fixed
threshold such blocks go back to the system when freed: the peak is within a
few MB of theirs, for ~2% of the speed (benchmarks/inference_benchmark.py;
Model Garden's encoder peaks the same under either setting). Not for every
process: it made FastFullTokenizer ~25% slower (its tensors of a few MB are
mapped and unmapped at every batch) and the float32 pre-training step ~2.5%
slower (13.36 -> 13.03 seq/s, peak 2806 -> 2774 MB). Only on glibc; a
threshold the user set (MALLOC_MMAP_THRESHOLD_) is kept.

`assume_frozen_weights(dtype, trains)` sets TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1
(a TensorFlow variable for oneDNN builds) for processes that only predict, in
bfloat16 (run_classifier.py and run_squad.py without --do_train).
Unless told that weights are constants, TensorFlow hands oneDNN each matrix
product's weights in their plain row-major layout at every call, and oneDNN
then runs its generic GEMM ("gemm:jit" in ONEDNN_VERBOSE's log). With the
variable set, each product kernel reorders the weights of its first call into
oneDNN's blocked layout once, keeps that copy, and runs oneDNN's blocked
kernel ("brgemm"): BERT's bfloat16 inference forward pass (4 layers, hidden
512, batch 32 x 128) ran ~7% faster on a 2-core Zen 4 and peaked ~15 MB
lower (benchmarks/inference_benchmark.py). In float32 it gained 1.5-2% and
peaked 4-16 MB higher, above Model Garden's encoder, so float32 is left as
it is (float16 was not measured). The copy is never refreshed: a kernel
would go on using the first weights it saw, so the variable is only for
processes whose weights do not change after the first product of a traced
function runs (a training step in the same process would compute with stale
weights; eager products measured unaffected). TensorFlow reads it once, when
its first oneDNN product kernel is created, so the entry points set it in
`main`, before the model is built; set after that it has no effect. A value
the user set (TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=0 turns it off) is kept.
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
