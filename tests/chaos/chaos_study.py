"""A study killed at random moments loses nothing: the chaos test of the study engine.

  python tests/chaos/chaos_study.py --cycles=50 --seed=1 --work_dir=/tmp/chaos --report=chaos.md

One cycle runs a micro study (`freezing_lm`'s first three rows at a micro
scale, every run writing checkpoints, the first row learning the vocabulary
the others read, each finished run kept in --runs_dir, the report written
at the end) in a process of its own, SIGKILLs it at a moment drawn
uniformly from the uninterrupted run's duration, and starts it again with
the same command, until one attempt finishes. Kills land anywhere: during
the imports, a vocabulary step, a checkpoint write, a dev evaluation, an
archive copy, the report's writing. The seeded generator draws the kill
times, so a failing cycle replays.

After a cycle, everything must equal the uninterrupted run's: results.json
and results.md (paths aside), the kept runs in --runs_dir (file for file),
and each run's final checkpoint (tensor for tensor, bit for bit). At some
kills (one in --probe_every) a copy of the half-run folder is also run to its
end on other training text: it must be refused naming the flag, or, where
no step had recorded its inputs yet, report exactly what an uninterrupted run
on that other text reports. Never old results as new.

The child (`--child SPEC`) applies the micro scale and runs
reproduce_paper_tables.py's job (studies.run) in process.
"""

import dataclasses
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from training import onednn  # noqa: E402  pylint: disable=wrong-import-position

onednn.enable()  # before TensorFlow loads, as every entry point

import numpy as np  # noqa: E402  pylint: disable=wrong-import-position
import tensorflow as tf  # noqa: E402  pylint: disable=wrong-import-position
from absl import app, flags, logging  # noqa: E402  pylint: disable=wrong-import-position

import studies  # noqa: E402  pylint: disable=wrong-import-position
from checkpoints import training_checkpoint  # noqa: E402  pylint: disable=wrong-import-position
from studies.lm import experiments as lm_experiments  # noqa: E402  pylint: disable=wrong-import-position

EXPERIMENT = "freezing_lm"
ROWS = 3
# Two layers of d = 16, 6 steps with a checkpoint every 2: a run takes seconds after the imports.
MICRO = dataclasses.replace(lm_experiments.TINY, num_layers=1, shrink=16, vocab_size=40, max_seq_length=16,
                            train_batch_size=8, num_train_steps=6, num_warmup_steps=1, save_checkpoints_steps=2)
WORDS = "the a cat dog sat ran on mat log big small red blue and then it was seen by her".split()
REFUSED = re.compile(r"ValueError: Step \S+ (finished|started) earlier with other inputs: --train_file was ")
# Files that say when and where a run ran, not what it computed.
MACHINE_SUFFIX = ".machine.json"


def write_text(path, count, seed):
    """`count` random lines of WORDS."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(count):
            f.write(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10))) + "\n")
    return path


def make_data(directory):
    """{train_file, eval_file, test_file} and the other training text of the probes."""
    os.makedirs(directory, exist_ok=True)
    files = dict(train_file=write_text(os.path.join(directory, "train.txt"), 300, 1),
                 eval_file=write_text(os.path.join(directory, "eval.txt"), 20, 2),
                 test_file=write_text(os.path.join(directory, "test.txt"), 20, 3))
    return files, write_text(os.path.join(directory, "other_train.txt"), 300, 4)


def child(spec):
    """The study in this process, at the micro scale (the child's side of `run_study`)."""
    values = json.loads(spec)
    lm_experiments.SCALES["tiny"] = MICRO
    study = lm_experiments.EXPERIMENTS[EXPERIMENT]
    lm_experiments.EXPERIMENTS[EXPERIMENT] = dataclasses.replace(study, rows=study.rows[:ROWS])
    logging.set_verbosity(logging.INFO)
    studies.run(studies.ReproduceOptions(experiment=EXPERIMENT, scale="tiny", **values))


def run_study(values, log, kill_after=None):
    """Runs the study as a process; SIGKILLs its process group after `kill_after` seconds unless it ended.

    Returns:
      (exit code, killed: whether it was still running when killed).
    """
    with open(log, "a", encoding="utf-8") as f:
        f.write("=== %s kill_after=%s\n" % (time.strftime("%H:%M:%S"), kill_after))
        f.flush()
        process = subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, os.path.abspath(__file__), "--child", json.dumps(values)], cwd=ROOT,
            stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=kill_after)
            return code, False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return process.wait(), True


