"""The initializer every family's Keras layers are built with (values are then drawn by name, seeded)."""

import tf_keras


def create_initializer(initializer_range):
    """The original's initializer: normal truncated at 2 stddev."""
    return tf_keras.initializers.TruncatedNormal(stddev=initializer_range)
