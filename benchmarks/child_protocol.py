"""The child side of the turn-taking benchmarks, in the standard library only.

A benchmark child (a TensorFlow contender, or a PyTorch peer in another
interpreter) builds its contender, prints "@@bench ready <fields>", then runs
one round per "run" line on its stdin, printing "@@bench round <seconds>
<value>", and on "quit" prints "@@bench memory <VmHWM kB> <VmRSS kB>": its own
peak memory. Other output is ignored by the parent (child_processes.py).
"""

import resource
import sys
import time

TAG = "@@bench "


def say(*fields):
    print(TAG + " ".join(str(field) for field in fields), flush=True)


def memory_kb():
    """(VmHWM, VmRSS) of this process in kB from /proc/self/status."""
    values = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0])
    except OSError:
        pass
    # ru_maxrss is in kB on Linux; the fallback where /proc is missing.
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return values.get("VmHWM", maxrss), values.get("VmRSS", 0)


def serve(run_round, parameters, build_seconds):
    """Reports ready, runs `run_round()` -> (seconds, value) per "run", reports memory on "quit"."""
    say("ready", parameters, "%.1f" % build_seconds, memory_kb()[1])
    for line in sys.stdin:
        command = line.strip()
        if command == "run":
            seconds, value = run_round()
            say("round", "%.6f" % seconds, "%.6g" % value)
        elif command == "quit":
            break
    say("memory", *memory_kb())


def timed(function):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result