def _normalise(text, *folders):
    for folder in folders:
        text = text.replace(folder, "<out>")
    return text


def report_files(output_dir):
    """results.json and results.md of a finished study, its folder's path replaced by <out>."""
    return {name: _normalise(open(os.path.join(output_dir, name), encoding="utf-8").read(), output_dir)
            for name in ("results.json", "results.md")}


def kept_files(runs_dir):
    """{relative path: bytes} of the kept runs (the machine records aside)."""
    found = {}
    for directory, _, names in os.walk(runs_dir):
        for name in names:
            if not name.endswith(MACHINE_SUFFIX):
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    found[os.path.relpath(path, runs_dir)] = f.read()
    return found


def final_checkpoints(output_dir):
    """{run folder: {variable: array}} of each run's newest training checkpoint."""
    found = {}
    for directory, _, _ in os.walk(output_dir):
        latest = training_checkpoint.latest(directory)
        if latest:
            reader = tf.train.load_checkpoint(latest)
            found[os.path.relpath(directory, output_dir)] = (
                os.path.basename(latest), {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()})
    return found


def differences(reference, chaos):
    """What differs between two finished studies ({"output_dir", "runs_dir"} each): a list of lines."""
    found = []
    for name, text in report_files(reference["output_dir"]).items():
        if report_files(chaos["output_dir"])[name] != text:
            found.append("%s differs" % name)
    expected, got = kept_files(reference["runs_dir"]), kept_files(chaos["runs_dir"])
    for path in sorted(set(expected) | set(got)):
        if expected.get(path) != got.get(path):
            found.append("kept file %s %s" % (path, "missing" if path not in got else "extra" if path not in expected
                                               else "differs"))
    expected, got = final_checkpoints(reference["output_dir"]), final_checkpoints(chaos["output_dir"])
    if sorted(expected) != sorted(got):
        found.append("runs with checkpoints: %s, expected %s" % (sorted(got), sorted(expected)))
    for run in sorted(set(expected) & set(got)):
        (name, tensors), (other_name, other) = expected[run], got[run]
        if name != other_name or sorted(tensors) != sorted(other):
            found.append("%s: checkpoint %s, expected %s" % (run, other_name, name))
            continue
        for variable, value in tensors.items():
            if not np.array_equal(value, other[variable]):
                found.append("%s: %s differs in checkpoint %s" % (run, variable, name))
    return found


