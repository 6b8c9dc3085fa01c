"""Activations named as in `bert_config.json` `hidden_act`.

"gelu" is the original BERT's tanh approximation; released checkpoints were
trained with it. "gelu_exact" is the erf form, for checkpoints trained
elsewhere with it (e.g. Model Garden's default).
"""

import tensorflow as tf


def gelu(x):
    """The original BERT's GELU: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))."""
    return tf.nn.gelu(x, approximate=True)


def gelu_exact(x):
    """GELU with the exact Gaussian CDF: 0.5x(1 + erf(x / sqrt(2)))."""
    return tf.nn.gelu(x, approximate=False)


def linear(x):
    return x


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_exact": gelu_exact,
    "relu": tf.nn.relu,
    "tanh": tf.tanh,
    "linear": linear,
}


# The `hidden_act` values a config may name.
NAMES = tuple(_ACTIVATIONS)


def get_activation(name):
    """Maps a `hidden_act` name to a function.

    Raises:
      ValueError: for a name the original config format does not know.
    """
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            "Unsupported activation %r; expected one of %s."
            % (name, ", ".join(sorted(_ACTIVATIONS)))
        ) from None
