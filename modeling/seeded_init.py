"""BERT's seeded initialisation: the original initializers, drawn by name.

Initializers follow the original BERT: LayerNorm gamma ones, LayerNorm beta and
biases zeros, everything else truncated normal with stddev initializer_range
(0.02 for the classifier and SQuAD output weights, fixed in the original).
Each value is drawn on its own from (seed, original name), see
freezing/seeded_values.py, so runs are reproducible from `--random_seed` and
frozen random tensors can be regenerated instead of saved.
"""

import functools

from freezing import seeded_values
from modeling.checkpoint_names import original_variables

_FIXED_STDDEV_HEADS = ("output_weights", "cls/squad/output_weights")


def initializer_of(name, initializer_range):
    """(kind, stddev) of an original variable name; kind: truncated_normal | zeros | ones."""
    if name.endswith("LayerNorm/gamma"):
        return "ones", None
    if name.endswith("LayerNorm/beta") or name.endswith("bias"):
        return "zeros", None
    if name in _FIXED_STDDEV_HEADS:
        return "truncated_normal", 0.02
    return "truncated_normal", initializer_range


def initializers(config):
    """name -> (kind, stddev) for a BertConfig."""
    return functools.partial(initializer_of, initializer_range=config.initializer_range)


def initialize(model, seed, names=None):
    """Assigns seeded initial values to a built model's variables.

    Args:
      model: a built BertModel or task model, or a model of another family
        that gives its own `initializer_of(name)` (lm/model.py).
      seed: int, --random_seed.
      names: optional iterable of original names; default all.
    """
    variables = original_variables(model)
    initializer_of = getattr(model, "initializer_of", None) or initializers(model.config)
    seeded_values.assign_seeded(variables, variables if names is None else names, seed, initializer_of)
