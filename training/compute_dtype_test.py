"""preferred_dtype: bfloat16 only where /proc/cpuinfo lists native bfloat16 arithmetic."""

from training import compute_dtype


def _cpuinfo(tmp_path, flags):
    path = tmp_path / "cpuinfo"
    path.write_text("processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: %s\n\n" % flags)
    return str(path)


def test_native_bfloat16_cpus_get_bfloat16(tmp_path):
    assert compute_dtype.preferred_dtype(_cpuinfo(tmp_path, "fpu sse avx512f avx512_bf16")) == "bfloat16"
    assert compute_dtype.preferred_dtype(_cpuinfo(tmp_path, "fpu amx_tile amx_bf16")) == "bfloat16"


def test_others_get_float32(tmp_path):
    assert compute_dtype.preferred_dtype(_cpuinfo(tmp_path, "fpu sse avx2 fma")) == "float32"
    assert compute_dtype.preferred_dtype(str(tmp_path / "missing")) == "float32"
    assert compute_dtype.cpu_flags(_cpuinfo(tmp_path, "a b")) == {"a", "b"}
