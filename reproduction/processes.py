"""Steps run several at once, each in a process of its own on its share of the cores (--parallel_runs).

N independent runs, each alone on its 1/N of the cores, finished 15-17%
sooner than the same runs one after the other on all of them for the small
LM and translation rows on 2 cores (docs/performance.md#runs-side-by-side):
threads split a small model's products less well than runs split the work.
Each child is
`python -m reproduction.step_process` (that module's docstring says how it
takes its cores); its log goes to <output_dir>/logs/<step>.log.

`core_shares(n)` splits this process's CPUs into n disjoint sets; a step
always gets the same share for a given n and machine, whatever else runs,
so its thread count, and with it its figures, do not depend on the order the
steps happen to finish in.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = "logs"


def usable_cores():
    """The CPU numbers this process may run on, in order."""
    return sorted(os.sched_getaffinity(0))


def core_shares(n, cores=None):
    """n lists of CPU numbers: the cores split as evenly as they go, or one core each, shared, when n > cores.

    Args:
      n: the number of processes, >= 1.
      cores: the CPU numbers (default: usable_cores()).
    """
    cores = usable_cores() if cores is None else list(cores)
    if n <= len(cores):
        return [cores[i * len(cores) // n:(i + 1) * len(cores) // n] for i in range(n)]
    return [[cores[i % len(cores)]] for i in range(n)]


def log_path(output_dir, step):
    """Where a step run in a child process logs: <output_dir>/logs/<step name, '/' as '_'>.log."""
    return os.path.join(output_dir, LOGS, step.name.replace("/", "_") + ".log")


class StepProcess:
    """A step running in a child process: started by `start`, polled by `finished`."""

    def __init__(self, step, options_class, run_function, cores, output_dir):
        self.step = step
        self.cores = cores
        self.log = log_path(output_dir, step)
        self._spec = dict(module=run_function.__module__, function=run_function.__qualname__,
                          options_module=options_class.__module__, options_class=options_class.__qualname__,
                          flags=step.flags, cores=cores, parent=os.getpid())
        self._process = None
        self._spec_file = None

    def start(self):
        os.makedirs(os.path.dirname(self.log), exist_ok=True)
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="step_", delete=False) as f:
            json.dump(self._spec, f)
            self._spec_file = f.name
        with open(self.log, "a", encoding="utf-8") as log:
            log.write("=== %s: %s on cores %s\n" % (time.strftime("%Y-%m-%d %H:%M:%S"), self.step.name,
                                                    ",".join(map(str, self.cores))))
            log.flush()
            self._process = subprocess.Popen(  # pylint: disable=consider-using-with
                [sys.executable, "-m", "reproduction.step_process", self._spec_file], cwd=ROOT,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))

    def finished(self):
        """None while running, else its exit code (the spec file removed)."""
        code = self._process.poll()
        if code is not None and self._spec_file:
            os.remove(self._spec_file)
            self._spec_file = None
        return code

    def stop(self):
        """Kills the child (a step resumes from its own checkpoints when run again) and waits for it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self.finished()

    def last_lines(self, count=15):
        """The end of its log, for an error message."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-count:])
        except OSError:
            return ""