class Chaos:
    """The cycles of one seeded chaos run, in `work_dir`."""

    def __init__(self, work_dir, seed, probe_every=4):
        self.work_dir = os.path.abspath(work_dir)
        self.rng = random.Random(seed)
        self.probe_every = probe_every
        self.data, self.other_train = make_data(os.path.join(self.work_dir, "data"))
        self.stats = dict(cycles=0, kills=0, attempts=0, probes=0, refused=0, accepted=0, failures=[])
        self.reference = self._uninterrupted("reference", self.data)
        self.reference_other = None
        self.duration = self.reference["seconds"]

    def _folders(self, name):
        base = os.path.join(self.work_dir, name)
        shutil.rmtree(base, ignore_errors=True)
        return dict(output_dir=os.path.join(base, "out"), runs_dir=os.path.join(base, "runs"))

    def _uninterrupted(self, name, data):
        folders = self._folders(name)
        start = time.time()
        code, _ = run_study(dict(data, **folders), os.path.join(self.work_dir, name + ".log"))
        if code:
            raise RuntimeError("The uninterrupted %s run failed (exit code %d): see %s.log" % (name, code, name))
        return dict(folders, seconds=time.time() - start)

    def _probe(self, folders, cycle):
        """Runs a copy of the half-run study on other training text; records a failure if it lies."""
        self.stats["probes"] += 1
        probe = {key: value + "_probe" for key, value in folders.items()}
        for key in probe:
            shutil.rmtree(probe[key], ignore_errors=True)
            if os.path.exists(folders[key]):
                shutil.copytree(folders[key], probe[key], symlinks=True)
        log = os.path.join(self.work_dir, "cycle%d_probe.log" % cycle)
        if os.path.exists(log):
            os.remove(log)
        code, _ = run_study(dict(self.data, train_file=self.other_train, output_dir=probe["output_dir"],
                                 runs_dir=probe["runs_dir"]), log)
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if code and REFUSED.search(text):
            self.stats["refused"] += 1
        elif code == 0:
            self.stats["accepted"] += 1
            if self.reference_other is None:
                self.reference_other = self._uninterrupted("reference_other", dict(self.data, train_file=self.other_train))
            if report_files(probe["output_dir"]) != report_files(self.reference_other["output_dir"]):
                self.stats["failures"].append("cycle %d: a re-run on other text reported other figures than an "
                                              "uninterrupted run on that text (%s)" % (cycle, log))
        else:
            self.stats["failures"].append("cycle %d: a re-run on other text failed without refusing (exit %d, %s)"
                                          % (cycle, code, log))
        for key in probe:
            shutil.rmtree(probe[key], ignore_errors=True)

    def cycle(self, max_attempts=60):
        """Kills and re-runs the study until it finishes, then compares it with the reference."""
        self.stats["cycles"] += 1
        number = self.stats["cycles"]
        folders = self._folders("cycle")
        log = os.path.join(self.work_dir, "cycle%d.log" % number)
        if os.path.exists(log):
            os.remove(log)
        for _ in range(max_attempts):
            self.stats["attempts"] += 1
            kill_after = self.rng.uniform(0, self.duration)
            code, killed = run_study(dict(self.data, **folders), log, kill_after)
            if not killed:
                if code:
                    self.stats["failures"].append("cycle %d: a re-run failed (exit code %d): %s" % (number, code, log))
                    return
                break
            self.stats["kills"] += 1
            if self.rng.randrange(self.probe_every) == 0:
                self._probe(folders, number)
        else:
            self.stats["failures"].append("cycle %d: unfinished after %d attempts: %s" % (number, max_attempts, log))
            return
        for line in differences(self.reference, folders):
            self.stats["failures"].append("cycle %d: %s (%s)" % (number, line, log))


FLAGS = flags.FLAGS


def define_flags():
    flags.DEFINE_integer("cycles", 3, "Cycles: the study killed and re-run until it finishes, then compared.")
    flags.DEFINE_integer("seed", 1, "Seed of the kill times and of the probes.")
    flags.DEFINE_integer("probe_every", 4, "On average one kill in this many is followed by a re-run on other text.")
    flags.DEFINE_string("work_dir", None, "Where the runs go (emptied first).", required=True)
    flags.DEFINE_string("report", None, "Also write the summary (markdown) here.")


def summary_lines(stats, seconds, seed, cycles):
    return [
        "chaos test of the study engine: seed %d, %d cycle(s) of %s's first %d rows at a micro scale, %.0f s"
        % (seed, cycles, EXPERIMENT, ROWS, seconds),
        "kills %d in %d attempts; re-runs on other text %d: %d refused naming --train_file, %d accepted (nothing "
        "recorded yet) with an uninterrupted run's figures" % (stats["kills"], stats["attempts"], stats["probes"],
                                                               stats["refused"], stats["accepted"]),
        "failures: %d" % len(stats["failures"]),
    ] + ["  " + line for line in stats["failures"]]


def main(argv):
    if len(argv) > 1:
        raise app.UsageError("Unexpected arguments: %s" % " ".join(argv[1:]))
    shutil.rmtree(FLAGS.work_dir, ignore_errors=True)
    start = time.time()
    chaos = Chaos(FLAGS.work_dir, FLAGS.seed, FLAGS.probe_every)
    for number in range(1, FLAGS.cycles + 1):
        chaos.cycle()
        print("cycle %d of %d: %d kills so far, %d failure(s); elapsed %.0f s" % (
            number, FLAGS.cycles, chaos.stats["kills"], len(chaos.stats["failures"]), time.time() - start), flush=True)
    lines = summary_lines(chaos.stats, time.time() - start, FLAGS.seed, FLAGS.cycles)
    print("\n".join(lines))
    if FLAGS.report:
        with open(FLAGS.report, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if chaos.stats["failures"] else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        define_flags()
        app.run(main)
