"""How the demos run the entry points: the command line printed first, its output to a log.

`run` runs one command; `run_together` runs several at once (the demo's
fine-tunings share 2 cores better side by side than one after another);
`Stages` times the demo's stages and writes them to stage_times.json, which
benchmarks/demo_benchmark.py prints.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE_TIMES = "stage_times.json"


def fresh_output_dir(output_dir, keep):
    """Empties output_dir but for the names in `keep`, so that a demo's training commands start
    afresh instead of resuming the previous demo's runs."""
    if not os.path.isdir(output_dir):
        return
    for name in os.listdir(output_dir):
        if name not in keep:
            path = os.path.join(output_dir, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def python(script, **flag_values):
    """[this interpreter, ROOT/script, --flag=value ...]."""
    command = [sys.executable, os.path.join(ROOT, script)]
    return command + ["--%s=%s" % (k, v) for k, v in flag_values.items()]


def _printable(command):
    return "\n$ " + " \\\n    ".join(command)


def _failed(command, log_path, returncode):
    with open(log_path, encoding="utf-8", errors="replace") as f:
        print(f.read()[-5000:])
    raise SystemExit("demo: `%s` failed (exit %d); its log: %s" % (" ".join(command[:2]), returncode, log_path))


def run(command, log_path):
    """Prints and runs a command line, its output to log_path; returns that output.

    Raises:
      SystemExit: when the command fails, after printing its last lines.
    """
    print(_printable(command), flush=True)
    start = time.time()
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        returncode = subprocess.call(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    if returncode != 0:
        _failed(command, log_path, returncode)
    print("  done in %.0f s, log: %s" % (time.time() - start, log_path), flush=True)
    with open(log_path, encoding="utf-8") as f:
        return f.read()


def run_together(commands):
    """Runs [(command, log_path)] side by side; returns when all are done.

    Raises:
      SystemExit: when one fails (the others are stopped first).
    """
    for command, _ in commands:
        print(_printable(command), flush=True)
    print("  (these %d run side by side)" % len(commands), flush=True)
    start = time.time()
    running = []
    for command, log_path in commands:
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
        log = open(log_path, "w", encoding="utf-8")  # pylint: disable=consider-using-with
        running.append((command, log_path, log,
                        subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)))
    failed = None
    pending = list(running)
    while pending and not failed:
        for item in list(pending):
            command, log_path, _, process = item
            if process.poll() is None:
                continue
            pending.remove(item)
            if process.returncode != 0:
                failed = item
            else:
                print("  %s done in %.0f s, log: %s" % (os.path.basename(command[1]), time.time() - start, log_path),
                      flush=True)
        time.sleep(0.2)
    for command, log_path, log, process in running:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    if failed:
        _failed(failed[0], failed[1], failed[3].returncode)


class Stages:
    """Wall time per named stage, in order."""

    def __init__(self):
        self.seconds = {}
        self._started = time.time()

    @contextlib.contextmanager
    def stage(self, name):
        start = time.time()
        yield
        self.seconds[name] = time.time() - start

    def total(self):
        return time.time() - self._started

    def write(self, output_dir):
        """Writes output_dir/stage_times.json: {"stages": [{"name", "seconds"}], "total_seconds"}."""
        path = os.path.join(output_dir, STAGE_TIMES)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"stages": [{"name": name, "seconds": round(seconds, 1)}
                                  for name, seconds in self.seconds.items()],
                       "total_seconds": round(self.total(), 1)}, f, indent=2)
        return path
