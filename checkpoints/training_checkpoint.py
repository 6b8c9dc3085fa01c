"""Training checkpoints: the original layout plus what an exact resume needs.

`output_dir/model.ckpt-<step>` holds, under the original names, the model,
`global_step` and the Adam slots `<variable>/adam_m`, `<variable>/adam_v`: the
layout of an original-BERT training checkpoint, so either codebase can read
it. What the original layout has no place for goes beside it, in
`output_dir/training_state/ckpt-<step>` (a TF2 object checkpoint): the input
iterator's position (shuffle buffer included) and the dropout generators'
states. With both, a resumed run continues bit for bit.

Write order makes a crash at any moment safe: training state, then model,
then the `checkpoint` index file that names the step; a step is only used
once the index names it.

In a multi-worker run each worker reads its own share of the input, so each
writes its own training state, `training_state/worker-<k>-of-<n>/ckpt-<step>`;
the chief (worker 0) writes the rest, once every worker's state is written.
"""

import os

import tensorflow as tf
from absl import logging

from checkpoints import tf1_checkpoint
from checkpoints.original_names import original_variables
from freezing import seeded_values

CHECKPOINT_BASENAME = "model.ckpt"
STATE_DIRECTORY = "training_state"
GLOBAL_STEP = "global_step"
# As the TF1 Estimator's RunConfig: older checkpoints are deleted.
KEEP_CHECKPOINT_MAX = 5
# (worker id, number of workers) of a single-process run.
SINGLE_WORKER = (0, 1)


def optimizer_slots(optimizer, variable):
    """The original-named slots of a variable ("adam_m", "adam_v"), through a LossScaleOptimizer too."""
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    return inner.slots(variable)


def checkpoint_prefix(output_dir, step):
    return os.path.join(output_dir, "%s-%d" % (CHECKPOINT_BASENAME, step))


def state_prefix(output_dir, step, worker=SINGLE_WORKER):
    """The training state of `step` written by `worker`, (id, number of workers).

    A multi-worker state sits in a folder of its worker and cluster size: a
    resume with another number of workers finds none, and restarts the input
    from its seed rather than restore another sharding's position.
    """
    worker_id, num_workers = worker
    directory = os.path.join(output_dir, STATE_DIRECTORY)
    if num_workers > 1:
        directory = os.path.join(directory, "worker-%d-of-%d" % (worker_id, num_workers))
    return os.path.join(directory, "ckpt-%d" % step)


def write_state(output_dir, state, step, worker=SINGLE_WORKER):
    """Writes one worker's training state of `step`; returns its prefix."""
    return state.write(state_prefix(output_dir, step, worker))


def _trained_entries(model, variables):
    trained = {id(v) for v in variables}
    return {
        name: entry
        for name, entry in original_variables(model).items()
        if id(entry.variable) in trained
    }


def training_tensors(model, optimizer, variables, omit=()):
    """{original name: value} of the model, the trained variables' slots and global_step."""
    tensors = tf1_checkpoint.model_tensors(model)
    for name in omit:
        del tensors[name]
    for name, entry in _trained_entries(model, variables).items():
        for slot_name, slot in optimizer_slots(optimizer, entry.variable).items():
            tensors["%s/%s" % (name, slot_name)] = entry.to_original(slot.numpy())
    tensors[GLOBAL_STEP] = tf.constant(int(optimizer.iterations.numpy()), tf.int64)
    return tensors


