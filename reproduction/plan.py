"""A step of a plan: one command line of one of our entry points.

A step is a program (`run_pretraining.py`, ...) and its flags; the runner
runs it in process with the same flags that `plan.sh` writes, so the plan
is what runs. A step is finished when its outputs exist (entry points write
them only when complete), which is what makes a re-run skip it. Each study
builds its own steps (its layout under --output_dir is in its module).
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
INPUTS_SUFFIX = ".inputs.json"
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
    """

    name: str
    row: str
    stage: str
    program: str
    flags: dict
    outputs: tuple
    seed: Optional[int] = None
    distributed: bool = False

    def command_line(self, python="python", distribution_variable="DISTRIBUTION_FLAGS"):
        """The shell command; training steps end with "${DISTRIBUTION_FLAGS}" for the cluster's flags.

        `python` is written as is (it may be a shell variable); everything else is quoted.
        """
        words = [self.program] + ["--%s=%s" % (k, _flag_value(v)) for k, v in self.flags.items()]
        line = python + " " + " ".join(_shell_word(w) for w in words)
        if distribution_variable and self.distributed:
            line += " ${%s}" % distribution_variable
        return line

    def is_done(self):
        return all(os.path.exists(path) for path in self.outputs)

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
