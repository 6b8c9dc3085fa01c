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
from reproduction import plan as plan_lib


def options_of(step, programs):
    """The step's flags as its entry point's options object (what its command line parses to)."""
    options_class, _ = programs[step.program]
    return options_class(**step.flags)


def _write_inputs(step):
    outputs.write_text(step.inputs_file(), json.dumps(step.inputs(), indent=1, sort_keys=True) + "\n")


def check_inputs(step, output_dir, produced=()):
    """A finished step counts as done only for the inputs it ran with (kept beside its outputs).

    Files are compared by size and content hash, those the plan's steps write
    (in the folders `produced`) by their place under `output_dir`, so a folder
    of finished runs may move (plan.portable_inputs).

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
    difference = plan_lib.first_difference(recorded, current, output_dir, produced)
    if difference:
        name, was, now = difference
        raise ValueError(
            "Step %s finished earlier with other inputs: --%s was %s, now %s. Its outputs (%s) are not this "
            "run's: use a new --output_dir, or remove them to run the step again."
            % (step.name, name, json.dumps(was), json.dumps(now), ", ".join(step.outputs)))


def _duration(seconds):
    seconds = int(round(seconds))
    return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60) if seconds >= 3600 else \
        "%dm%02ds" % (seconds // 60, seconds % 60)


def _readers(steps):
    """{step name: the later steps that read from it}."""
    return {step.name: [later for later in steps[index + 1:] if later.reads_from(step)]
            for index, step in enumerate(steps)}


def schedule(steps, archive=None):
    """What becomes of each step before any runs: finished, restored from kept runs, left out, or to run.

    A step is restored only if each step that reads from it is finished,
    restored, or reads nothing of it but files it keeps (its checkpoints are
    not kept; a vocabulary it learned is), and left out when it keeps no
    files and everything that reads it is settled (pre-training records
    whose readers all finished).

    Args:
      steps: list of plan.Step, in order.
      archive: an archive.RunArchive of kept runs, or None; each step it holds
        inputs of is checked against them (ValueError naming the flag that differs).

    Returns:
      (done, restored, left_out): sets of step names.
    """
    readers = _readers(steps)
    produced = set().union(*(step.folders() for step in steps))
    if archive is not None:
        archive.produced = produced
    done = {step.name for step in steps if step.is_done()}
    # Backwards: a step is restored only if each step that reads from it is settled or needs only its kept files.
    restored, left_out = set(), set()
    for step in reversed(steps):
        if step.name in done:
            continue
        settled = all(reader.name in done or reader.name in restored or reader.name in left_out
                      or reader.reads_only_kept_files_of(step) for reader in readers[step.name])
        if archive is not None and archive.holds_inputs(step):
            archive.check(step)
        if archive is not None and archive.holds(step):
            if settled:
                restored.add(step.name)
        elif not step.kept_files() and readers[step.name] and settled:
            left_out.add(step.name)
    return done, restored, left_out


def default_output_dir(steps):
    """The common folder of the steps' outputs (the study's --output_dir when none is given)."""
    return os.path.commonpath([path for step in steps for path in step.outputs]) if steps else "."


def run(steps, programs, before_step=None, output_dir=None, archive=None):
    """Runs every unfinished step in order.

    Args:
      steps: list of plan.Step.
      programs: {program: (options class, run function)}, the study's (Study.programs).
      before_step: called with each step before it runs (the driver writes
        the row configs there); may be None.
      output_dir: the study's --output_dir (paths under it are compared relative to it); None: the
        common folder of the steps' outputs.
      archive: an archive.RunArchive of kept runs, or None.

    Returns:
      (number of steps run, number skipped as finished or restored).
    """
    started = time.time()
    ran = skipped = 0
    durations = []
    if output_dir is None:
        output_dir = default_output_dir(steps)
    produced = set().union(*(step.folders() for step in steps))
    done_names, restored, left_out = schedule(steps, archive)
    done = {step.name: step.name in done_names for step in steps}
    for index, step in enumerate(steps, 1):
        if done[step.name]:
            check_inputs(step, output_dir, produced)
            if archive is not None and archive.keep(step):
                logging.info("[%d/%d] %s: finished earlier; kept in %s.", index, len(steps), step.name,
                             archive.directory)
            skipped += 1
            logging.info("[%d/%d] %s: finished earlier, skipped.", index, len(steps), step.name)
            continue
        if step.name in restored:
            archive.restore(step)
            skipped += 1
            logging.info("[%d/%d] %s: restored from the kept run in %s, not run.", index, len(steps), step.name,
                         archive.directory)
            continue
        if step.name in left_out:
            skipped += 1
            logging.info("[%d/%d] %s: left out: every step that reads its outputs is finished.", index,
                         len(steps), step.name)
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
        if archive is not None and archive.keep(step):
            logging.info("[%d/%d] %s: kept in %s.", index, len(steps), step.name, archive.directory)
        durations.append(time.time() - step_started)
        ran += 1
        remaining = sum(1 for later in steps[index:] if not (done[later.name] or later.name in restored or
                                                                later.name in left_out))
        eta = sum(durations) / len(durations) * remaining
        logging.info("[%d/%d] %s: done in %s; elapsed %s, ETA %s for %d more step(s) (from the steps "
                     "finished so far).", index, len(steps), step.name, _duration(durations[-1]),
                     _duration(time.time() - started), _duration(eta), remaining)
    return ran, skipped
