"""Runs a plan's steps, skipping finished ones, with progress and an ETA for the whole plan.

Each step calls the same library function as its entry point does, with the
options built from the step's flags (`Options(**flags)`), so a step behaves
exactly as its line in plan.sh: in this process, one step after another, or
with `parallel_runs` > 1 several at once, each in a child process on its
share of the cores (reproduction/processes.py), a step starting only once the
steps it reads from (plan.Step.reads_from) are finished.

An interrupted step is simply run again: the entry points resume from their
own checkpoints, and their outputs appear only when complete, so a step is
either finished or not. A step runs only for the inputs recorded for it (its
flags and the files they name, in <output>.inputs.json), written *before* it
starts: a finished or half-run step found with other inputs (another corpus,
another config) is refused, naming the flag, and a finished one found with no
record is refused too, since nothing tells what it ran on. Once a step
finishes, <output>.machine.json records where and how it ran: the CPU, its
bfloat16 support, the dtype, the threads, the wall time over all its attempts
(reproduction/timing.py), which --dry_run and the ETA read back.
"""

import inspect
import json
import os
import time

import tf_keras
from absl import logging

import outputs
from reproduction import plan as plan_lib, processes, timing


def options_of(step, programs):
    """The step's flags as its entry point's options object (what its command line parses to)."""
    options_class, _ = programs[step.program]
    return options_class(**step.flags)


def _write_inputs(step):
    os.makedirs(os.path.dirname(step.inputs_file()) or ".", exist_ok=True)
    outputs.write_text(step.inputs_file(), json.dumps(step.inputs(), indent=1, sort_keys=True) + "\n")


def check_inputs(step, output_dir, produced=(), finished=True):
    """A step counts as done, or resumes, only for the inputs recorded for it (kept beside its outputs).

    Files are compared by size and content hash, those the plan's steps write
    (in the folders `produced`) by their place under `output_dir`, so a folder
    of finished runs may move (plan.portable_inputs).

    Args:
      finished: whether the step's outputs exist; then a missing record is refused (nothing tells what the
        outputs were computed from); for an unfinished step it means the step never started.

    Raises:
      ValueError: naming the step, the first flag whose value or files differ (or the missing record), and
        what to do.
    """
    path = step.inputs_file()
    if not os.path.exists(path):
        if finished:
            raise ValueError(
                "Step %s has its outputs (%s) but no record of the inputs it ran with (%s): they may be another "
                "run's. Remove them to run the step again, or use a new --output_dir."
                % (step.name, ", ".join(step.outputs), path))
        return
    with open(path, encoding="utf-8") as f:
        recorded = json.load(f)
    difference = plan_lib.first_difference(recorded, step.inputs(), output_dir, produced)
    if difference:
        name, was, now = difference
        raise ValueError(
            "Step %s %s earlier with other inputs: --%s was %s, now %s. Its outputs (%s) are not this "
            "run's: use a new --output_dir, or remove them%s to run the step again."
            % (step.name, "finished" if finished else "started", name, json.dumps(was), json.dumps(now),
               ", ".join(step.outputs), "" if finished else " and its checkpoints"))


def call_step(options_class, run_step, flags):
    """Runs a step's function with the options its flags parse to, then resets Keras' global state.

    As on the command line, a --preset fills only the flags the step does not name, even one it sets to
    its default value (`given`).
    """
    if "given" in inspect.signature(run_step).parameters:
        run_step(options_class(**flags), given=set(flags))
    else:
        run_step(options_class(**flags))
    # Each step builds its own models, and sets its own precision policy.
    tf_keras.backend.clear_session()
    tf_keras.mixed_precision.set_global_policy("float32")


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


