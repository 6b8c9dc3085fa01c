"""Initialisation schemes shared by the model families (values are then drawn by name, seeded).

Two schemes give each variable (kind, scale) for freezing/seeded_values.py:

- BERT's (`create_initializer`, `bert_initializer_of`): truncated normal of
  initializer_range (0.02) for every matrix, embeddings included; the
  classifier's and SQuAD's output weights keep the original's fixed 0.02.
- The NMT toolkit's ("marian"; Marian, the toolkit Bogoychev (2021) trained
  with, `toolkit_initializer_of`): weight matrices Glorot uniform,
  U(±sqrt(6 / (fan_in + fan_out))) with the fans of the [in, out] matrix; each
  embedding table U(±sqrt(3 / d)), so a row has unit length and, after the
  model's sqrt(d) multiplier, entries of unit variance, on a par with sinusoidal
  positions. Both schemes: LayerNorm gamma ones, beta zeros, every bias zeros.
"""

import math

import tf_keras

TOOLKIT = "marian"

# The original fixes these output weights' stddev at 0.02, whatever the config says.
_FIXED_STDDEV_HEADS = ("output_weights", "cls/squad/output_weights")


def create_initializer(initializer_range):
    """The original's initializer: normal truncated at 2 stddev."""
    return tf_keras.initializers.TruncatedNormal(stddev=initializer_range)


def bert_initializer_of(name, initializer_range):
    """(kind, stddev) of an original variable name in BERT's scheme; kind: truncated_normal | zeros | ones."""
    if name.endswith("LayerNorm/gamma"):
        return "ones", None
    if name.endswith("LayerNorm/beta") or name.endswith("bias"):
        return "zeros", None
    if name in _FIXED_STDDEV_HEADS:
        return "truncated_normal", 0.02
    return "truncated_normal", initializer_range


def embedding_limit(hidden_size):
    """The toolkit's embedding table: U(-a, a) with a = sqrt(3 / d), rows of about unit length."""
    return math.sqrt(3.0 / hidden_size)


def glorot_limit(fan_in, fan_out):
    """Glorot uniform: U(-a, a) with a = sqrt(6 / (fan_in + fan_out))."""
    return math.sqrt(6.0 / (fan_in + fan_out))


def toolkit_keras_initializers(hidden_size):
    """(embedding, kernel) Keras initializers of the toolkit's scheme, for layers built outside a seeded run."""
    limit = embedding_limit(hidden_size)
    return tf_keras.initializers.RandomUniform(-limit, limit), tf_keras.initializers.GlorotUniform()


def toolkit_initializer_of(name, shape):
    """(kind, scale) of an original variable under the toolkit's scheme.

    Args:
      name: the checkpoint name; "*embeddings" names an embedding table.
      shape: its original shape: [rows, d] for a table, [in, out] for a kernel.
    """
    if name.endswith("LayerNorm/gamma"):
        return "ones", None
    if name.endswith("LayerNorm/beta") or name.endswith("bias"):
        return "zeros", None
    if name.endswith("embeddings"):
        return "uniform", embedding_limit(shape[-1])
    return "uniform", glorot_limit(shape[0], shape[-1])
