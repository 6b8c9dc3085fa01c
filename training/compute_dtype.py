"""The faster training dtype of this CPU, for the demo's and the tiny reproductions' defaults.

bfloat16 mixed precision pays off on CPUs that multiply bfloat16 natively
(AVX512-BF16 or AMX): about 2.3x float32 for training on a Sapphire Rapids
core. Without them TensorFlow emulates it, and the small models of the demo
and the tiny scales ran about 2.5x slower in bfloat16 than in float32 (an
AMD EPYC without AVX-512, measured). Explicit --dtype flags are never changed.
"""

import os

NATIVE_BFLOAT16_FLAGS = frozenset(("avx512_bf16", "amx_bf16"))


def cpu_flags(cpuinfo_path="/proc/cpuinfo"):
    """The CPU's feature flags, or an empty set where /proc/cpuinfo cannot be read."""
    try:
        with open(cpuinfo_path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def describe_cpu(cpuinfo_path="/proc/cpuinfo"):
    """The CPU in one line: model name, family and model numbers, bfloat16 support, cores this process may use.

    E.g. "AMD EPYC, family 25 model 17, native bfloat16 (avx512_bf16), 2 cores".
    """
    fields = {}
    try:
        with open(cpuinfo_path, encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition(":")
                fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    native = sorted(NATIVE_BFLOAT16_FLAGS & set(fields.get("flags", "").split()))
    return "%s, family %s model %s, %s, %d cores" % (
        fields.get("model name", "unknown CPU"), fields.get("cpu family", "?"), fields.get("model", "?"),
        "native bfloat16 (%s)" % ",".join(native) if native else "no native bfloat16",
        len(os.sched_getaffinity(0)))


def preferred_dtype(cpuinfo_path="/proc/cpuinfo"):
    """"bfloat16" where the CPU has native bfloat16 arithmetic, else "float32"."""
    flags = cpu_flags(cpuinfo_path)
    return "bfloat16" if any(flag in flags for flag in NATIVE_BFLOAT16_FLAGS) else "float32"
