"""Reading and writing checkpoints in the original BERT (TF1, name-based) layout.

`load_checkpoint` initialises a model from a released `bert_model.ckpt`, an
original-BERT training checkpoint (its Adam slots and `global_step` are
ignored) or one of ours. `save_checkpoint` writes a TensorFlow V2 checkpoint
bundle (`<prefix>.index`, `<prefix>.data-*`) whose variables carry the
original names and shapes, which `tf.train.load_checkpoint`, TF1's Saver and
`init_from_checkpoint`, and the original code all read.
"""

import collections
import os

import numpy as np
import tensorflow as tf
from absl import logging

from checkpoints.original_names import original_variables
from freezing import seeded_values

# Training state that the original's checkpoints carry and model init ignores.
OPTIMIZER_SLOT_SUFFIXES = ("/adam_m", "/adam_v")
TRAINING_STATE_NAMES = ("global_step",)
# The output layer of run_classifier.py's model: its first dimension is the task's number of labels.
CLASSIFIER_HEAD = ("output_weights", "output_bias")


class LoadResult(
    collections.namedtuple("LoadResult", ["loaded", "missing", "unexpected", "ignored", "regenerated"])
):
    """What `load_checkpoint` did, as sorted lists of original names.

    Fields:
      loaded: model variables assigned from the checkpoint (regenerated ones included).
      missing: model variables the checkpoint lacks (left at their init).
      unexpected: checkpoint variables the model lacks (e.g. `cls/` heads
        when fine-tuning).
      ignored: training state skipped on purpose (optimizer slots, global_step).
      regenerated: frozen random variables the checkpoint left out and its
        manifest (`<prefix>.frozen.json`) describes, regenerated from the seed
        and verified against their checksums.
    """


def resolve_checkpoint(path):
    """Returns a checkpoint prefix for a prefix or a directory.

    Raises:
      ValueError: when nothing readable is there, naming the path.
    """
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError("No checkpoint found in directory %s." % path)
        return latest
    if not tf.io.gfile.exists(path + ".index"):
        raise ValueError(
            "Checkpoint %s not found: expected the file %s.index." % (path, path)
        )
    return path


def checkpoint_variable_names(checkpoint_path):
    """The model variable names a checkpoint holds (or regenerates), training state excluded."""
    path = resolve_checkpoint(checkpoint_path)
    names = {name for name, _ in tf.train.list_variables(path)}
    manifest = seeded_values.read_manifest(path)
    if manifest:
        names |= set(manifest["variables"])
    return sorted(n for n in names if not is_training_state(n))


def is_training_state(name):
    return name in TRAINING_STATE_NAMES or name.endswith(OPTIMIZER_SLOT_SUFFIXES)


