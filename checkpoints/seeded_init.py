"""A model's variables drawn by (seed, original name).

Each value is drawn on its own from (seed, original checkpoint name), see
freezing/seeded_values.py, so runs are reproducible from `--random_seed` and
frozen random tensors can be regenerated instead of saved. The model says how
each variable is drawn: every family's model has `checkpoint_variables()` (its
original names, original_names.py) and `initializer_of(name)` -> (kind, scale)
(BERT's scheme or the NMT toolkit's, layers/initializers.py).
"""

from checkpoints.original_names import original_variables
from freezing import seeded_values


def initialize(model, seed, names=None):
    """Assigns seeded initial values to a built model's variables.

    Args:
      model: a built model of any family (BertModel or a BERT task model,
        TransformerLm, TransformerNmt).
      seed: int, --random_seed.
      names: optional iterable of original names; default all.
    """
    variables = original_variables(model)
    seeded_values.assign_seeded(variables, variables if names is None else names, seed, model.initializer_of)