class _Progress:
    """The progress lines of a run: each step's start and end, elapsed time and an ETA for the plan."""

    def __init__(self, steps, to_run, parallel_runs, expected=None, spent=None):
        """expected: {step name: seconds} of the steps to run, from the records of earlier runs (timing.estimates);
        the ETA takes them over the mean of the steps finished here. spent: {step name: seconds} its earlier
        attempts ran (timing.under_way), counted as done."""
        self.index = {step.name: number for number, step in enumerate(steps, 1)}
        self.total = len(steps)
        self.left = [step.name for step in to_run]
        self.parallel_runs = parallel_runs
        self.expected = expected or {}
        self.spent = spent or {}
        self.started = time.time()
        self.durations = []

    def line(self, step, text, *args):
        logging.info("[%d/%d] %s: " + text, self.index[step.name], self.total, step.name, *args)

    def finished(self, step, seconds, running_for=None):
        """Logs a finished step; running_for: {name: how long it has run, over its attempts} of the steps still
        running."""
        ran = dict(self.spent, **(running_for or {}))
        self.durations.append(seconds)
        self.left.remove(step.name)
        mean = sum(self.durations) / len(self.durations)
        guess = {name: self.expected.get(name, mean) for name in self.left}
        work = sum(guess[name] - min(ran.get(name, 0.0), guess[name]) for name in self.left)
        eta = work / min(self.parallel_runs, max(len(self.left), 1))
        basis = ("each row's median in the machine records, else the mean of the steps finished here"
                 if any(name in self.expected for name in self.left) else "from the steps finished so far")
        self.line(step, "done in %s; elapsed %s, ETA %s for %d more step(s) (%s%s).",
                  timing.duration(seconds), timing.duration(time.time() - self.started), timing.duration(eta),
                  len(self.left), basis, ", %d at a time" % self.parallel_runs if self.parallel_runs > 1 else "")


def run(steps, programs, before_step=None, output_dir=None, archive=None, parallel_runs=1):
    """Runs every unfinished step, one at a time in this process or `parallel_runs` at once in child processes.

    Args:
      steps: list of plan.Step.
      programs: {program: (options class, run function)}, the study's (Study.programs).
      before_step: called with each step before it runs (the driver writes
        the row configs there); may be None.
      output_dir: the study's --output_dir (paths under it are compared relative to it; the child processes'
        logs go to its logs/); None: the common folder of the steps' outputs.
      archive: an archive.RunArchive of kept runs, or None.
      parallel_runs: how many steps run at once, each in its own process on its share of the cores
        (processes.core_shares), at most as many as there are steps to run; 1 (or a single step to run):
        in this process, in plan order.

    Returns:
      (number of steps run, number skipped as finished or restored).

    Raises:
      ValueError: a step's recorded inputs differ from its flags' (see check_inputs).
      RuntimeError: a step ended without its outputs.
      ChildProcessError: a step's process failed (its log named; the program ends on it in one line): with several
        at once, the steps still running are let finish first, and no new one starts.
    """
    if output_dir is None:
        output_dir = default_output_dir(steps)
    produced = set().union(*(step.folders() for step in steps))
    done, restored, left_out = schedule(steps, archive)
    to_run = [step for step in steps if step.name not in done | restored | left_out]
    parallel_runs = max(1, min(parallel_runs, len(to_run)))  # one step left: in this process, on every core
    expected = timing.estimates(steps, timing.records(steps, archive))
    spent = {name: so_far["seconds"] for name, so_far in timing.under_way(to_run).items()}
    progress = _Progress(steps, to_run, parallel_runs, expected, spent)
    for step in steps:
        if step.name in done:
            check_inputs(step, output_dir, produced)
            if archive is not None and archive.keep(step):
                progress.line(step, "finished earlier; kept in %s.", archive.directory)
            progress.line(step, "finished earlier, skipped.")
        elif step.name in restored:
            archive.restore(step)
            progress.line(step, "restored from the kept run in %s, not run.", archive.directory)
        elif step.name in left_out:
            progress.line(step, "left out: every step that reads its outputs is finished.")
        else:  # refused before anything runs, not after hours of other steps
            check_inputs(step, output_dir, produced, finished=False)
    _log_expected_time(to_run, expected, spent, parallel_runs)
    if parallel_runs > 1:
        _run_in_processes(to_run, programs, before_step, output_dir, archive, parallel_runs, progress)
    else:
        for step in to_run:
            _start(step, before_step, progress, "running %s." % step.program)
            clock = timing.Clock(step.outputs[0])
            try:
                call_step(*programs[step.program], step.flags)
            finally:
                seconds, attempts = clock.stop()
            _finish(step, seconds, processes.usable_cores(), 1, archive, progress, attempts=attempts)
    return len(to_run), len(steps) - len(to_run)


