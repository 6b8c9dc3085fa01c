"""How long `make demo` takes on a fresh clone, set-up included, stage by stage.

By default this clones the
repository's HEAD into a temporary directory and times, there, the set-up
(`.venv` and its packages, as a newcomer's first `make demo` makes them) and
then `make demo`; the demo's own stages come from the stage_times.json it
writes (demo/commands.py). --demo_stage_times reports an existing run's file
instead (no run).

  python benchmarks/demo_benchmark.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import harness  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("demo_stage_times", None, "Report this stage_times.json of a finished demo instead of "
                    "running one.")
flags.DEFINE_float("demo_setup_seconds", None, "With --demo_stage_times: the set-up time to add, if known.")
flags.DEFINE_string("demo_clone_dir", None, "Where to clone (kept afterwards). Default: a temporary "
                    "directory, removed afterwards.")

_VENV_STAMP = ".venv/.installed-requirements"  # the Makefile's set-up target for the demo


def _timed(command, cwd, log_path):
    """Runs command in cwd, its output to log_path; returns the wall time in seconds."""
    print("$ %s  (in %s, log: %s)" % (" ".join(command), cwd, log_path), flush=True)
    start = time.time()
    with open(log_path, "w", encoding="utf-8") as log:
        returncode = subprocess.call(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    if returncode != 0:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            print(f.read()[-3000:])
        raise SystemExit("demo_benchmark: `%s` failed (exit %d); log: %s" % (" ".join(command), returncode, log_path))
    return time.time() - start


def run_fresh_clone(clone_dir):
    """Clones HEAD into clone_dir, times the set-up and `make demo`; returns (setup s, demo s, stage times)."""
    commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=harness.REPO_ROOT, text=True).strip()
    subprocess.check_call(["git", "clone", "--quiet", harness.REPO_ROOT, clone_dir])
    print("fresh clone of %s (HEAD; uncommitted changes are not in it) in %s" % (commit, clone_dir))
    setup = _timed(["make", _VENV_STAMP], clone_dir, os.path.join(clone_dir, "setup.log"))
    demo = _timed(["make", "demo"], clone_dir, os.path.join(clone_dir, "demo.log"))
    with open(os.path.join(clone_dir, "demo_output", "stage_times.json"), encoding="utf-8") as f:
        return setup, demo, json.load(f)


def report(stage_times, setup_seconds=None, demo_seconds=None):
    """The table of stages and the total in minutes, as printed."""
    rows = []
    if setup_seconds is not None:
        rows.append(("set-up (.venv and packages)", setup_seconds))
    rows += [(stage["name"], stage["seconds"]) for stage in stage_times["stages"]]
    inside = sum(stage["seconds"] for stage in stage_times["stages"])
    demo_seconds = demo_seconds if demo_seconds is not None else stage_times["total_seconds"]
    rows.append(("start-up, imports and the rest", max(0.0, demo_seconds - inside)))
    total = demo_seconds + (setup_seconds or 0.0)
    lines = [harness.format_table(
        ("stage", "seconds", "share"),
        [(name, "%.1f" % seconds, "%.0f%%" % (100 * seconds / total)) for name, seconds in rows]
        + [("total" + (", set-up included" if setup_seconds is not None else ", set-up NOT included"),
            "%.1f" % total, "100%")])]
    lines.append("the demo on a fresh clone, set-up included: %.1f min%s" % (
        total / 60, "" if setup_seconds is not None else " (set-up unknown, not counted)"))
    return "\n".join(lines)


def main(argv):
    del argv
    harness.print_header("Demo benchmark: `make demo` on a fresh clone, set-up included, stage by stage")
    if FLAGS.demo_stage_times:
        with open(FLAGS.demo_stage_times, encoding="utf-8") as f:
            stage_times = json.load(f)
        print("stage times of a finished demo: %s" % FLAGS.demo_stage_times)
        print(report(stage_times, FLAGS.demo_setup_seconds))
        return 0
    clone_dir = FLAGS.demo_clone_dir or os.path.join(tempfile.mkdtemp(prefix="demo_benchmark_"), "clone")
    try:
        setup, demo, stage_times = run_fresh_clone(clone_dir)
        print(report(stage_times, setup, demo))
    finally:
        if not FLAGS.demo_clone_dir:
            shutil.rmtree(os.path.dirname(clone_dir), ignore_errors=True)
    return 0


if __name__ == "__main__":
    app.run(main)
