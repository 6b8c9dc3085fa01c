"""Where the wall time of one small-scale row goes, end to end, as reproduce_paper_tables.py runs it.

  .venv/bin/python benchmarks/small_scale_profile.py --experiment=freezing_nmt --output_dir=/tmp/profile \
    --train_src=m30k/train.de --train_tgt=m30k/train.en --dev_src=m30k/val.de --dev_tgt=m30k/val.en \
    --test_src=m30k/test.de --test_tgt=m30k/test.en --source_language=de --target_language=en

The study is planned with reproduce_paper_tables.py's own flags (--scale=small
by default; any study, any scale), and the steps of one row and seed run in
this process exactly as the driver runs them (`reproduction.runner.run`). The
steps the row needs first and that every row shares (table2b's
create_pretraining_data) run before, and are timed on a line of their own.
Default row: the plan's first training step (freezing_nmt: the baseline,
seed 1; lm_figure1: h = 4 fixed, seed 1; table2b: dp32, seed 1, with its
held-out evaluation and probe). `--row=NAME --seed=S` picks another.

Timers wrap the library functions the phases run in (exclusive time: an
evaluation's checkpoint write counts as a checkpoint, not as evaluation), and
the table gives each phase's seconds and share of the row's wall time:

  process start and imports   from the process's start (/proc) to the imports' end
  vocabulary                  learning (or reading) the SentencePiece model
  training: tracing           the loop's first call, less its steps at the later calls' rate
  training: steps             every loop call but that estimate
  checkpoints                 training checkpoints, and the best-by-dev-BLEU copy
  evaluation: ...             scoring, beam search and sacreBLEU (translation),
                              held-out scoring (LM and BERT), the rank probe
  input checks                the scan of the training data before training
  other                       the rest: reading text, building models, records, logs

The input pipeline runs inside the compiled loop, where no timer can split it
from the steps; "input pipeline alone" under the table is the same dataset read
by itself afterwards (its seconds per batch against the steps'), which
`prefetch` overlaps with training.

Outputs go to --output_dir (emptied first: a profile must not resume). With
--code_dir the row runs with another checkout's code (e.g. a worktree of an
older commit) in a child process, after this checkout's, one after the other
for --rounds rounds, and both tables print with the row's result figures:
the way to compare a speed-up's wall time on this shared host.
"""

import dataclasses
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

_STARTED = time.time()
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CODE_DIR = os.environ.get("SMALL_SCALE_PROFILE_CODE_DIR", _REPO_ROOT)
if _CODE_DIR not in sys.path:
    sys.path.insert(0, _CODE_DIR)

from absl import app, flags, logging  # pylint: disable=wrong-import-position

from training import onednn  # pylint: disable=wrong-import-position

onednn.enable()  # as every entry point, before TensorFlow loads

import tensorflow  # noqa: F401  pylint: disable=wrong-import-position,unused-import  (timed with the imports)

import options as options_lib  # pylint: disable=wrong-import-position
import studies  # pylint: disable=wrong-import-position
from reproduction import runner, selection  # pylint: disable=wrong-import-position
from training import trainer as trainer_lib  # pylint: disable=wrong-import-position

_IMPORTED = time.time()

FLAGS = flags.FLAGS


def define_flags():
    """The study flags of reproduce_paper_tables.py (at --scale=small), then the profiler's own.

    Defined when run as a program only: the study flags (--do_lower_case, ...) would collide with
    those of the other benchmarks imported into the same test process.
    """
    options_lib.define_flags(studies.ReproduceOptions)
    FLAGS.set_default("scale", "small")
    flags.DEFINE_string("row", None, "The row to profile, as plan.md names it (default: the first trained row).")
    flags.DEFINE_integer("seed", None, "Its seed, at a scale with several (default: the first).")
    flags.DEFINE_string("code_dir", None, "Also profile the row with this checkout's code, in alternation.")
    flags.DEFINE_integer("rounds", 1, "Rounds with --code_dir: this checkout's run, then the other's.")
    flags.DEFINE_list("step_flags", [], "name=value flags added to the row's steps, e.g. jit_compile=true.")
    flags.DEFINE_string("profile_json", None, "Write the timings here too (used by --code_dir's child).")


