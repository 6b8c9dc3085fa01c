"""Turns on TensorFlow's oneDNN CPU kernels, before TensorFlow loads.

TensorFlow 2.20 uses oneDNN by default only on x86 CPUs with AVX512-VNNI,
AVX512-BF16, AVX-VNNI or AMX; elsewhere (an AMD EPYC without AVX-512, say) it
runs Eigen kernels. On such a CPU oneDNN measured 4-5x faster for the batched
matrix products and the softmax of attention, and made the language model's
training step 1.3-1.6x faster (benchmarks/lm_benchmark.py). Every entry point
calls `enable()` before importing TensorFlow. A value the user set
(TF_ENABLE_ONEDNN_OPTS=0) is kept.
"""

import os
import sys

from absl import logging

VARIABLE = "TF_ENABLE_ONEDNN_OPTS"


def enable():
    """Sets TF_ENABLE_ONEDNN_OPTS=1 unless set; warns when TensorFlow was imported first."""
    if VARIABLE in os.environ:
        return
    if "tensorflow" in sys.modules:
        logging.warning("TensorFlow was imported before training.onednn.enable(): %s is not set for this "
                        "process.", VARIABLE)
        return
    os.environ[VARIABLE] = "1"
