"""The faster training dtype of this CPU, for the demo's and the tiny reproductions' defaults.

bfloat16 mixed precision pays off on CPUs that multiply bfloat16 natively
(AVX512-BF16 or AMX): about 2.3x float32 for training on a Sapphire Rapids
core. Without them TensorFlow emulates it, and the small models of the demo
and the tiny scales ran about 2.5x slower in bfloat16 than in float32 (an
AMD EPYC without AVX-512, measured). Explicit --dtype flags are never changed.
"""

NATIVE_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")


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


def preferred_dtype(cpuinfo_path="/proc/cpuinfo"):
    """"bfloat16" where the CPU has native bfloat16 arithmetic, else "float32"."""
    flags = cpu_flags(cpuinfo_path)
    return "bfloat16" if any(flag in flags for flag in NATIVE_BFLOAT16_FLAGS) else "float32"
