"""`hidden_act` names of bert_config.json -> activation functions, through Model Garden's tf_utils.

"gelu" is the original BERT's tanh approximation, which released checkpoints
were trained with (Model Garden's "gelu" is the same). "gelu_exact", the erf
form, has no name there, so it is our one addition.
"""

import functools

import tensorflow as tf
from official.modeling import activations as garden_activations
from official.modeling import tf_utils

# The `hidden_act` values a config may name.
NAMES = ("gelu", "gelu_exact", "relu", "tanh", "linear")

gelu = garden_activations.gelu
gelu_exact = functools.partial(tf.nn.gelu, approximate=False)


def get_activation(name):
    """Maps a `hidden_act` name to a function.

    Raises:
      ValueError: for a name the original config format does not know.
    """
    if name not in NAMES:
        raise ValueError("Unsupported activation %r; expected one of %s." % (name, ", ".join(sorted(NAMES))))
    return gelu_exact if name == "gelu_exact" else tf_utils.get_activation(name)
