"""How long `make demo` takes on a fresh clone, set-up included, stage by stage (how: docs/demo.md, "Time").

  python benchmarks/demo_benchmark.py [--demo_stage_times=demo_output/stage_times.json]
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("demo_stage_times", None, "Report this stage_times.json of a finished demo instead of running one.")
flags.DEFINE_float("demo_setup_seconds", None, "With --demo_stage_times: the set-up time to add, if known.")
flags.DEFINE_string("demo_clone_dir", None, "Where to clone (kept). Default: a temporary directory, removed after.")


def make(target, clone_dir, log_name):
    """Runs `make target` in clone_dir, its output to clone_dir/log_name; returns its wall time in seconds."""
    log_path = os.path.join(clone_dir, log_name)
    print("$ make %s  (in %s, log: %s)" % (target, clone_dir, log_path), flush=True)
    start = time.time()
    with open(log_path, "w+", encoding="utf-8") as log:
        if code := subprocess.call(["make", target], cwd=clone_dir, stdout=log, stderr=subprocess.STDOUT):
            log.seek(0)
            raise SystemExit("%s\ndemo_benchmark: `make %s` failed (exit %d); log: %s" % (
                log.read()[-3000:], target, code, log_path))
    return time.time() - start


def report(stage_times, setup_seconds=None, demo_seconds=None):
    """The table of the stages (the set-up first if known) and the total in minutes, as printed."""
    stages = [(stage["name"], stage["seconds"]) for stage in stage_times["stages"]]
    demo_seconds = stage_times["total_seconds"] if demo_seconds is None else demo_seconds
    total, known = demo_seconds + (setup_seconds or 0.0), setup_seconds is not None
    rows = ([("set-up (.venv and packages)", setup_seconds)] if known else []) + stages + [
        ("start-up, imports and the rest", max(0.0, demo_seconds - sum(seconds for _, seconds in stages))),
        ("total, set-up " + ("included" if known else "NOT included"), total)]
    cells = [(name, "%.1f" % seconds, "%.0f%%" % (100 * seconds / total)) for name, seconds in rows]
    return "%s\nthe demo on a fresh clone, set-up included: %.1f min%s" % (harness.format_table(
        ("stage", "seconds", "share"), cells), total / 60, "" if known else " (set-up unknown, not counted)")


def main(_):
    harness.print_header("Demo benchmark: `make demo` on a fresh clone, set-up included, stage by stage")
    with tempfile.TemporaryDirectory(prefix="demo_benchmark_", ignore_cleanup_errors=True) as directory:
        path, setup, demo = FLAGS.demo_stage_times, FLAGS.demo_setup_seconds, None
        if not path:
            clone_dir = FLAGS.demo_clone_dir or os.path.join(directory, "clone")
            commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=harness.REPO_ROOT, text=True)
            subprocess.check_call(["git", "clone", "--quiet", harness.REPO_ROOT, clone_dir])
            print("fresh clone of %s (HEAD; uncommitted changes are not in it) in %s" % (commit.strip(), clone_dir))
            setup = make(".venv/.installed-requirements", clone_dir, "setup.log")  # the Makefile's set-up target
            demo = make("demo", clone_dir, "demo.log")
            path = os.path.join(clone_dir, "demo_output", "stage_times.json")
        print("stage times of a finished demo: %s" % path)
        with open(path, encoding="utf-8") as f:
            print(report(json.load(f), setup, demo))
    return 0


if __name__ == "__main__":
    app.run(main)
