"""Which frozen weights of a BERT export are drawn at load rather than stored (--save_frozen=seed).

The checkpoint's seed manifest (written by --save_frozen=seed) lists the
weights frozen at their seeded random initialisation; a weight frozen from a
pre-trained checkpoint (no --reinit) is not in it, and is stored as usual.
serving/regenerated.py makes the SavedModel draw the listed ones.
"""

from checkpoints import original_names, tf1_checkpoint, training_checkpoint
from freezing import seeded_values
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from serving import regenerated


def regeneration(model, checkpoint_prefix, save_frozen):
    """The serving.regenerated.Regeneration of an export, or None when every variable is stored.

    Args:
      model: the task model (classifier, SQuAD, encoder) holding the checkpoint's values.
      checkpoint_prefix: the checkpoint they were loaded from (its manifest beside it), or None.
      save_frozen: "seed", "values", or None for as the checkpoint (seed when it has a manifest).

    Raises:
      ValueError: --save_frozen=seed with a checkpoint without manifest; or, naming the
        weight and its group, a weight that its seed no longer draws (serving.regenerated.from_manifest).
    """
    manifest = seeded_values.read_manifest(checkpoint_prefix) if checkpoint_prefix else None
    if save_frozen == "values" or (save_frozen is None and manifest is None):
        return None
    if manifest is None:
        raise ValueError(
            "--save_frozen=seed: checkpoint %s has no seed manifest (%s), so none of its weights is known to be "
            "drawn from a seed: train with --freeze, --reinit and --save_frozen=seed, or export with "
            "--save_frozen=values." % (checkpoint_prefix, (checkpoint_prefix or "<checkpoint>") + seeded_values.MANIFEST_SUFFIX))
    return regenerated.from_manifest(original_names.original_variables(model), manifest, BERT_PARAMETER_GROUPS.label,
                                     checkpoint_prefix)


def regeneration_of_run(model, options):
    """run_classifier.py's and run_squad.py's --export_dir: with --save_frozen=seed, as the checkpoint exported.

    The model comes from the run's newest checkpoint (or --init_checkpoint without one): the weights
    its manifest lists are drawn at load; without a manifest (nothing frozen at a seeded random value)
    every variable is stored.
    """
    if options.save_frozen != "seed":
        return None
    prefix = training_checkpoint.latest(options.output_dir)
    if prefix is None and options.init_checkpoint:
        prefix = tf1_checkpoint.resolve_checkpoint(options.init_checkpoint)
    return regeneration(model, prefix, None)