def load_checkpoint(model, checkpoint_path):
    """Assigns a built model's variables from an original-layout checkpoint.

    All shapes are checked before any variable is assigned, so a mismatch
    leaves the model untouched. Variables saved by seed (`--save_frozen=seed`)
    are regenerated from the manifest beside the checkpoint.

    Args:
      model: a built `BertModel` or task model.
      checkpoint_path: a checkpoint prefix or a directory holding one.

    Returns:
      A `LoadResult`.

    Raises:
      ValueError: when a variable's shape differs, naming the variable and
        both shapes; when the manifest is malformed or a regenerated variable
        fails its checksum, naming the manifest.
    """
    path = resolve_checkpoint(checkpoint_path)
    reader = tf.train.load_checkpoint(path)
    checkpoint_shapes = dict(reader.get_variable_to_shape_map())
    targets = original_variables(model)
    manifest = seeded_values.read_manifest(path)
    by_seed = set()
    if manifest:
        for name in manifest["variables"]:
            spec = seeded_values.variable_spec(manifest, name, path)
            if name not in checkpoint_shapes:
                checkpoint_shapes[name] = spec["shape"]
                by_seed.add(name)

    mismatches, source = [], "Checkpoint %s" % path
    for name, entry in targets.items():
        if name in checkpoint_shapes and tuple(checkpoint_shapes[name]) != entry.shape:
            if name in by_seed:
                source = "Checkpoint %s with its manifest %s%s" % (path, path, seeded_values.MANIFEST_SUFFIX)
            mismatches.append(
                "%s: %s shape %s, model shape %s"
                % (name, "manifest" if name in by_seed else "checkpoint",
                   list(checkpoint_shapes[name]), list(entry.shape))
            )
    if mismatches:
        # One line, as every error of the entry points. Only the classifier's output layer differing is
        # another label count (another --task_name), not another encoder.
        names = [m.split(":", 1)[0] for m in mismatches]
        cause = ("a classifier fine-tuned for another number of labels: another --task_name?"
                 if set(names) <= set(CLASSIFIER_HEAD) else "a changed head_size or bert_config?")
        raise ValueError(
            "%s does not fit the model (%s). "
            "Shape mismatch for %d variable(s): %s" % (source, cause, len(mismatches), "; ".join(mismatches))
        )

    loaded, missing = [], []
    for name, entry in targets.items():
        if name not in checkpoint_shapes:
            missing.append(name)
            continue
        if name in by_seed:
            value = seeded_values.regenerate(manifest, name, path)
        else:
            value = reader.get_tensor(name)
        value = entry.from_original(value)
        entry.variable.assign(value.astype(entry.variable.dtype.as_numpy_dtype))
        loaded.append(name)
    ignored = sorted(n for n in checkpoint_shapes if n not in targets and is_training_state(n))
    unexpected = sorted(
        n for n in checkpoint_shapes if n not in targets and not is_training_state(n)
    )
    regenerated = sorted(by_seed & set(loaded))
    result = LoadResult(sorted(loaded), sorted(missing), unexpected, ignored, regenerated)
    _log_load(path, result)
    return result


def _log_load(path, result):
    logging.info(
        "Loaded %d variables from %s (%d regenerated from their seed; %d optimizer/step "
        "entries ignored).",
        len(result.loaded),
        path,
        len(result.regenerated),
        len(result.ignored),
    )
    if result.missing:
        logging.warning(
            "%d model variables are not in %s and keep their initial values:\n  %s",
            len(result.missing),
            path,
            "\n  ".join(result.missing),
        )
    # Another task's head (cls/ of pre-training, a classifier's output layer) is left out as the original
    # leaves it; the checkpoint's encoder variables left out mean a deeper or another encoder than the model's.
    encoder = [name for name in result.unexpected if name.startswith("bert/")]
    if encoder:
        logging.warning(
            "%d variables of the checkpoint's encoder are not in this model, which has fewer layers or another "
            "structure (is --bert_config_file the checkpoint's?):\n  %s", len(encoder), "\n  ".join(encoder))
    heads = [name for name in result.unexpected if name not in encoder]
    if heads:
        logging.info(
            "%d checkpoint variables are not used by this model:\n  %s",
            len(heads),
            "\n  ".join(heads),
        )


def model_tensors(model):
    """{original name: numpy value in the original shape} of a built model."""
    return {
        name: entry.to_original(entry.variable.numpy())
        for name, entry in original_variables(model).items()
    }


def write_tensors(checkpoint_prefix, tensors):
    """Writes {name: array} as a V2 checkpoint bundle at `checkpoint_prefix`."""
    directory = os.path.dirname(checkpoint_prefix)
    if directory:
        tf.io.gfile.makedirs(directory)
    names = sorted(tensors)
    tf.raw_ops.SaveV2(
        prefix=checkpoint_prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.convert_to_tensor(np.asarray(tensors[n])) for n in names],
    )
    return checkpoint_prefix


def save_checkpoint(model, checkpoint_prefix, extra_tensors=None, omit=()):
    """Saves a built model in the original layout.

    Args:
      model: a built `BertModel` or task model.
      checkpoint_prefix: e.g. `output_dir/model.ckpt-1000`.
      extra_tensors: optional {name: value} saved alongside, e.g.
        `global_step` and `<var>/adam_m` slots of a training checkpoint.
      omit: original names left out (frozen variables saved by seed).

    Returns:
      The checkpoint prefix.
    """
    tensors = model_tensors(model)
    for name in omit:
        del tensors[name]
    for name, value in (extra_tensors or {}).items():
        if name in tensors:
            raise ValueError("Extra tensor %s would overwrite a model variable." % name)
        tensors[name] = value
    return write_tensors(checkpoint_prefix, tensors)
