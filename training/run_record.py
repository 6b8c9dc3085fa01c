"""What a training run was started with, kept beside its checkpoints: a resume must agree with it.

A run's record (run.json in --output_dir) names, by flag, what a resumed run
cannot change without silently training another run: the input shapes
(--train_batch_size, --max_seq_length, ...), --dtype and --optimizer, the
vocabulary (by content hash) and the training data (its files and sizes).
Each entry point builds its record from its flags (`build`) and, before it
builds any model or reads any data, `check`s it against the recorded one when
--output_dir holds checkpoints; the trainer writes it, in one step, when the
run is accepted (Task.records). A disagreement is one line naming the flag,
the recorded value and the new one. Schedule flags (--num_train_steps,
--learning_rate, ...) may change on a resume, as in the original.
"""

import hashlib
import json
import os

import tensorflow as tf

from checkpoints import training_checkpoint

RUN_FILE = "run.json"


def files_summary(paths):
    """The training files as recorded: "<n> files, <bytes> bytes, sha256:<hash of the sorted (name, size) list>".

    Names without their folders: the same data moved elsewhere (a local copy) is the same data.
    """
    listing = sorted((os.path.basename(p.rstrip("/")), tf.io.gfile.stat(p).length) for p in paths)
    digest = hashlib.sha256(json.dumps(listing).encode("utf-8")).hexdigest()
    return "%d files, %d bytes, sha256:%s" % (len(listing), sum(size for _, size in listing), digest[:16])


def build(options, flags, **extra):
    """The record of a run: the named flags' values, plus `extra` entries ({flag: value})."""
    record = {name: getattr(options, name) for name in flags}
    record.update(extra)
    return record


def text(record):
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def check(output_dir, record, resuming):
    """Refuses to resume a run whose record differs from the one in output_dir.

    Args:
      record: {flag: value} of this run (see `build`).
      resuming: whether output_dir holds a checkpoint this run would resume.

    Raises:
      ValueError: one line naming the first flag that differs, both values,
        and how to start afresh.
    """
    path = os.path.join(output_dir, RUN_FILE)
    if not resuming or not tf.io.gfile.exists(path):
        return
    with tf.io.gfile.GFile(path) as f:
        recorded = json.load(f)
    for name in sorted(set(recorded) | set(record)):
        old, new = recorded.get(name), record.get(name)
        if old != new:
            raise ValueError(
                "--%s: %s holds checkpoints of a run trained with %s, and this run has %s; resume with "
                "the same value, or start afresh with a new --output_dir." % (
                    name, output_dir, json.dumps(old), json.dumps(new)))


# What every training entry point records: its input shapes and how it computes.
COMMON_FLAGS = ("train_batch_size", "max_seq_length", "dtype", "optimizer")


def check_training_run(options, extra_flags=(), **entries):
    """Builds the run's record and, when it trains on in a folder with checkpoints, checks it.

    Call it before any model is built or data read. Returns the record ({flag: value}).
    """
    record = build(options, COMMON_FLAGS + tuple(extra_flags), **entries)
    if options.do_train:
        check(options.output_dir, record, training_checkpoint.latest(options.output_dir) is not None)
    return record


def records(record):
    """Task.records' entry that the trainer writes when the run is accepted (none for a task built without
    a record, as the benchmarks build them)."""
    return {RUN_FILE: text(record)} if record else {}
