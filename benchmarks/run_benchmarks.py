"""The benchmark runner: runs benchmarks, each in a process of its own, and writes each run's results file.

    .venv/bin/python benchmarks/run_benchmarks.py            # `make benchmark`'s set
    .venv/bin/python benchmarks/run_benchmarks.py --benchmarks=lm_benchmark \
        --torch_python=/tmp/torch/bin/python -- --lm_shape=small --lm_dtypes=float32

What the results file holds and how a failure is recorded: docs/performance.md, section "Running the benchmarks".
"""

import contextlib
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402

ROOT = harness.REPO_ROOT
# `make benchmark`'s set, in its order; the others run when named.
DEFAULT_BENCHMARKS = ("tokenization_benchmark", "feature_conversion_benchmark", "model_benchmark",
                      "create_pretraining_data_benchmark", "pretraining_step_benchmark", "inference_benchmark",
                      "demo_benchmark")
ALL_BENCHMARKS = DEFAULT_BENCHMARKS + ("lm_benchmark", "nmt_benchmark", "dense_gradient_benchmark",
                                       "small_scale_profile", "saved_model_load_benchmark")
# The benchmarks with a PyTorch peer, which take --torch_python.
TAKES_TORCH_PYTHON = ("pretraining_step_benchmark", "inference_benchmark", "lm_benchmark", "nmt_benchmark")

flags.DEFINE_list("benchmarks", list(DEFAULT_BENCHMARKS),
                  "The benchmarks to run, by script name without .py: %s." % ", ".join(ALL_BENCHMARKS))
flags.register_validator("benchmarks", lambda names: set(names) <= set(ALL_BENCHMARKS),
                         "unknown benchmark; expected some of " + ", ".join(ALL_BENCHMARKS))
flags.DEFINE_string("results_dir", os.path.join(ROOT, "benchmarks", "results"),
                    "Where each run's results file is written, under a folder per benchmark.")
harness.define_torch_python_flag()  # Passed on to the benchmarks with a PyTorch peer.
FLAGS = flags.FLAGS


def command_of(name, torch_python=None, extra=()):
    """The command line of one benchmark, run with this interpreter; --torch_python goes to those with a peer."""
    torch = ["--torch_python=" + torch_python] if torch_python and name in TAKES_TORCH_PYTHON else []
    return [sys.executable, os.path.join("benchmarks", name + ".py")] + torch + list(extra)


def run_one(name, command, results_dir, now=None, cwd=ROOT):
    """Runs one benchmark, printing its output live; writes its results file and returns (path, status)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    print("== %s: %s" % (name, " ".join(command)), flush=True)
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = ""
    for line in process.stdout:
        print(line, end="", flush=True)
        output += line
    status = process.wait()
    commit = "unknown (not a git checkout)"
    with contextlib.suppress(OSError):
        commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True,
                                check=False).stdout.strip() or commit
    started = now.strftime("%Y-%m-%d %H:%M UTC")
    header = ["# %s, %s" % (name, started), "", "- date: " + started, "- machine: " + harness.machine(),
              "- load average at the end (1/5/15 min): " + harness.load_average(), "- commit: " + commit,
              "- command: `python %s`" % " ".join(command[1:]),
              "- exit status: %d%s" % (status, " (failed: the output below says why)" if status else ""), "", "```"]
    path = os.path.join(results_dir, name, now.strftime("%Y-%m-%dT%H%M%SZ") + ".md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".incomplete", "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n" + output + "\n" * (output[-1:] not in ("", "\n")) + "```\n")
    os.replace(path + ".incomplete", path)
    print("== %s: exit status %d, results in %s" % (name, status, path), flush=True)
    return path, status


def main(argv):
    if argv[1:] and len(FLAGS.benchmarks) != 1:
        raise app.UsageError("Flags after -- go to one benchmark; name one with --benchmarks.")
    failed = [name for name in FLAGS.benchmarks
              if run_one(name, command_of(name, FLAGS.torch_python, argv[1:]), FLAGS.results_dir)[1] != 0]
    if failed:
        sys.exit("failed: " + ", ".join(failed))


if __name__ == "__main__":
    app.run(main)
