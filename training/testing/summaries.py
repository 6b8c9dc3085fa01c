"""Reads back the TensorBoard scalars a run wrote, for tests."""

import os

import tensorflow as tf


def read_scalars(directory):
    """{tag: (step, value)} of the scalars in `directory`'s one events file (the last of each tag)."""
    [events] = [name for name in os.listdir(directory) if name.startswith("events.out.tfevents")]
    scalars = {}
    for event in tf.compat.v1.train.summary_iterator(os.path.join(directory, events)):
        for value in event.summary.value:
            scalars[value.tag] = (event.step, float(tf.make_ndarray(value.tensor)))
    return scalars
