"""Finished runs kept in a folder between sessions and machines (--runs_dir), and reused instead of re-run.

A study's runs take hours; a session, a machine or a cluster job may end
before the last one. When the runner finishes a step it copies the step's
kept files (`Step.kept_files()`: results, configs, the vocabulary; never
checkpoints) and its inputs into the folder, at the same paths relative to
--output_dir (the inputs alone for a step that keeps nothing, so that the
steps reading its outputs are checked through it):

  <runs_dir>/<row folder>/eval_results.txt             a kept file
  <runs_dir>/<row folder>/eval_results.txt.inputs.json  the step's inputs, portable (no machine's paths)
  <runs_dir>/<row folder>/eval_results.txt.machine.json where and how it ran (CPU, dtype, threads, time)

A step not finished under --output_dir whose files the folder holds is
restored from it (its kept files copied back, and a mark beside its first
output) instead of run, if it ran with the same inputs: the same flags, and
files of the same sizes and content hashes, wherever they were
(`plan.portable_inputs`). A held run whose inputs differ is refused, naming
the flag: the folder belongs to another run of the study. Committing the
folder (the study's results folder under docs/results/) is how finished
runs survive a session, and how rows run on different machines are
gathered into one report.
"""

import json
import os
import shutil

from reproduction import plan as plan_lib


class RunArchive:
    """The folder of kept runs of one study's --output_dir.

    produced: the folders the plan's steps write their outputs to (see plan.portable_inputs); the runner
    sets them.
    """

    def __init__(self, directory, output_dir):
        self.directory = os.path.abspath(directory)
        self.output_dir = os.path.abspath(output_dir)
        self.produced = ()
        if self.directory == self.output_dir:
            raise ValueError("--runs_dir=%s is --output_dir: give a folder of its own (the study's folder under "
                             "docs/results/, say)." % directory)

    def _path(self, path):
        """Where the archive keeps `path`, a file under --output_dir."""
        relative = os.path.relpath(os.path.abspath(path), self.output_dir)
        if relative.startswith(os.pardir):
            raise ValueError("%s is outside --output_dir=%s: only the files of the study's own runs are kept."
                             % (path, self.output_dir))
        return os.path.join(self.directory, relative)

    def _inputs_path(self, step):
        return self._path(step.inputs_file())

    def holds_inputs(self, step):
        """Whether the folder has the inputs of a finished run of the step."""
        return os.path.exists(self._inputs_path(step))

    def holds(self, step):
        """Whether the folder has the step's kept files and inputs (a step that keeps nothing is never held)."""
        files = step.kept_files()
        return bool(files) and self.holds_inputs(step) and all(os.path.exists(self._path(path)) for path in files)

    def machine_file(self, step):
        """Where the folder keeps the record of where and how the step's run ran (if it keeps one)."""
        return self._path(step.machine_file())

    def check(self, step, current=None):
        """Raises ValueError, naming the flag, when the held run's inputs differ from the step's.

        current: the step's inputs when known (a finished step's recorded ones), else computed (files hashed).
        """
        with open(self._inputs_path(step), encoding="utf-8") as f:
            recorded = json.load(f)
        current = step.inputs() if current is None else current
        difference = plan_lib.first_difference(recorded, current, self.output_dir, self.produced)
        if difference:
            name, was, now = difference
            raise ValueError(
                "Step %s is kept in --runs_dir=%s from a run with other inputs: --%s was %s, now %s. Give this run "
                "another --runs_dir (or --runs_dir='' to keep none), or remove the step's files there (%s) to "
                "run it again." % (step.name, self.directory, name, json.dumps(was), json.dumps(now),
                                   os.path.dirname(self._inputs_path(step))))

    def restore(self, step):
        """Copies the held run's kept files and inputs to their places under --output_dir and marks it reused."""
        for path in step.kept_files():
            _copy(self._path(path), path)
        if os.path.exists(self._path(step.machine_file())):
            _copy(self._path(step.machine_file()), step.machine_file())
        _copy(self._inputs_path(step), step.inputs_file())
        _write_json(step.reused_file(), dict(step=step.name, runs_dir=self.directory))

    def keep(self, step):
        """Copies a finished step's kept files and the inputs it ran with into the folder.

        Returns whether it copied: not for one the folder holds already
        (checked against the step's inputs). A step that keeps nothing leaves its
        inputs alone.
        """
        with open(step.inputs_file(), encoding="utf-8") as f:
            recorded = json.load(f)  # checked against the step's by the runner: no need to hash its files again
        if self.holds_inputs(step):
            self.check(step, recorded)
            if self.holds(step) or not step.kept_files():
                return False
        for path in step.kept_files():
            _copy(path, self._path(path))
        if step.kept_files() and os.path.exists(step.machine_file()):
            _copy(step.machine_file(), self._path(step.machine_file()))
        _write_json(self._inputs_path(step), plan_lib.portable_inputs(recorded, self.output_dir, self.produced))
        return True


def _copy(source, destination):
    """Copies a file whole: written beside its place, then renamed, so that no reader sees half of it."""
    os.makedirs(os.path.dirname(destination) or ".", exist_ok=True)
    partial = destination + ".partial"
    shutil.copyfile(source, partial)
    os.replace(partial, destination)


def _write_json(path, value):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(partial, path)
