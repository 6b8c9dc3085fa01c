"""Frozen random weights a SavedModel draws when it is loaded, instead of storing them.

A weight frozen at its seeded random initialisation (--freeze with --reinit,
saved as its seed: --save_frozen=seed) is a pure function of the seed, its
original checkpoint name and shape (freezing/seeded_values.py). In the
SavedModel each such weight is a `RegeneratedWeight`: a resource of its own
(a variable outside the SavedModel's checkpoint) that the SavedModel's
initialisation op fills, at load, with the same stateless generator and key
the checkpoints use, inside the graph. TensorFlow's loaders (tf.saved_model.load,
TF Serving) run that op after restoring the stored variables, so the SavedModel
stays self-contained: TensorFlow alone regenerates it.

The guarantee: the exporter draws each weight as the graph will, and exports
only if it equals the checkpoint's value and the sha256 the training run
recorded in its manifest; it records the weight's fingerprint (FarmHash64 of
its float32 bytes, the content hash TensorFlow has as an op), and the
initialisation op compares the drawn weight with it. A TensorFlow that draws
differently fails the load, naming the weight and its group, rather than serve
another model.

The model's own tf.Variable objects are left as they are; while the exporter
traces and saves the signatures, each regenerated variable reads the
resource's handle instead of its own (`Regeneration.swapped`), so the traced
graph reads the regenerated weight and the variable is not saved.
"""

import contextlib
import uuid

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resource_variable_ops

from freezing import seeded_values


def fingerprint(value):
    """FarmHash64 of a float32 tensor's bytes: uint8 [1, 8] (in eager mode or in a graph)."""
    return tf.fingerprint(tf.reshape(tf.bitcast(tf.convert_to_tensor(value, tf.float32), tf.uint8), [1, -1]))


def draw(name, spec, seed, variable_shape):
    """A manifest entry's weight in the Keras variable's shape (a reshape of the original layout), as the
    SavedModel's initialisation op draws it (in eager mode or in a graph)."""
    kind = spec["initializer"]
    value = seeded_values.seeded_tensor(spec["shape"], kind, spec.get(seeded_values.SCALE_FIELD.get(kind, "stddev")),
                                        seeded_values.key_of(name, seed))
    return tf.reshape(value, list(variable_shape))


class RegeneratedWeight(tf.saved_model.experimental.TrackableResource):
    """One frozen weight, drawn by the SavedModel's initialisation op.

    name: the original checkpoint name (the generator's key). group: its
    parameter group, for messages. spec: its manifest entry (initializer,
    stddev or limit, shape in the original layout). seed: the run's
    random_seed. variable_shape: the Keras variable's shape. expected: the
    fingerprint of the weight drawn at export, uint8 [1, 8]. export_id: unique to the export.
    """

    def __init__(self, name, group, spec, seed, variable_shape, expected, export_id):
        self.weight_name, self.group = name, group
        self._shared_name = "regenerated/%s/%s" % (export_id, name)
        self._spec, self._seed = dict(spec), seed
        self._variable_shape = list(variable_shape)
        self._expected = np.asarray(expected, np.uint8)
        super().__init__()

    def _create_resource(self):
        # As tf.Variable makes its handle: with the shape attached, which the model's ops infer their shapes from.
        # In a graph (the SavedModel's), the resource is named after the export and the weight: an empty name
        # would be the op's, the same for every weight; names of this export alone keep two models loaded in
        # one process apart. Eagerly (while exporting), it is anonymous.
        eager = tf.executing_eagerly()
        return resource_variable_ops._variable_handle_from_shape_and_dtype(  # pylint: disable=protected-access
            self._variable_shape, tf.float32, shared_name=None if eager else self._shared_name, name="regenerated",
            graph_mode=not eager)

    def _initialize(self):
        value = draw(self.weight_name, self._spec, self._seed, self._variable_shape)
        check = tf.debugging.assert_equal(
            fingerprint(value), tf.constant(self._expected),
            message="The frozen weight %s (group %s), drawn from its seed at load, differs from the one exported: "
                    "this TensorFlow's random generator (%s) draws differently, and would serve another model. "
                    "Load the full export, or export again with this TensorFlow."
                    % (self.weight_name, self.group, seeded_values.GENERATOR))
        with tf.control_dependencies([check]):
            return tf.raw_ops.AssignVariableOp(resource=self.resource_handle, value=value)


class Regeneration:
    """The regenerated weights of one export: [(tf.Variable, RegeneratedWeight)]."""

    def __init__(self, pairs):
        self.pairs = list(pairs)
        self.weights = [weight for _, weight in self.pairs]
        self._ids = {id(variable) for variable, _ in self.pairs}

    def stored(self, variables):
        """The variables the SavedModel stores: all but the regenerated ones."""
        return [variable for variable in variables if id(variable) not in self._ids]

    @contextlib.contextmanager
    def swapped(self):
        """Within: each regenerated variable reads its RegeneratedWeight's handle (for tracing and saving)."""
        inner = [(_resource_variable(variable), weight) for variable, weight in self.pairs]
        originals = [(variable, variable._handle) for variable, _ in inner]  # pylint: disable=protected-access
        try:
            for variable, weight in inner:
                variable._handle = weight.resource_handle  # pylint: disable=protected-access
            yield
        finally:
            for variable, handle in originals:
                variable._handle = handle  # pylint: disable=protected-access


def _resource_variable(variable):
    """The resource variable that holds a model variable's value: under a mixed-precision policy (--dtype=bfloat16)
    a Keras layer's variable is an AutoCastVariable wrapping it, and reads go through the wrapped one's handle."""
    return getattr(variable, "_variable", variable)  # pylint: disable=protected-access


def from_manifest(variables, manifest, group_of, checkpoint_prefix=""):
    """The Regeneration of the manifest's weights, each checked against the model's value and the manifest.

    Args:
      variables: {original name: checkpoints.original_names.OriginalVariable} of the model.
      manifest: a checkpoint's seed manifest (seeded_values.read_manifest).
      group_of: original name -> its parameter group ("ffn", ...), for messages.
      checkpoint_prefix: the checkpoint the manifest belongs to, for messages.

    Raises:
      ValueError: naming the weight, when the weight its seed draws differs from the
        manifest's sha256 (seeded_values.regenerate) or, with its group, from the
        model's loaded value.
    """
    pairs = []
    export_id = uuid.uuid4().hex
    for name in sorted(manifest["variables"]):
        if name not in variables:
            continue  # the task's head of another model (a pre-training checkpoint's): not exported
        spec = seeded_values.variable_spec(manifest, name, checkpoint_prefix)
        entry = variables[name]
        # The manifest's own check (its sha256), with the generator the graph uses (seeded_tensor).
        drawn = entry.from_original(seeded_values.regenerate(manifest, name, checkpoint_prefix))
        if not np.array_equal(drawn, entry.variable.numpy()):
            raise ValueError(
                "The frozen weight %s (group %s) of the model is not the one its seed draws: it was not loaded from "
                "this checkpoint's seed, or changed since. Export with --save_frozen=values to store it."
                % (name, group_of(name)))
        pairs.append((entry.variable, RegeneratedWeight(name, group_of(name), spec, manifest["random_seed"],
                                                        entry.variable.shape, fingerprint(drawn).numpy(), export_id)))
    return Regeneration(pairs)
