"""Helpers shared by the benchmark scripts: machine description, statistics."""

import os
import platform
import statistics


def cpu_model():
    """The CPU model name from /proc/cpuinfo, or platform.processor()."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags(wanted=("avx512f", "avx512_bf16", "amx_bf16", "amx_tile")):
    """The subset of `wanted` CPU flags that /proc/cpuinfo lists."""
    from training import compute_dtype  # pylint: disable=import-outside-toplevel

    present = compute_dtype.cpu_flags()
    return [flag for flag in wanted if flag in present]


def usable_cpus():
    """What `nproc` prints: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def machine_lines(tf_version):
    """Lines describing the machine, printed at the top of each benchmark."""
    flags = cpu_flags()
    lines = [
        "machine: nproc=%d, cpu=%s, flags=%s"
        % (usable_cpus(), cpu_model(), ",".join(flags) or "-"),
        "software: python %s, tensorflow %s" % (platform.python_version(), tf_version),
    ]
    try:
        load = os.getloadavg()
        lines.append("load average (1/5/15 min): %.2f %.2f %.2f" % load)
    except OSError:
        pass
    return lines


def median_and_spread(values):
    """Returns (median, spread), spread = (max - min) / median, a fraction."""
    median = statistics.median(values)
    spread = (max(values) - min(values)) / median if median else 0.0
    return median, spread


def format_table(header, rows):
    """Formats rows (sequences of str) under header as aligned columns."""
    widths = [len(cell) for cell in header]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row)]
    lines = []
    for index, row in enumerate([header] + list(rows)):
        lines.append("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)
