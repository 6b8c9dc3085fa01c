"""Where the wall time of one small-scale row goes, end to end, as reproduce_paper_tables.py runs it: phase by phase.

  .venv/bin/python benchmarks/small_scale_profile.py --experiment=lm_figure1 --output_dir=/tmp/profile_lm \
    --train_file=books_train.txt --eval_file=books_eval.txt --test_file=books_test.txt [--code_dir=DIR --rounds=N]
The row, its phases, how they are timed, --code_dir's comparison: docs/performance.md, section "Small-scale runs".
"""

import dataclasses
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

_STARTED = time.time()
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CODE_DIR = os.environ.get("SMALL_SCALE_PROFILE_CODE_DIR", _REPO_ROOT)  # --code_dir's child: that checkout's code.
if _CODE_DIR not in sys.path:
    sys.path.insert(0, _CODE_DIR)

from absl import app, flags  # pylint: disable=wrong-import-position
from training import onednn  # pylint: disable=wrong-import-position

onednn.enable()  # as every entry point, before TensorFlow loads
import tensorflow  # noqa: F401,E402  pylint: disable=wrong-import-position,unused-import  (timed with the imports)
import options as options_lib  # noqa: E402  pylint: disable=wrong-import-position
import studies  # noqa: E402  pylint: disable=wrong-import-position
from reproduction import runner, selection  # noqa: E402  pylint: disable=wrong-import-position
from training import trainer as trainer_lib  # noqa: E402  pylint: disable=wrong-import-position

_IMPORTED = time.time()
FLAGS = flags.FLAGS
# The functions the phases run in ("module:attribute path": phase); Translator.__init__ wraps the instance's
# compiled functions (TRANSLATOR_HOOKS).
HOOKS = {"tokenization.sentencepiece_vocabulary:get": "vocabulary", "training.trainer:Trainer.run_steps": "training",
         "training.trainer:Trainer.save": "checkpoints", "checkpoints.tf1_checkpoint:write_tensors": "checkpoints",
         "nmt.task:Translator.__init__": None, "nmt.metrics:corpus_scores": "evaluation: sacreBLEU",
         "nmt.dataset:count_too_long": "input checks", "lm.task:score": "evaluation: held-out scoring",
         "modeling.pretraining:evaluate": "evaluation: held-out scoring",
         "modeling.pretraining_input:check_record_lengths": "input checks"}
TRANSLATOR_HOOKS = {"_translate": "evaluation: beam search", "_score": "evaluation: teacher-forced scoring"}
PHASES = ("process start and imports", "vocabulary", "training: tracing", "training: steps", "checkpoints",
          "evaluation: teacher-forced scoring", "evaluation: beam search", "evaluation: sacreBLEU",
          "evaluation: held-out scoring", "evaluation: rank probe", "input checks", "other")
RESULT_KEYS = ("bleu", "chrf", "loss", "perplexity", "masked_lm_accuracy", "masked_lm_loss", "global_step", "best_bleu")


def define_flags():
    """The study flags of reproduce_paper_tables.py (at --scale=small), then the profiler's own: when run as a program
    only, as the study flags (--do_lower_case, ...) would collide with the other benchmarks' in the tests' process."""
    options_lib.define_flags(studies.ReproduceOptions)
    FLAGS.set_default("scale", "small")
    flags.DEFINE_string("row", None, "The row to profile, as plan.md names it (default: the first trained row).")
    flags.DEFINE_integer("seed", None, "Its seed, at a scale with several (default: the first).")
    flags.DEFINE_string("code_dir", None, "Also profile the row with this checkout's code, in alternation.")
    flags.DEFINE_integer("rounds", 1, "Rounds with --code_dir: this checkout's run, then the other's.", lower_bound=1)
    flags.DEFINE_list("step_flags", [], "name=value flags added to the row's steps, e.g. jit_compile=true.")
    flags.DEFINE_string("profile_json", None, "Write the timings here too (used by --code_dir's child).")


