"""The benchmark runner: runs benchmarks and writes each run's figures to a results file.

    .venv/bin/python benchmarks/run_benchmarks.py            # `make benchmark`'s set
    .venv/bin/python benchmarks/run_benchmarks.py --benchmarks=lm_benchmark \
        --torch_python=/tmp/torch/bin/python -- --lm_shape=small --lm_dtypes=float32

Each benchmark runs as a process of its own, its output printed as it comes.
The runner then writes `<results_dir>/<benchmark>/<UTC date and time>.md`:
the date, the machine (CPU model, family and model, the vector and bfloat16
flags, usable CPUs, memory, load), the commit, the command and its exit
status, then the benchmark's output as printed. docs/performance.md shows the
latest file of each benchmark; the files before it are the history. A
benchmark that fails still gets its file (its status says so), and the runner
exits non-zero after running the others.
"""

import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402

ROOT = harness.REPO_ROOT
# `make benchmark`'s set, in its order; the others run when named.
DEFAULT_BENCHMARKS = (
    "tokenization_benchmark", "feature_conversion_benchmark", "model_benchmark",
    "create_pretraining_data_benchmark", "pretraining_step_benchmark", "inference_benchmark",
    "demo_benchmark",
)
ALL_BENCHMARKS = DEFAULT_BENCHMARKS + (
    "lm_benchmark", "nmt_benchmark", "dense_gradient_benchmark", "small_scale_profile", "saved_model_load_benchmark",
)
# The benchmarks with a PyTorch peer, which take --torch_python.
TAKES_TORCH_PYTHON = ("pretraining_step_benchmark", "inference_benchmark", "lm_benchmark", "nmt_benchmark")

flags.DEFINE_list("benchmarks", list(DEFAULT_BENCHMARKS),
                  "The benchmarks to run, by script name without .py: %s." % ", ".join(ALL_BENCHMARKS))
flags.DEFINE_string("results_dir", os.path.join(ROOT, "benchmarks", "results"),
                    "Where each run's results file is written, under a folder per benchmark.")
harness.define_torch_python_flag()  # Passed on to the benchmarks with a PyTorch peer.
FLAGS = flags.FLAGS


def _commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, check=True).stdout.strip()
        return out or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def command_of(name, torch_python=None, extra=()):
    """The command line of one benchmark, run with this interpreter."""
    if name not in ALL_BENCHMARKS:
        raise ValueError("--benchmarks: unknown benchmark %r; expected some of %s."
                         % (name, ", ".join(ALL_BENCHMARKS)))
    command = [sys.executable, os.path.join("benchmarks", name + ".py")]
    if torch_python and name in TAKES_TORCH_PYTHON:
        command.append("--torch_python=" + torch_python)
    return command + list(extra)


def run_one(name, command, results_dir, now=None, cwd=ROOT):
    """Runs one benchmark, printing its output live; writes its results file and returns (path, status)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    started = now.strftime("%Y-%m-%d %H:%M UTC")
    print("== %s: %s" % (name, " ".join(command)), flush=True)
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    status = process.wait()
    folder = os.path.join(results_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, now.strftime("%Y-%m-%dT%H%M%SZ") + ".md")
    header = [
        "# %s, %s" % (name, started),
        "",
        "- date: %s" % started,
        "- machine: %s" % harness.machine(),
        "- load average at the end (1/5/15 min): %s" % harness.load_average(),
        "- commit: %s" % _commit(),
        "- command: `python %s`" % " ".join(command[1:]),
        "- exit status: %d%s" % (status, "" if status == 0 else " (failed: the output below says why)"),
        "",
        "```",
    ]
    with open(path + ".incomplete", "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n" + "".join(lines) + ("" if not lines or lines[-1].endswith("\n") else "\n")
                + "```\n")
    os.replace(path + ".incomplete", path)
    print("== %s: exit status %d, results in %s" % (name, status, path), flush=True)
    return path, status


def main(argv):
    extra = argv[1:]
    if extra and len(FLAGS.benchmarks) != 1:
        raise app.UsageError("Flags after -- go to one benchmark; name one with --benchmarks.")
    commands = [(name, command_of(name, FLAGS.torch_python, extra)) for name in FLAGS.benchmarks]
    failed = [name for name, command in commands if run_one(name, command, FLAGS.results_dir)[1] != 0]
    if failed:
        print("failed: %s" % ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    app.run(main)
