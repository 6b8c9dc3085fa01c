"""`--dtype`: float32, or mixed precision with float32 variables.

bfloat16 keeps float32's exponent range and needs no loss scaling; float16
needs it, so its optimizer is wrapped in a dynamic LossScaleOptimizer.
"""

import tf_keras

DTYPES = {"float32": "float32", "bfloat16": "mixed_bfloat16", "float16": "mixed_float16"}


def set_dtype(dtype):
    """Sets the Keras global policy; call before building the model.

    Raises:
      ValueError: for an unknown dtype, listing the known ones.
    """
    if dtype not in DTYPES:
        raise ValueError("--dtype=%s is not supported; expected one of %s." % (dtype, ", ".join(DTYPES)))
    tf_keras.mixed_precision.set_global_policy(DTYPES[dtype])


def wrap_optimizer(optimizer, dtype):
    """Adds dynamic loss scaling for float16."""
    if dtype == "float16":
        return tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
    return optimizer


def uses_loss_scaling(optimizer):
    return isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
