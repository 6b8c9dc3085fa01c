"""Runs a plan's steps in process, skipping finished ones, with a progress line per step.

Each step calls the same library function as its entry point does, with the
options built from the step's flags (`Options(**flags)`), so a step behaves
exactly as its line in plan.sh. An interrupted step is simply run again: the
entry points resume from their own checkpoints, and their outputs appear
only when complete, so a step is either finished or not. A finished step
counts as done only for the inputs it ran with (its flags and the files they
name, kept beside its outputs in <output>.inputs.json): a re-run with other
inputs (another corpus, another config) is refused, naming the flag.
"""

import inspect
import json
import os
import time

import tf_keras
from absl import logging

import outputs


def options_of(step, programs):
    """The step's flags as its entry point's options object (what its command line parses to)."""
    options_class, _ = programs[step.program]
    return options_class(**step.flags)


def _write_inputs(step):
    outputs.write_text(step.inputs_file(), json.dumps(step.inputs(), indent=1, sort_keys=True) + "\n")


def check_inputs(step):
    """A finished step counts as done only for the inputs it ran with (kept beside its outputs).

    Raises:
      ValueError: naming the step, the first flag whose value or files differ, and what to do.
    """
    path = step.inputs_file()
    current = step.inputs()
    if not os.path.exists(path):
        _write_inputs(step)  # Finished before steps kept their inputs: adopted as they are now.
        return
    with open(path, encoding="utf-8") as f:
        recorded = json.load(f)
    for name in sorted(set(recorded) | set(current)):
        if recorded.get(name) != current.get(name):
            raise ValueError(
                "Step %s finished earlier with other inputs: --%s was %s, now %s. Its outputs (%s) are not this "
                "run's: use a new --output_dir, or remove them to run the step again."
                % (step.name, name, json.dumps(recorded.get(name)), json.dumps(current.get(name)),
                   ", ".join(step.outputs)))


def _duration(seconds):
    seconds = int(round(seconds))
    return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60) if seconds >= 3600 else \
        "%dm%02ds" % (seconds // 60, seconds % 60)


def run(steps, programs, before_step=None):
    """Runs every unfinished step in order.

    Args:
      steps: list of plan.Step.
      programs: {program: (options class, run function)}, the study's (Study.programs).
      before_step: called with each step before it runs (the driver writes
        the row configs there); may be None.

    Returns:
      (number of steps run, number skipped as finished).
    """
    started = time.time()
    ran = skipped = 0
    durations = []
    for index, step in enumerate(steps, 1):
        if step.is_done():
            check_inputs(step)
            skipped += 1
            logging.info("[%d/%d] %s: finished earlier, skipped.", index, len(steps), step.name)
            continue
        if before_step:
            before_step(step)
        options_class, run_step = programs[step.program]
        step_started = time.time()
        logging.info("[%d/%d] %s (%s): running.", index, len(steps), step.name, step.program)
        if "given" in inspect.signature(run_step).parameters:
            # As on the command line: a --preset fills only the flags the step does not name,
            # even one the step sets to its default value.
            run_step(options_class(**step.flags), given=set(step.flags))
        else:
            run_step(options_class(**step.flags))
        # Each step builds its own models, and sets its own precision policy.
        tf_keras.backend.clear_session()
        tf_keras.mixed_precision.set_global_policy("float32")
        if not step.is_done():
            raise RuntimeError("Step %s ended without its outputs: %s" % (step.name, ", ".join(step.outputs)))
        _write_inputs(step)
        durations.append(time.time() - step_started)
        ran += 1
        remaining = len(steps) - index
        eta = sum(durations) / len(durations) * remaining
        logging.info("[%d/%d] %s: done in %s; elapsed %s, ETA %s for %d more step(s) (from the steps "
                     "finished so far).", index, len(steps), step.name, _duration(durations[-1]),
                     _duration(time.time() - started), _duration(eta), remaining)
    return ran, skipped
