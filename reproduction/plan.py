"""A step of a plan: one command line of one of our entry points.

A step is a program (`run_pretraining.py`, ...) and its flags; the runner
runs it in process with the same flags that `plan.sh` writes, so the plan
is what runs. A step is finished when its outputs exist (entry points write
them only when complete), which is what makes a re-run skip it, or when it
was restored from a folder of kept runs (reproduction/archive.py). Each study
builds its own steps (its layout under --output_dir is in its module).

A step reads from an earlier one when one of its flags names a path in a
folder the earlier step writes its outputs to (a vocabulary the first row
learned, a checkpoint, pre-training records): that is the plan's only notion
of a dependency, used to run a subset of a plan (reproduction/selection.py)
and to leave out steps nothing needs any more.
"""

import dataclasses
import glob
import os
import re
import shlex
from typing import Optional

import file_system

# Flags naming what a step writes (or a checkpoint an earlier step wrote, kept by that step's inputs).
_OUTPUT_FLAGS = frozenset(("output_dir", "output_file", "summary_file", "plot_file", "init_checkpoint"))
_WRITTEN_FLAGS = _OUTPUT_FLAGS - {"init_checkpoint"}
INPUTS_SUFFIX = ".inputs.json"
REUSED_SUFFIX = ".reused.json"
MACHINE_SUFFIX = ".machine.json"
_HASHED_BYTES = 64 << 20
# A path left for the environment to give (a dry run without data paths).
_PLACEHOLDER = re.compile(r"\$\{[A-Z_]+\}")


@dataclasses.dataclass(frozen=True)
class Step:
    """One command of the plan.

    name: unique, e.g. "dp32/pretrain_128" or "data/pretrain_128".
    row: the row's name, or "" for a step the rows share.
    stage: "data", "pretrain_128", "pretrain_512", "probe", "mnli" or "squad".
    program: the entry point.
    flags: {flag: value}, exactly the entry point's flag names.
    outputs: files that exist only once the step is complete.
    seed: the run's seed when a row runs with several (fine-tuning, or training at a small scale), or None.
    distributed: a training step, whose command line ends with the cluster's distribution flags.
    kept: the files worth keeping once the step is finished, what the report reads (small ones: results,
      configs, the vocabulary), or None for its outputs; () for a step whose files only later steps read
      (pre-training records).
    """

    name: str
    row: str
    stage: str
    program: str
    flags: dict
    outputs: tuple
    seed: Optional[int] = None
    distributed: bool = False
    kept: Optional[tuple] = None

    def command_line(self, python="python", distribution_variable="DISTRIBUTION_FLAGS"):
        """The shell command; training steps end with "${DISTRIBUTION_FLAGS}" for the cluster's flags.

        `python` is written as is (it may be a shell variable); everything else is quoted.
        """
        words = [self.program] + ["--%s=%s" % (k, _flag_value(v)) for k, v in self.flags.items()]
        line = python + " " + " ".join(_shell_word(w) for w in words)
        if distribution_variable and self.distributed:
            line += " ${%s}" % distribution_variable
        return line

    def kept_files(self):
        """The files a finished step leaves for the report and for later sessions (`kept`, else `outputs`)."""
        return self.outputs if self.kept is None else self.kept

    def is_done(self):
        """Finished here (its outputs exist), or restored from kept runs (its kept files and the mark)."""
        if all(os.path.exists(path) for path in self.outputs):
            return True
        return os.path.exists(self.reused_file()) and all(os.path.exists(path) for path in self.kept_files())

    def reused_file(self):
        """The mark of a step restored from kept runs instead of run here: beside its first output."""
        return self.outputs[0] + REUSED_SUFFIX

    def machine_file(self):
        """Where the runner records where and how the step ran (CPU, dtype, threads, wall time): beside its first
        output."""
        return self.outputs[0] + MACHINE_SUFFIX

    def folders(self):
        """The folders the step writes its outputs to."""
        return {os.path.dirname(path) for path in self.outputs}

    def _paths_read_from(self, other):
        """The paths this step's flags name in folders `other` writes its outputs to."""
        folders = other.folders()
        return [part.strip() for name, value in self.flags.items()
                if name not in _WRITTEN_FLAGS and isinstance(value, str)
                for part in value.split(",") if _in_folders(part.strip(), folders)]

    def reads_from(self, other):
        """Whether a flag of this step names a path in a folder `other` writes its outputs to."""
        return bool(self._paths_read_from(other))

    def reads_only_kept_files_of(self, other):
        """Whether every path this step reads from `other` is a file `other` keeps (a learned vocabulary, say),
        so that `other`'s kept run serves it as well as a run here would; a checkpoint, a folder or a glob
        is not kept."""
        kept = {os.path.normpath(path) for path in other.kept_files()}
        return all(os.path.normpath(path) in kept for path in self._paths_read_from(other))

    def inputs(self):
        """What the step's outputs depend on: {flag: value} of its flags, each file one names (comma-separated
        paths and globs included) as its name, size and, up to 64 MB, content hash; outputs left out."""
        found = {}
        for name, value in sorted(self.flags.items()):
            if name in _OUTPUT_FLAGS:
                continue
            found[name] = value
            if isinstance(value, str):
                files = [path for part in value.split(",") for path in _matching(part.strip())]
                if files:
                    found[name] = [value] + [_describe(path) for path in files]
        return found

    def inputs_file(self):
        """Where the inputs of the finished step are kept: beside its first output."""
        return self.outputs[0] + INPUTS_SUFFIX


