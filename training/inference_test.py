"""BatchForward and --inference_xla: XLA where it pays off, one compilation per run, the same numbers."""

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from options import define_flags, from_flags
from training import inference, onednn


@pytest.mark.parametrize("setting, dtype, cpu_flags, has_gpu, expected", [
    ("auto", "float32", {"avx2", "fma"}, False, False),  # oneDNN's fused projections are faster
    ("auto", "float32", {"avx2", "avx512f", "avx512_bf16"}, False, False),  # also with AVX-512 (Zen 4)
    ("auto", "float32", {"avx512f", "amx_bf16"}, False, False),
    ("auto", "bfloat16", {"avx2", "fma"}, False, True),  # emulated bfloat16: XLA ~25x faster
    ("auto", "bfloat16", {"avx512f", "avx512_bf16"}, False, False),  # oneDNN's native kernels win
    ("auto", "bfloat16", {"amx_tile", "amx_bf16"}, False, False),
    ("auto", "float32", {"avx2"}, True, True),  # a GPU: XLA whatever the host CPU
    ("auto", "bfloat16", {"amx_bf16"}, True, True),
    ("true", "float32", {"avx2"}, False, True),
    ("true", "bfloat16", {"amx_bf16"}, False, True),
    ("false", "float32", {"avx512f"}, True, False),
])
def test_uses_xla(setting, dtype, cpu_flags, has_gpu, expected):
    assert inference.uses_xla(setting, dtype, cpu_flags, has_gpu) is expected


def test_unknown_setting_names_the_flag():
    with pytest.raises(ValueError, match=r"--inference_xla=yes: expected one of auto, true, false"):
        inference.uses_xla("yes", "float32", set())


def test_option_parses_and_rejects_other_values():
    flag_values = flags.FlagValues()
    define_flags(inference.InferenceOptions, flag_values)
    flag_values(["prog", "--inference_xla=false"])
    assert from_flags(inference.InferenceOptions, flag_values).compiles_forward("float32") is False
    flag_values.unparse_flags()
    flag_values(["prog"])
    assert from_flags(inference.InferenceOptions, flag_values).inference_xla == "auto"
    flag_values.unparse_flags()
    with pytest.raises(flags.IllegalFlagValueError, match="inference_xla"):
        flag_values(["prog", "--inference_xla=maybe"])


def _model_and_reference():
    """A tiny two-output forward and its NumPy transcription."""
    rng = np.random.default_rng(0)
    table = rng.normal(size=(50, 8)).astype(np.float32)
    weights = rng.normal(size=(8, 3)).astype(np.float32)

    def forward(input_ids, input_mask, segment_ids):
        embedded = tf.gather(table, input_ids) * tf.cast(input_mask + segment_ids, tf.float32)[..., None]
        pooled = tf.reduce_sum(embedded, axis=1)
        return dict(pooled=pooled, scores=(tf.nn.gelu(pooled @ weights), tf.reduce_max(embedded, axis=[1, 2])))

    def reference(input_ids, input_mask, segment_ids):
        embedded = table[input_ids] * (input_mask + segment_ids)[..., None].astype(np.float32)
        pooled = embedded.sum(axis=1)
        return pooled, pooled @ weights, embedded.max(axis=(1, 2))

    return forward, reference


@pytest.mark.parametrize("jit_compile", [False, True])
def test_outputs_match_numpy_for_every_batch_size(jit_compile):
    forward, reference = _model_and_reference()
    batch_forward = inference.BatchForward(forward, batch_size=4, seq_length=5, jit_compile=jit_compile)
    rng = np.random.default_rng(1)
    for rows in (4, 3, 1):
        ids = rng.integers(0, 50, size=(rows, 5)).astype(np.int32)
        mask = (rng.random((rows, 5)) < 0.8).astype(np.int32)
        segments = np.zeros((rows, 5), np.int32)
        outputs = batch_forward(ids, mask, segments)
        pooled, projected, maxima = reference(ids, mask, segments)
        assert outputs["pooled"].shape == (rows, 8)
        np.testing.assert_allclose(outputs["pooled"].numpy(), pooled, rtol=1e-5, atol=1e-5)
        assert outputs["scores"][0].shape == (rows, 3)
        np.testing.assert_allclose(outputs["scores"][1].numpy(), maxima, rtol=1e-5, atol=1e-5)
        expected_gelu = tf.nn.gelu(tf.constant(projected)).numpy()
        np.testing.assert_allclose(outputs["scores"][0].numpy(), expected_gelu, rtol=1e-4, atol=1e-4)


def test_xla_compiles_once_for_the_smaller_last_batch():
    forward, _ = _model_and_reference()
    batch_forward = inference.BatchForward(forward, batch_size=4, seq_length=5, jit_compile=True)
    for rows in (4, 2, 3):
        batch_forward(*[np.ones((rows, 5), np.int32)] * 3)
    # Padded to 4 rows: one trace; XLA compiles per traced shape.
    assert batch_forward._function.experimental_get_tracing_count() == 1


def test_a_batch_larger_than_batch_size_is_an_error():
    forward, _ = _model_and_reference()
    batch_forward = inference.BatchForward(forward, batch_size=2, seq_length=5, jit_compile=True)
    with pytest.raises(ValueError, match="A batch of 3 rows; this forward pass takes at most 2"):
        batch_forward(*[np.ones((3, 5), np.int32)] * 3)


def test_the_forward_pass_of_prediction_fixes_the_mmap_threshold(monkeypatch):
    # So that oneDNN's GEMM packing buffers go back to the system when freed (training/onednn.py).
    calls = []
    monkeypatch.setattr(onednn, "fix_mmap_threshold", lambda: calls.append(True))
    forward, _ = _model_and_reference()
    inference.BatchForward(forward, batch_size=2, seq_length=5, jit_compile=False)
    assert calls == [True]