def save(output_dir, model, optimizer, state, variables, frozen_manifest=None):
    """Writes a training checkpoint for the optimizer's current step.

    Args:
      output_dir: the run's directory.
      model: a built task model.
      optimizer: a built optimizer (its `iterations` is the global step).
      state: tf.train.Checkpoint of the extra training state, or None (the
        chief of a multi-worker run: every worker wrote its own, write_state).
      variables: the trained variables (they have optimizer slots).
      frozen_manifest: with --save_frozen=seed, the manifest of the frozen
        variables left out of the checkpoint and regenerated on load.

    Returns:
      The model checkpoint prefix.
    """
    step = int(optimizer.iterations.numpy())
    if state is not None:
        write_state(output_dir, state, step)
    prefix = checkpoint_prefix(output_dir, step)
    omit = ()
    if frozen_manifest:
        seeded_values.write_manifest(prefix, frozen_manifest)
        omit = list(frozen_manifest["variables"])
    tf1_checkpoint.write_tensors(prefix, training_tensors(model, optimizer, variables, omit))
    previous = tf.train.get_checkpoint_state(output_dir)
    kept = list(previous.all_model_checkpoint_paths) if previous else []
    kept = [p for p in kept if os.path.basename(p) != os.path.basename(prefix)] + [prefix]
    removed, kept = kept[:-KEEP_CHECKPOINT_MAX], kept[-KEEP_CHECKPOINT_MAX:]
    _write_checkpoint_index(output_dir, kept)
    for old in removed:
        _delete_checkpoint(output_dir, old)
    logging.info("Saved checkpoint %s", prefix)
    return prefix


def _write_checkpoint_index(output_dir, prefixes):
    """Writes the `checkpoint` file TF1 tools read, atomically, newest last.

    Paths are relative, as the Estimator writes them, so the directory can move.
    """
    names = [os.path.basename(p) for p in prefixes]
    lines = ['model_checkpoint_path: "%s"' % names[-1]]
    lines += ['all_model_checkpoint_paths: "%s"' % name for name in names]
    path = os.path.join(output_dir, "checkpoint")
    with tf.io.gfile.GFile(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    tf.io.gfile.rename(path + ".tmp", path, overwrite=True)


def _delete_checkpoint(output_dir, prefix):
    prefix = prefix if os.path.isabs(prefix) else os.path.join(output_dir, prefix)
    step = int(prefix.rsplit("-", 1)[1])
    workers_state = os.path.join(output_dir, STATE_DIRECTORY, "worker-*", "ckpt-%d" % step)
    for pattern in (prefix + ".*", state_prefix(output_dir, step) + ".*", workers_state + ".*"):
        for path in tf.io.gfile.glob(pattern):
            tf.io.gfile.remove(path)


def latest(output_dir):
    """The newest complete training checkpoint prefix in output_dir, or None."""
    if not tf.io.gfile.isdir(output_dir):
        return None
    return tf.train.latest_checkpoint(output_dir)


def restore(prefix, model, optimizer, state, variables, worker=SINGLE_WORKER):
    """Restores model, slots, global_step and the extra state from `prefix`.

    Frozen variables saved by seed are regenerated (and verified) from the
    manifest beside the checkpoint; `variables` are the trained ones; the
    state is `worker`'s own.

    Raises:
      ValueError: when the checkpoint lacks a model variable or a slot (it is
        not a training checkpoint of this model).
    """
    result = tf1_checkpoint.load_checkpoint(model, prefix)
    if result.missing:
        raise ValueError(
            "Cannot resume from %s: it lacks %d model variables (%s...). Is output_dir "
            "shared with a different model?" % (prefix, len(result.missing), result.missing[0])
        )
    reader = tf.train.load_checkpoint(prefix)
    available = reader.get_variable_to_shape_map()
    for name, entry in _trained_entries(model, variables).items():
        for slot_name, slot in optimizer_slots(optimizer, entry.variable).items():
            key = "%s/%s" % (name, slot_name)
            if key not in available:
                raise ValueError("Cannot resume from %s: optimizer slot %s is missing." % (prefix, key))
            slot.assign(entry.from_original(reader.get_tensor(key)))
    step = int(reader.get_tensor(GLOBAL_STEP))
    optimizer.iterations.assign(step)
    if state is not None:
        state_path = state_prefix(os.path.dirname(prefix), step, worker)
        if tf.io.gfile.glob(state_path + ".index"):
            state.read(state_path).assert_consumed()
        else:
            logging.warning(
                "No training state at %s (checkpoint from another tool, or from a run with another "
                "number of workers?): the input pipeline and dropout restart from their seeds.", state_path
            )
    logging.info("Resumed from %s at global step %d.", prefix, step)
    return step