def portable_inputs(inputs, output_dir, produced=()):
    """`Step.inputs()` without where things are, comparable between machines and output folders.

    A file is its size and content hash, wherever it is ({"files": [...]});
    a path in a folder a step of the plan writes to (`produced`: the
    vocabulary the first row learned, pre-training records) is its place
    under `output_dir` ({"path": "${OUTPUT_DIR}/..."}), whether it exists yet
    or not: what it holds is settled by the inputs of the step that writes
    it. Two runs with the same portable inputs ran the same command on the
    same data. Portable inputs stay as they are.

    Args:
      inputs: {flag: value} of `Step.inputs()`, or portable already.
      output_dir: the study's --output_dir.
      produced: the folders the plan's steps write their outputs to.
    """
    root = os.path.normpath(output_dir)
    folders = {os.path.normpath(folder) for folder in produced}

    def relative(part):
        path = os.path.normpath(part) if part else part
        if path and (path == root or path.startswith(root + os.sep)):
            return "${OUTPUT_DIR}" + path[len(root):]
        return part

    def is_produced(value):
        parts = [os.path.normpath(part.strip()) for part in value.split(",") if part.strip()]
        return bool(parts) and all(_in_folders(part, folders) for part in parts)

    def portable(value):
        if isinstance(value, list):  # [flag value, "<path>: <size> bytes, <hash>", ...]
            if is_produced(value[0]):
                return {"path": ",".join(relative(part.strip()) for part in value[0].split(","))}
            return {"files": [description.rsplit(": ", 1)[-1] for description in value[1:]]}
        if isinstance(value, str):
            text = ",".join(relative(part.strip()) for part in value.split(","))
            return {"path": text} if is_produced(value) else text
        return value

    return {name: portable(value) for name, value in inputs.items()}


def first_difference(recorded, current, output_dir, produced=()):
    """(flag, recorded value, current value) of the first flag whose portable inputs differ, or None."""
    portable_recorded = portable_inputs(recorded, output_dir, produced)
    portable_current = portable_inputs(current, output_dir, produced)
    for name in sorted(set(recorded) | set(current)):
        if portable_recorded.get(name) != portable_current.get(name):
            return name, recorded.get(name), current.get(name)
    return None


def _in_folders(path, folders):
    """Whether `path` is one of `folders` or lies in one."""
    return any(path == folder or path.startswith(folder + os.sep) for folder in folders)


def output_directories(steps):
    """Every folder the steps write into: create_pretraining_data and the probe need them to exist."""
    return sorted({os.path.dirname(path) for step in steps for path in step.outputs})


def _matching(pattern):
    """The local files a flag's value names: a file, a glob's matches, or the files directly in a folder."""
    if not pattern or "://" in pattern:
        return []
    if any(c in pattern for c in "*?["):
        return sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
    if os.path.isdir(pattern):
        return sorted(p for p in glob.glob(os.path.join(pattern, "*")) if os.path.isfile(p))
    return [pattern] if os.path.isfile(pattern) else []


def _describe(path):
    size = os.path.getsize(path)
    if size > _HASHED_BYTES:
        return "%s: %d bytes" % (path, size)
    return "%s: %d bytes, %s" % (path, size, file_system.content_hash(path))


def _shell_word(word):
    """Quotes a word for the shell, leaving ${NAME} placeholders (a dry run's paths) to expand."""
    parts = re.split(r"(\$\{[A-Z_]+\})", word)
    return "".join('"%s"' % part if _PLACEHOLDER.fullmatch(part) else shlex.quote(part)
                   for part in parts if part)


def _flag_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