def _log_expected_time(to_run, expected, spent, parallel_runs):
    """Before the first step runs: how long the steps to run should take, from the machine records of the
    finished ones (`expected`: timing.estimates), less what earlier attempts ran (`spent`), if any."""
    known = [max(0.0, expected[step.name] - spent.get(step.name, 0.0)) for step in to_run if step.name in expected]
    if known:
        logging.info("Expected: about %s for %d of the %d step(s) to run, %d at a time (each row's median run in "
                     "the machine records of the finished steps%s).", timing.duration(sum(known) / parallel_runs),
                     len(known), len(to_run), parallel_runs,
                     ", less what earlier attempts ran" if any(step.name in spent for step in to_run) else "")


def _start(step, before_step, progress, text):
    """Before a step runs: its inputs recorded (see the module docstring), the study's hook called."""
    if before_step:
        before_step(step)
    _write_inputs(step)
    progress.line(step, text)


def _finish(step, seconds, cores, parallel_runs, archive, progress, running_for=None, attempts=1):
    """After a step ran: its outputs checked, where it ran recorded, its files kept, progress logged."""
    if not step.is_done():
        raise RuntimeError("Step %s ended without its outputs: %s" % (step.name, ", ".join(step.outputs)))
    timing.write_machine_record(step.outputs[0], step.name, step.flags.get("dtype"), seconds, len(cores),
                                parallel_runs, attempts)
    if archive is not None and archive.keep(step):
        progress.line(step, "kept in %s.", archive.directory)
    progress.finished(step, seconds, running_for)


def _run_in_processes(to_run, programs, before_step, output_dir, archive, parallel_runs, progress):
    """Runs the steps `parallel_runs` at a time, each on a fixed share of the cores, in dependency order."""
    shares = processes.core_shares(parallel_runs)
    free = list(range(parallel_runs))  # indices into shares
    waiting, running, failed = list(to_run), {}, []  # running: share index -> StepProcess
    clocks = {}  # step name -> timing.Clock
    order = {step.name: index for index, step in enumerate(to_run)}
    try:
        while waiting or running:
            unfinished = waiting + [child.step for child in running.values()]
            if not failed:
                for step in list(waiting):
                    if not free:
                        break
                    if any(order[other.name] < order[step.name] and step.reads_from(other) for other in unfinished):
                        continue  # an earlier step it reads from is not finished yet
                    share = free.pop(0)
                    options_class, run_function = programs[step.program]
                    child = processes.StepProcess(step, options_class, run_function, shares[share], output_dir)
                    _start(step, before_step, progress, "running %s on core(s) %s; log: %s." % (
                        step.program, ",".join(map(str, shares[share])), child.log))
                    child.start()
                    clocks[step.name] = timing.Clock(step.outputs[0])
                    running[share] = child
                    waiting.remove(step)
            elif not running:
                break
            time.sleep(0.5)
            for share, child in list(running.items()):
                code = child.finished()
                if code is None:
                    continue
                del running[share]
                free.append(share)
                free.sort()
                seconds, attempts = clocks.pop(child.step.name).stop()
                if code != 0 or not child.step.is_done():
                    failed.append(child)
                    logging.error("%s failed (exit code %d)%s; its log: %s. Last lines:\n%s", child.step.name, code,
                                  "; waiting for the %d step(s) still running, starting none" % len(running)
                                  if running else "", child.log, child.last_lines())
                    continue
                _finish(child.step, seconds, child.cores, parallel_runs, archive, progress,
                        {other.step.name: clocks[other.step.name].seconds() for other in running.values()}, attempts)
    finally:
        for child in running.values():  # an exception here (Ctrl-C): the children die with the run
            child.stop()
        for clock in clocks.values():
            clock.stop()
    if failed:
        raise ChildProcessError(
            "%d step(s) failed: %s. Their logs: %s. Fix the cause and run the same command again: finished steps "
            "are skipped, the failed ones resume from their checkpoints."
            % (len(failed), ", ".join(child.step.name for child in failed), ", ".join(child.log for child in failed)))
