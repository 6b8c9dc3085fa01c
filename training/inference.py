"""The forward pass of prediction: --do_predict, evaluation and extract_features.py.

Every prediction path calls the model on batches of three int32 arrays
[batch_size, seq_length] (input ids, input mask, segment ids) with dropout
off. `BatchForward` traces that call once and, where it pays off, compiles it
with XLA (`--inference_xla`, `auto` by default):

- On a GPU: XLA.
- float32 on a CPU: no XLA. The projections are 2-D products into which
  oneDNN fuses the bias and GELU (layers/product_dense.py), and attention's
  per-head products are batched tf.matmul (layers/attention.py); XLA
  compiles those to slower dots of its own and holds its compiled program.
- bfloat16 on a CPU that multiplies bfloat16 natively (AVX512-BF16, AMX):
  oneDNN's bfloat16 kernels are faster than XLA's, so no.
- bfloat16 on other CPUs: TensorFlow emulates bfloat16 matrix products op by
  op, far slower than XLA's compiled forward, so XLA.
The figures: docs/performance.md#inference.

XLA compiles once per input shape, so under XLA the last, smaller batch is
padded to `batch_size` rows (then cut back): one compilation per run.

A `BatchForward` also fixes glibc's mmap threshold for the process
(`training.onednn.fix_mmap_threshold`): oneDNN's float32 GEMM takes packing
buffers of 1-4 MB per thread at every call, which glibc would otherwise keep
(35-50 MB more at the peak of BERT's forward pass).
"""

import dataclasses

import tensorflow as tf
from absl import logging

from options import Options, option
from training import compute_dtype, onednn

XLA_SETTINGS = ("auto", "true", "false")


@dataclasses.dataclass(kw_only=True)
class InferenceOptions(Options):
    """How the prediction paths run the model."""

    inference_xla: str = option(
        "auto", "Compile the forward pass of prediction, evaluation and feature extraction with "
        "XLA: auto = yes on a GPU; on a CPU, only bfloat16 without native bfloat16 "
        "(AVX512-BF16/AMX), where TensorFlow emulates it op by op (oneDNN is faster otherwise); "
        "true; false.",
        choices=XLA_SETTINGS, new=True)

    def compiles_forward(self, dtype):
        """Whether the forward pass at compute dtype `dtype` is compiled with XLA."""
        return uses_xla(self.inference_xla, dtype)


def uses_xla(setting, dtype, cpu_flags=None, has_gpu=None):
    """Whether `setting` (of --inference_xla) compiles the forward pass at `dtype`.

    Args:
      setting: "auto", "true" or "false".
      dtype: the compute dtype, "float32", "bfloat16" or "float16".
      cpu_flags: the CPU's feature flags; default: read from /proc/cpuinfo.
      has_gpu: whether TensorFlow sees a GPU; default: asks TensorFlow.
    """
    if setting not in XLA_SETTINGS:
        raise ValueError("--inference_xla=%s: expected one of %s." % (setting, ", ".join(XLA_SETTINGS)))
    if setting != "auto":
        return setting == "true"
    if has_gpu is None:
        has_gpu = bool(tf.config.list_physical_devices("GPU"))
    if has_gpu:
        return True
    if dtype != "bfloat16":
        return False
    if cpu_flags is None:
        cpu_flags = compute_dtype.cpu_flags()
    return not any(flag in cpu_flags for flag in compute_dtype.NATIVE_BFLOAT16_FLAGS)


class BatchForward:
    """`forward(input_ids, input_mask, segment_ids)` as one traced (maybe XLA) function.

    Call with three int arrays or tensors [n, seq_length], n <= batch_size;
    returns forward's outputs (any nest of tensors with n leading rows).
    """

    def __init__(self, forward, batch_size, seq_length, jit_compile):
        """
        Args:
          forward: (input_ids, input_mask, segment_ids) -> nest of tensors [n, ...].
          batch_size: the largest n; under XLA smaller batches are padded to it.
          seq_length: int, the second dimension of the inputs.
          jit_compile: bool, compile with XLA.
        """
        self.batch_size = batch_size
        self.jit_compile = jit_compile
        onednn.fix_mmap_threshold()  # see the module docstring
        spec = tf.TensorSpec([None, seq_length], tf.int32)
        self._function = tf.function(forward, input_signature=[spec, spec, spec], jit_compile=jit_compile,
                                     autograph=False)
        logging.info("Forward pass of batches of %d x %d: %s.", batch_size, seq_length,
                     "compiled with XLA on the first batch (--inference_xla)" if jit_compile
                     else "TensorFlow ops, no XLA (--inference_xla)")

    def __call__(self, input_ids, input_mask, segment_ids):
        inputs = [tf.convert_to_tensor(x, tf.int32) for x in (input_ids, input_mask, segment_ids)]
        rows = int(inputs[0].shape[0])
        if rows > self.batch_size:
            raise ValueError("A batch of %d rows; this forward pass takes at most %d." % (rows, self.batch_size))
        if not self.jit_compile or rows == self.batch_size:
            return self._function(*inputs)
        # Padding rows (all-zero mask) only cost time; rows do not interact.
        padded = [tf.pad(x, [[0, self.batch_size - rows], [0, 0]]) for x in inputs]
        return tf.nest.map_structure(lambda t: t[:rows], self._function(*padded))
