"""preferred_dtype: bfloat16 only where /proc/cpuinfo lists native bfloat16 arithmetic; the CPU in one line."""

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


def test_the_cpu_is_described_with_its_family_model_and_bfloat16_support(tmp_path, monkeypatch):
    monkeypatch.setattr(compute_dtype.os, "sched_getaffinity", lambda pid: {0, 1})
    path = tmp_path / "cpuinfo"
    path.write_text("processor\t: 0\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n"
                    "flags\t\t: fpu avx512f avx512_bf16\n\nprocessor\t: 1\ncpu family\t: 25\n")
    assert compute_dtype.describe_cpu(str(path)) == \
        "AMD EPYC, family 25 model 17, native bfloat16 (avx512_bf16), 2 cores"
    path.write_text("cpu family\t: 23\nmodel\t\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2\n")
    assert compute_dtype.describe_cpu(str(path)) == "AMD EPYC, family 23 model 1, no native bfloat16, 2 cores"
    assert compute_dtype.describe_cpu(str(tmp_path / "missing")) == \
        "unknown CPU, family ? model ?, no native bfloat16, 2 cores"
