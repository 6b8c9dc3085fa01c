"""The original-layout checkpoint names of our Keras variables, for every family.

Our checkpoints use the TF1 names and shapes of google-research/bert, so that
released checkpoints load here and ours load in the original code and its
tools; the language and translation models name their blocks the same way.
Every family's model lists its variables under those names with a
`checkpoint_variables()` method (BERT's in modeling/bert_model.py);
`original_variables(model)` checks that list and keeps it, once per model.

Shapes differ only in attention: Keras' MultiHeadAttention keeps heads as a
separate axis ([H, N, D] kernels, [N, D] biases, an [N, D, H] output kernel)
where the original stores [H, N*D], [N*D] and [N*D, H]. Heads are the major
axis in both, so a reshape converts exactly, for any head size.
"""

import collections
import types
import weakref

# Model Garden TransformerEncoderBlock weight suffix -> original name under
# bert/encoder/layer_<i>/.
_BLOCK_TO_ORIGINAL = collections.OrderedDict(
    [
        ("self_attention/query/kernel", "attention/self/query/kernel"),
        ("self_attention/query/bias", "attention/self/query/bias"),
        ("self_attention/key/kernel", "attention/self/key/kernel"),
        ("self_attention/key/bias", "attention/self/key/bias"),
        ("self_attention/value/kernel", "attention/self/value/kernel"),
        ("self_attention/value/bias", "attention/self/value/bias"),
        ("self_attention/attention_output/kernel", "attention/output/dense/kernel"),
        ("self_attention/attention_output/bias", "attention/output/dense/bias"),
        ("self_attention_layer_norm/gamma", "attention/output/LayerNorm/gamma"),
        ("self_attention_layer_norm/beta", "attention/output/LayerNorm/beta"),
        ("intermediate/kernel", "intermediate/dense/kernel"),
        ("intermediate/bias", "intermediate/dense/bias"),
        ("output/kernel", "output/dense/kernel"),
        ("output/bias", "output/dense/bias"),
        ("output_layer_norm/gamma", "output/LayerNorm/gamma"),
        ("output_layer_norm/beta", "output/LayerNorm/beta"),
    ]
)


class OriginalVariable(collections.namedtuple("OriginalVariable", ["variable", "shape"])):
    """A Keras variable and its shape in the original checkpoint layout.

    Fields:
      variable: the tf.Variable.
      shape: tuple of ints, the shape under the original name.
    """

    def to_original(self, value):
        """Reshapes a value of the variable's shape to the original layout."""
        return value.reshape(self.shape)

    def from_original(self, value):
        """Reshapes a value in the original layout to the variable's shape."""
        return value.reshape(tuple(self.variable.shape))


def _original_shape(suffix, shape):
    if suffix.startswith("self_attention/attention_output/kernel"):
        return (shape[0] * shape[1], shape[2])  # [N, D, H] -> [N*D, H]
    if suffix.startswith("self_attention/") and suffix.endswith("/kernel"):
        return (shape[0], shape[1] * shape[2])  # [H, N, D] -> [H, N*D]
    if suffix.startswith("self_attention/") and suffix.endswith("/bias") and len(shape) == 2:
        return (shape[0] * shape[1],)  # [N, D] -> [N*D]
    return tuple(shape)


def original_attention_shape(suffix, shape):
    """The original layout of a Keras MultiHeadAttention weight ("query/kernel", "attention_output/kernel", ...)."""
    return _original_shape("self_attention/" + suffix, tuple(shape))


def block_variables(block, prefix):
    """Maps one TransformerEncoderBlock's weights to `prefix/...` names."""
    found = {}
    for variable in block.weights:
        name = variable.name.split(":")[0]
        matches = [s for s in _BLOCK_TO_ORIGINAL if name.endswith("/" + s)]
        # "output/kernel" is also a suffix of "attention_output/kernel": the
        # longest match is the one meant.
        if not matches:
            raise ValueError("Variable %s of %s has no original BERT name." % (name, prefix))
        suffix = max(matches, key=len)
        found[prefix + "/" + _BLOCK_TO_ORIGINAL[suffix]] = OriginalVariable(
            variable, _original_shape(suffix, tuple(variable.shape))
        )
    if len(found) != len(_BLOCK_TO_ORIGINAL):
        raise ValueError(
            "%s: expected the %d weights of a TransformerEncoderBlock, found %d (%s)."
            % (prefix, len(_BLOCK_TO_ORIGINAL), len(found), sorted(found))
        )
    return found


# The map is built once per model: a training run consults it many times.
_CACHE = weakref.WeakKeyDictionary()


def original_variables(model):
    """{checkpoint name: OriginalVariable} of a built model (read-only), built once per model.

    The model names its variables with `checkpoint_variables()`; a weight it
    leaves unnamed is refused, since it would silently not be saved.
    """
    if model not in _CACHE:
        _CACHE[model] = types.MappingProxyType(_build_original_variables(model))
    return _CACHE[model]


def _build_original_variables(model):
    if not hasattr(model, "checkpoint_variables"):
        raise TypeError("%s has no checkpoint_variables(): a model of a family names its variables "
                        "(training/family.py)." % type(model).__name__)
    names = model.checkpoint_variables()
    # Every trainable weight must have a name, or it would silently not be saved.
    named = {id(entry.variable) for entry in names.values()}
    unnamed = [v.name for v in model.weights if id(v) not in named]
    if unnamed:
        raise ValueError("Variables without a checkpoint name: %s" % unnamed)
    return names