class Stopwatch:
    """Exclusive seconds per phase: a timed call inside another counts for its own phase only."""

    def __init__(self):
        self.seconds, self.training_calls, self._inner = {}, [], [0.0]  # training_calls: (steps, seconds) a call

    def timed(self, phase, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            self._inner.append(0.0)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                exclusive = elapsed - self._inner.pop()
                self._inner[-1] += elapsed
                if phase == "training":
                    self.training_calls.append((int(args[1] if len(args) > 1 else kwargs["num_steps"]), exclusive))
                else:
                    self.seconds[phase] = self.seconds.get(phase, 0.0) + exclusive
        return wrapper

    def install(self):
        """Wraps every hook that exists in this checkout's code; returns the hooks missing."""
        missing = []
        for hook, phase in HOOKS.items():
            module_name, path = hook.split(":")
            *parents, name = path.split(".")
            try:
                owner = functools.reduce(getattr, parents, __import__(module_name, fromlist=["_"]))
                function = getattr(owner, name)
            except (ImportError, AttributeError):
                missing.append(hook.replace(":", "."))
                continue
            setattr(owner, name, self.timed(phase, function) if phase else self._translator_init(function))
        return missing

    def _translator_init(self, init):
        @functools.wraps(init)
        def wrapper(translator, *args, **kwargs):
            init(translator, *args, **kwargs)
            for attribute, phase in TRANSLATOR_HOOKS.items():
                setattr(translator, attribute, self.timed(phase, getattr(translator, attribute)))
        return wrapper

    def training_split(self):
        """(tracing, steps) seconds: the first loop call less its steps at the median rate of the others."""
        total = sum(seconds for _, seconds in self.training_calls)
        later = [seconds / steps for steps, seconds in self.training_calls[1:] if steps]
        if not later:
            return 0.0, total
        tracing = max(0.0, self.training_calls[0][1] - self.training_calls[0][0] * statistics.median(later))
        return tracing, total - tracing


def select_steps(plan_steps, row, seed):
    """(shared steps to run first, the row's steps) of the plan.

    Raises:
      ValueError: naming the rows the plan has when `row` is not one of them (the row's seeds for `seed`).
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
    # The steps the row reads from (create_pretraining_data's records, the first row's vocabulary) run first.
    _, added = selection.with_dependencies(plan_steps, {s.name for s in chosen})
    return [s for s in plan_steps if s.name in added], chosen


def with_flags(step, step_flags, programs):
    """The step with `step_flags` (["name=value"]) added where its entry point has them, parsed as its flags are."""
    entry_point = flags.FlagValues()
    options_lib.define_flags(programs[step.program][0], flag_values=entry_point)
    added = {}
    for name, _, value in (item.partition("=") for item in step_flags):
        if name in entry_point:
            entry_point[name].parse(value)
            added[name] = entry_point[name].value
    return dataclasses.replace(step, flags=dict(step.flags, **added))


def profile(reproduce_options, row, seed, step_flags=()):
    """Runs the row in this process; returns a dict of the timings and the row's result figures."""
    stopwatch, measured = Stopwatch(), {}
    missing = stopwatch.install()
    make_dataset = trainer_lib.Trainer._dataset  # pylint: disable=protected-access

    def measured_dataset(trainer):
        # Read alone with an iterator of its own (the training iterator is untouched) before the steps, after
        # 3 batches' warm-up; the time this takes is the profiler's, left out of the row's phases.
        dataset = make_dataset(trainer)
        start, iterator = time.perf_counter(), iter(dataset)
        for _ in range(3):
            next(iterator)
        warm = time.perf_counter()
        for _ in range(30):
            next(iterator)
        measured["input_seconds_per_batch"] = (time.perf_counter() - warm) / 30
        measured["measuring"] = measured.get("measuring", 0.0) + time.perf_counter() - start
        return dataset

    trainer_lib.Trainer._dataset = measured_dataset  # pylint: disable=protected-access
    shutil.rmtree(reproduce_options.output_dir, ignore_errors=True)
    study = studies.STUDIES.get(reproduce_options.experiment)
    programs = study.programs()
    needed, chosen = select_steps(study.plan(reproduce_options).steps, row, seed)
    chosen = [with_flags(step, step_flags, programs) for step in chosen]
    start = time.perf_counter()
    runner.run(needed, programs)
    shared = time.perf_counter() - start
    stopwatch.seconds.clear()
    stopwatch.training_calls.clear()
    per_step = {}
    for step in chosen:  # The rank probe's step is a phase (less the timed calls inside it).
        start = time.perf_counter()
        (stopwatch.timed("evaluation: rank probe", runner.run) if step.program == "probe_attention_rank.py"
         else runner.run)([step], programs)
        per_step[step.name] = time.perf_counter() - start - measured.pop("measuring", 0.0)
    tracing, steps = stopwatch.training_split()
    phases = dict(stopwatch.seconds, **{"training: tracing": tracing, "training: steps": steps})
    phases["other"] = sum(per_step.values()) - sum(phases.values())
    phases["process start and imports"] = _IMPORTED - process_start_time()
    num_steps = sum(n for n, _ in stopwatch.training_calls)
    results = {}  # The figures of the row's result files, to check that a speed-up changed none.
    for path in (path for step in chosen for path in step.outputs if path.endswith(".txt") and os.path.exists(path)):
        with open(path, encoding="utf-8") as f:
            results[os.path.relpath(path, os.path.dirname(os.path.dirname(path)))] = dict(
                line.strip().split(" = ", 1) for line in f if " = " in line)
    return dict(experiment=reproduce_options.experiment, scale=reproduce_options.scale, steps=list(per_step),
                shared_steps=[s.name for s in needed], shared_seconds=shared, phases=phases, per_step=per_step,
                row_seconds=sum(per_step.values()) + phases["process start and imports"], training_steps=num_steps,
                seconds_per_step=steps / num_steps if num_steps else None, missing_hooks=missing, results=results,
                input_seconds_per_batch=measured.get("input_seconds_per_batch"))


def process_start_time():
    """The wall-clock time this process started (Linux /proc), else this module's import."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/stat") as system:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            boot = next(int(line.split()[1]) for line in system if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return _STARTED


def table(result, title):
    """The phase table of a profile (Markdown), and under it the steps, the input pipeline, the hooks missing."""
    total, phases = result["row_seconds"], result["phases"]
    lines = ["%s: %s %s scale, steps %s" % (title, result["experiment"], result["scale"], ", ".join(result["steps"])),
             "", "| phase | seconds | share |", "|---|---|---|"]
    lines += ["| %s | %.1f | %.0f%% |" % (phase, phases[phase], 100.0 * phases[phase] / total)
              for phase in PHASES if phase in phases and (phases[phase] >= 0.05 or phase == "other")]
    lines.append("| **row, end to end** | **%.1f** | 100%% |" % total)
    if result["shared_steps"]:
        lines.append("| (once per experiment: %s) | %.1f | |" % (", ".join(result["shared_steps"]),
                                                               result["shared_seconds"]))
    lines.append("")
    if result.get("seconds_per_step"):
        lines.append("training: %d steps, %.1f ms a step" % (result["training_steps"],
                                                          1e3 * result["seconds_per_step"]))
    if result.get("input_seconds_per_batch"):
        lines.append("input pipeline alone: %.1f ms a batch (read before training; prefetch overlaps it with the "
                     "steps)" % (1e3 * result["input_seconds_per_batch"]))
    if result["missing_hooks"]:
        lines.append("not in this code (its phase counts as other): %s" % ", ".join(result["missing_hooks"]))
    return "\n".join(lines)


def results_line(result):
    shown = {name: ", ".join("%s %s" % (k, v) for k, v in sorted(values.items()) if k in RESULT_KEYS)
             for name, values in sorted(result["results"].items())}
    return "results: " + "; ".join("%s: %s" % (name, text) for name, text in shown.items() if text)


def main(_):
    reproduce_options = options_lib.from_flags(studies.ReproduceOptions)
    if not FLAGS.profile_json:  # Not in --code_dir's children, whose code (another checkout's) may have no harness.
        from benchmarks import harness  # pylint: disable=import-outside-toplevel

        harness.print_header("Small-scale profile: where one row's wall time goes"
                             + (", this checkout's code and --code_dir's" if FLAGS.code_dir else ""))
    if not FLAGS.code_dir:
        result = profile(reproduce_options, FLAGS.row, FLAGS.seed, FLAGS.step_flags)
        if FLAGS.profile_json:
            with open(FLAGS.profile_json, "w", encoding="utf-8") as f:
                json.dump(result, f)
        print(table(result, "code: %s" % _CODE_DIR) + "\n" + results_line(result))
        return 0
    contenders = {"this checkout": _REPO_ROOT, "--code_dir": os.path.abspath(FLAGS.code_dir)}
    runs = {name: [] for name in contenders}

    def run(name, code_dir):
        """This script, with the same flags, run with `code_dir`'s code into its own output_dir: its profile."""
        output_dir = os.path.join(reproduce_options.output_dir, "code_dir" if name == "--code_dir" else "this")
        args = [a for a in sys.argv[1:] if a.split("=")[0] not in ("--code_dir", "--rounds", "--output_dir")]
        subprocess.run([sys.executable, os.path.abspath(__file__)] + args + [
            "--output_dir=" + output_dir, "--profile_json=%s.profile.json" % output_dir], check=True, cwd=code_dir,
            env=dict(os.environ, SMALL_SCALE_PROFILE_CODE_DIR=code_dir))
        with open(output_dir + ".profile.json", encoding="utf-8") as f:
            return json.load(f)

    harness.interleave({name: functools.partial(run, name, code_dir) for name, code_dir in contenders.items()},
                       FLAGS.rounds, each=lambda round_index, name, result: runs[name].append(result))
    for name, code_dir in contenders.items():
        print("\n" + table(runs[name][-1], "%s (%s), last round" % (name, code_dir)))
        print("row wall time by round: %s s" % ", ".join("%.1f" % r["row_seconds"] for r in runs[name]))
        print(results_line(runs[name][-1]))
    ratios = [theirs["row_seconds"] / ours["row_seconds"] for ours, theirs in zip(*runs.values())]
    print("\nspeed-up (--code_dir's wall time / this checkout's), per round: %s; median %.2fx" % (
        ", ".join("%.2fx" % ratio for ratio in ratios), statistics.median(ratios)))
    return 0


if __name__ == "__main__":
    define_flags()
    app.run(main)