# (module, attribute path, phase): the functions the phases run in.
HOOKS = (
    ("tokenization.sentencepiece_vocabulary", "get", "vocabulary"),
    ("training.trainer", "Trainer.run_steps", "training"),
    ("training.trainer", "Trainer.save", "checkpoints"),
    ("checkpoints.tf1_checkpoint", "write_tensors", "checkpoints"),
    ("nmt.task", "Translator.__init__", None),  # wraps the instance's compiled functions, below
    ("nmt.metrics", "corpus_scores", "evaluation: sacreBLEU"),
    ("nmt.dataset", "count_too_long", "input checks"),
    ("lm.task", "score", "evaluation: held-out scoring"),
    ("modeling.pretraining", "evaluate", "evaluation: held-out scoring"),
    ("modeling.pretraining_input", "check_record_lengths", "input checks"),
)
PHASES = ("process start and imports", "vocabulary", "training: tracing", "training: steps", "checkpoints",
          "evaluation: teacher-forced scoring", "evaluation: beam search", "evaluation: sacreBLEU",
          "evaluation: held-out scoring", "evaluation: rank probe", "input checks", "other")


class Stopwatch:
    """Exclusive seconds per phase: a timed call inside another counts for its own phase only."""

    def __init__(self):
        self.seconds = {}
        self.training_calls = []  # (steps, seconds) of every training loop call
        self._children = [0.0]

    def timed(self, phase, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            self._children.append(0.0)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                inner = self._children.pop()
                self._children[-1] += elapsed
                if phase == "training":
                    steps = args[1] if len(args) > 1 else kwargs["num_steps"]
                    self.training_calls.append((int(steps), elapsed - inner))
                else:
                    self.seconds[phase] = self.seconds.get(phase, 0.0) + elapsed - inner
        return wrapper

    def install(self):
        """Wraps every hook that exists in this checkout's code; returns the hooks missing."""
        missing = []
        for module_name, path, phase in HOOKS:
            try:
                owner = __import__(module_name, fromlist=["_"])
            except ImportError:
                missing.append("%s.%s" % (module_name, path))
                continue
            *parents, name = path.split(".")
            for parent in parents:
                owner = getattr(owner, parent, None)
            if owner is None or not hasattr(owner, name):
                missing.append("%s.%s" % (module_name, path))
                continue
            if phase is None:
                setattr(owner, name, self._translator_init(getattr(owner, name)))
            else:
                setattr(owner, name, self.timed(phase, getattr(owner, name)))
        return missing

    def _translator_init(self, init):
        stopwatch = self

        @functools.wraps(init)
        def wrapper(translator, *args, **kwargs):
            init(translator, *args, **kwargs)
            translator._translate = stopwatch.timed("evaluation: beam search", translator._translate)  # pylint: disable=protected-access
            translator._score = stopwatch.timed("evaluation: teacher-forced scoring", translator._score)  # pylint: disable=protected-access
        return wrapper

    def training_split(self):
        """(tracing, steps) seconds: the first loop call less its steps at the median rate of the others."""
        if not self.training_calls:
            return 0.0, 0.0
        total = sum(seconds for _, seconds in self.training_calls)
        first_steps, first_seconds = self.training_calls[0]
        later = [seconds / steps for steps, seconds in self.training_calls[1:] if steps]
        if not later:
            return 0.0, total
        tracing = max(0.0, first_seconds - first_steps * statistics.median(later))
        return tracing, total - tracing


def process_start_time():
    """The wall-clock time this process started (Linux /proc), else this module's import."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return _STARTED


def select_steps(plan_steps, row, seed):
    """(shared steps to run first, the row's steps) of the plan.

    Raises:
      ValueError: naming the rows the plan has when `row` is not one of them.
    """
    trained = [s for s in plan_steps if s.row]
    if not trained:
        raise ValueError("The plan has no row to profile.")
    rows = list(dict.fromkeys(s.row for s in trained))
    row = row or trained[0].row
    if row not in rows:
        raise ValueError("--row=%s is not in the plan; its rows: %s." % (row, ", ".join(rows)))
    seeds = [s.seed for s in trained if s.row == row]
    seed = seed if seed is not None else seeds[0]
    if seed not in seeds:
        raise ValueError("--seed=%s: row %s runs with seeds %s." % (seed, row, ", ".join(map(str, set(seeds)))))
    chosen = [s for s in trained if s.row == row and s.seed == seed]
    # The steps the row reads from (create_pretraining_data's records, the first row's vocabulary)
    # run first, as --rows brings them.
    _, added = selection.with_dependencies(plan_steps, {s.name for s in chosen})
    return [s for s in plan_steps if s.name in added], chosen


def input_seconds_per_batch(dataset, batches=30):
    """Seconds per batch of reading `dataset` alone (after 3 batches' warm-up)."""
    iterator = iter(dataset)
    for _ in range(3):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return (time.perf_counter() - start) / batches


def with_flags(step, step_flags, programs):
    """The step with `step_flags` (["name=value"]) added, where its entry point has that flag."""
    known = {field.name for field in dataclasses.fields(programs[step.program][0])}
    added = {}
    for item in step_flags:
        name, _, value = item.partition("=")
        if name in known:
            try:
                added[name] = json.loads(value.lower() if value.lower() in ("true", "false") else value)
            except ValueError:
                added[name] = value
    return dataclasses.replace(step, flags=dict(step.flags, **added))


def profile(reproduce_options, row, seed, step_flags=()):
    """Runs the row; returns a dict of the timings and the row's results."""
    stopwatch = Stopwatch()
    missing = stopwatch.install()
    captured = {}
    make_dataset = trainer_lib.Trainer._dataset  # pylint: disable=protected-access

    def measured_dataset(trainer):
        # Read alone with an iterator of its own (the training iterator is untouched), before the
        # steps; the time this takes is the profiler's and is left out of the row's phases.
        dataset = make_dataset(trainer)
        start = time.perf_counter()
        captured["input_seconds_per_batch"] = input_seconds_per_batch(dataset)
        captured["measuring_seconds"] = captured.get("measuring_seconds", 0.0) + time.perf_counter() - start
        return dataset

    trainer_lib.Trainer._dataset = measured_dataset  # pylint: disable=protected-access
    shutil.rmtree(reproduce_options.output_dir, ignore_errors=True)
    study = studies.STUDIES.get(reproduce_options.experiment)
    plan = study.plan(reproduce_options)
    needed, chosen = select_steps(plan.steps, row, seed)
    chosen = [with_flags(step, step_flags, study.programs()) for step in chosen]
    start = time.perf_counter()
    runner.run(needed, study.programs())
    shared = time.perf_counter() - start
    stopwatch.seconds.clear()
    stopwatch.training_calls.clear()
    per_step = {}
    for step in chosen:
        before = sum(stopwatch.seconds.values()) + sum(s for _, s in stopwatch.training_calls)
        step_start = time.perf_counter()
        runner.run([step], study.programs())
        elapsed = time.perf_counter() - step_start - captured.pop("measuring_seconds", 0.0)
        per_step[step.name] = elapsed
        if step.program == "probe_attention_rank.py":
            inner = sum(stopwatch.seconds.values()) + sum(s for _, s in stopwatch.training_calls) - before
            stopwatch.seconds["evaluation: rank probe"] = (
                stopwatch.seconds.get("evaluation: rank probe", 0.0) + elapsed - inner)
    row_seconds = sum(per_step.values())
    tracing, steps = stopwatch.training_split()
    phases = dict(stopwatch.seconds)
    phases["training: tracing"] = tracing
    phases["training: steps"] = steps
    phases["process start and imports"] = _IMPORTED - process_start_time()
    phases["other"] = row_seconds - sum(v for k, v in phases.items() if k != "process start and imports")
    num_steps = sum(n for n, _ in stopwatch.training_calls)
    result = dict(experiment=reproduce_options.experiment, scale=reproduce_options.scale,
                  steps=[s.name for s in chosen], shared_steps=[s.name for s in needed],
                  shared_seconds=shared, row_seconds=row_seconds + phases["process start and imports"],
                  phases=phases, per_step=per_step, training_steps=num_steps,
                  seconds_per_step=steps / num_steps if num_steps else None, missing_hooks=missing,
                  results=row_results(chosen))
    result["input_seconds_per_batch"] = captured.get("input_seconds_per_batch")
    return result


def row_results(chosen):
    """The figures of the row's result files ({file: {key: value}}), to check a speed-up changed none."""
    found = {}
    for step in chosen:
        for path in step.outputs:
            if path.endswith(".txt") and os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    found[os.path.relpath(path, os.path.dirname(os.path.dirname(path)))] = dict(
                        line.strip().split(" = ", 1) for line in f if " = " in line)
    return found


def table(result, title):
    lines = ["%s: %s %s scale, steps %s" % (title, result["experiment"], result["scale"],
                                           ", ".join(result["steps"])), "",
             "| phase | seconds | share |", "|---|---|---|"]
    total = result["row_seconds"]
    for phase in PHASES:
        seconds = result["phases"].get(phase)
        if seconds is not None and (seconds >= 0.05 or phase == "other"):
            lines.append("| %s | %.1f | %.0f%% |" % (phase, seconds, 100.0 * seconds / total))
    lines.append("| **row, end to end** | **%.1f** | 100%% |" % total)
    if result["shared_steps"]:
        lines.append("| (once per experiment: %s) | %.1f | |" % (", ".join(result["shared_steps"]),
                                                               result["shared_seconds"]))
    lines.append("")
    if result.get("seconds_per_step"):
        lines.append("training: %d steps, %.1f ms a step" % (result["training_steps"],
                                                          1000 * result["seconds_per_step"]))
    if result.get("input_seconds_per_batch"):
        lines.append("input pipeline alone: %.1f ms a batch (read before training; prefetch overlaps it with the steps)"
                     % (1000 * result["input_seconds_per_batch"]))
    if result["missing_hooks"]:
        lines.append("not in this code (its phase counts as other): %s" % ", ".join(result["missing_hooks"]))
    return "\n".join(lines)


RESULT_KEYS = re.compile(r"^(bleu|chrf|loss|perplexity|masked_lm_accuracy|masked_lm_loss|global_step|best_bleu)$")


def results_line(result):
    parts = []
    for name, values in sorted(result["results"].items()):
        shown = ", ".join("%s %s" % (k, v) for k, v in sorted(values.items()) if RESULT_KEYS.match(k))
        if shown:
            parts.append("%s: %s" % (name, shown))
    return "; ".join(parts)


def child_command(argv, code_dir, output_dir, profile_json):
    """This script with the same flags, run with `code_dir`'s code into its own output_dir."""
    args = [a for a in argv[1:] if not re.match(r"--(code_dir|rounds|output_dir|profile_json)=", a)]
    return ([sys.executable, os.path.abspath(__file__)] + args +
            ["--output_dir=%s" % output_dir, "--profile_json=%s" % profile_json])


def main(argv):
    reproduce_options = options_lib.from_flags(studies.ReproduceOptions)
    if not FLAGS.code_dir:
        if not FLAGS.profile_json:  # Not in --code_dir's children: their code (another checkout's) may have no harness.
            from benchmarks import harness  # pylint: disable=import-outside-toplevel

            harness.print_header("Small-scale profile: where one row's wall time goes")
        result = profile(reproduce_options, FLAGS.row, FLAGS.seed, FLAGS.step_flags)
        if FLAGS.profile_json:
            with open(FLAGS.profile_json, "w", encoding="utf-8") as f:
                json.dump(result, f)
        print(table(result, "code: %s" % _CODE_DIR))
        print("results: %s" % results_line(result))
        return 0
    from benchmarks import harness  # pylint: disable=import-outside-toplevel

    harness.print_header("Small-scale profile: where one row's wall time goes, this checkout's code and --code_dir's")

    def run(name, code_dir):
        """This script run with `code_dir`'s code, into its own output_dir: its profile."""
        output_dir = os.path.join(reproduce_options.output_dir, "code_dir" if name == "--code_dir" else "this")
        profile_json = output_dir + ".profile.json"
        logging.info("%s (%s).", name, code_dir)
        subprocess.run(child_command(sys.argv, code_dir, output_dir, profile_json), check=True, cwd=code_dir,
                       env=dict(os.environ, SMALL_SCALE_PROFILE_CODE_DIR=code_dir))
        with open(profile_json, encoding="utf-8") as f:
            return json.load(f)

    contenders = {"this checkout": _REPO_ROOT, "--code_dir": os.path.abspath(FLAGS.code_dir)}
    runs = {name: [] for name in contenders}
    harness.interleave({name: functools.partial(run, name, code_dir) for name, code_dir in contenders.items()},
                       FLAGS.rounds, each=lambda round_index, name, result: runs[name].append(result))
    for name, code_dir in contenders.items():
        print()
        print(table(runs[name][-1], "%s (%s), last round" % (name, code_dir)))
        print("row wall time by round: %s s" % ", ".join("%.1f" % r["row_seconds"] for r in runs[name]))
        print("results: %s" % results_line(runs[name][-1]))
    ours, theirs = ([r["row_seconds"] for r in runs[name]] for name in contenders)
    print("\nspeed-up (--code_dir's wall time / this checkout's), per round: %s; median %.2fx" % (
        ", ".join("%.2fx" % (t / o) for o, t in zip(ours, theirs)),
        statistics.median(t / o for o, t in zip(ours, theirs))))
    return 0


if __name__ == "__main__":
    define_flags()
    app.run(main)
