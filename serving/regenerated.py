"""Frozen random weights a SavedModel draws when it is loaded, instead of storing them.

A weight frozen at its seeded random initialisation (--freeze with --reinit,
saved as its seed: --save_frozen=seed) is a pure function of the seed, its
original checkpoint name and shape (freezing/seeded_values.py). In the
SavedModel each such weight is a variable that its checkpoint (`variables/`)
leaves out, and one initialiser, a resource of the export (`Regenerator`),
fills all of them at load with the same stateless generator and keys the
checkpoints use, inside the graph. TensorFlow's loaders (tf.saved_model.load,
TF Serving) run it after restoring the stored variables, so the SavedModel
stays self-contained: TensorFlow alone regenerates it.

Why this shape: a loader pays for every function it instantiates and runs.
A resource per weight cost two functions per weight at load (create and
initialise), 2-3x the full export's load at MiniLM size; variables cost none,
and one initialiser draws every weight in a single function. The generator's
keys are a small stored variable rather than constants, so that TensorFlow's
graph optimiser does not compute each draw once more while folding constants.

The guarantee: the exporter draws each weight as the graph will, and exports
only if it equals the checkpoint's value and the sha256 the training run
recorded in its manifest; it records the weight's fingerprint (FarmHash64 of
its float32 bytes, the content hash TensorFlow has as an op), and the
initialiser compares each drawn weight with it. A TensorFlow that draws
differently fails the load, naming the weight and its group, rather than serve
another model.

The model's own tf.Variable objects are left as they are; while the exporter
traces and saves the signatures, each regenerated variable reads its
unstored twin's handle instead of its own (`Regeneration.swapped`), so the
traced graph reads the regenerated weight and the model's variable is not saved.

TensorFlow internals relied on (checked by regenerated_test.py on the versions
it names): a variable's `_handle` (the swap), and a variable's
`_serialize_to_tensors` and `_export_to_saved_model_graph` (left out of the
checkpoint, in the eager model and in the SavedModel's graph alike).
"""

import contextlib
import uuid

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resource_variable_ops

from freezing import seeded_values

# The TensorFlow versions whose internals above were checked (regenerated_test.py fails on any other).
CHECKED_TENSORFLOW_VERSIONS = ("2.20.",)


def fingerprint(value):
    """FarmHash64 of a float32 tensor's bytes: uint8 [1, 8] (in eager mode or in a graph)."""
    return tf.fingerprint(tf.reshape(tf.bitcast(tf.convert_to_tensor(value, tf.float32), tf.uint8), [1, -1]))


def draw(spec, key, variable_shape):
    """A manifest entry's weight in the Keras variable's shape (a reshape of the original layout), drawn with the
    generator's key (seeded_values.key_of: a list or an int64 tensor [2]), as the SavedModel's initialiser draws
    it (in eager mode or in a graph)."""
    kind = spec["initializer"]
    value = seeded_values.seeded_tensor(spec["shape"], kind, spec.get(seeded_values.SCALE_FIELD.get(kind, "stddev")),
                                        key)
    # No reshape where the layouts agree: every op is a node the loader instantiates.
    return value if list(spec["shape"]) == list(variable_shape) else tf.reshape(value, list(variable_shape))


class _UnstoredCopy(resource_variable_ops.UninitializedVariable):
    """An UnstoredVariable's twin in the SavedModel's graph: also left out of the checkpoint, so that TensorFlow 1's
    loader (whose restore op is built from this graph) does not look for it in `variables/`."""

    def _serialize_to_tensors(self):
        return {}


class UnstoredVariable(resource_variable_ops.ResourceVariable):
    """A variable of the SavedModel's object graph whose value its checkpoint leaves out: loaders recreate it
    uninitialised, and the Regenerator fills it."""

    def _serialize_to_tensors(self):
        return {}

    def _export_to_saved_model_graph(self, object_map=None, tensor_map=None, options=None, **kwargs):
        handles = super()._export_to_saved_model_graph(object_map, tensor_map, options, **kwargs)
        object_map[self].__class__ = _UnstoredCopy
        return handles


class RegeneratedWeight:
    """One frozen weight, drawn by the SavedModel's initialiser.

    name: the original checkpoint name (the generator's key). group: its
    parameter group, for messages. spec: its manifest entry (initializer,
    stddev or limit, shape in the original layout). key: its generator key
    (seeded_values.key_of). variable_shape: the Keras variable's shape.
    expected: the fingerprint of the weight drawn at export, uint8 [1, 8].
    variable: the UnstoredVariable the SavedModel reads it from (named after
    the weight), holding the drawn value while exporting.
    """

    def __init__(self, name, group, spec, key, variable_shape, expected, value):
        self.weight_name, self.group = name, group
        self.spec, self.key = dict(spec), list(key)
        self.variable_shape = list(variable_shape)
        self.expected = np.asarray(expected, np.uint8)
        self.variable = UnstoredVariable(value, trainable=False, name="regenerated/" + name)

    def message(self):
        """What the load fails with when this weight is drawn other than at export."""
        return ("The frozen weight %s (group %s), drawn from its seed at load, differs from the one exported: "
                "this TensorFlow's random generator (%s) draws differently, and would serve another model. "
                "Load the full export, or export again with this TensorFlow."
                % (self.weight_name, self.group, seeded_values.GENERATOR))


class Regenerator(tf.saved_model.experimental.TrackableResource):
    """The SavedModel's initialiser of its regenerated weights; its own resource is a flag set once they are drawn.

    keys: the stored int64 variable [number of weights, 2] of the weights' generator keys, in order.
    """

    def __init__(self, weights, keys, export_id):
        self._weights, self._keys = list(weights), keys
        self._flag_name = "regenerated/%s/drawn" % export_id
        super().__init__()

    def _create_resource(self):
        return tf.raw_ops.VarHandleOp(dtype=tf.bool, shape=[], shared_name=self._flag_name)

    def _initialize(self):
        # Few nodes, whatever the number of weights (the loader imports and instantiates each): the keys unstacked
        # once, the fingerprints compared in one op, one Assert naming every weight drawn otherwise. tf.debugging.Assert
        # with string data alone is one op; assert_equal would add a conditional (two more functions to instantiate).
        weights = self._weights
        drawn = [draw(weight.spec, key, weight.variable_shape)
                 for weight, key in zip(weights, tf.unstack(self._keys.read_value(), num=len(weights)))]
        found = tf.concat([fingerprint(value) for value in drawn], axis=0)
        differ = tf.reduce_any(tf.not_equal(found, np.concatenate([weight.expected for weight in weights])), axis=1)
        check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(differ)), [tf.strings.reduce_join(
            tf.boolean_mask([weight.message() for weight in weights], differ), separator=" ")])
        with tf.control_dependencies([check]):
            assigned = [weight.variable.assign(value, read_value=False) for weight, value in zip(weights, drawn)]
        with tf.control_dependencies(assigned):
            return tf.raw_ops.AssignVariableOp(resource=self.resource_handle, value=tf.constant(True))


class Regeneration:
    """The regenerated weights of one export: [(tf.Variable, RegeneratedWeight)].

    trackables: what the SavedModel must hold for them (the unstored variables, the keys, the initialiser).
    """

    def __init__(self, pairs):
        self.pairs = list(pairs)
        self.weights = [weight for _, weight in self.pairs]
        self._ids = {id(variable) for variable, _ in self.pairs}
        self.trackables = []
        if self.weights:
            keys = tf.Variable([weight.key for weight in self.weights], dtype=tf.int64, trainable=False,
                               name="regenerated/keys")
            self.trackables = ([weight.variable for weight in self.weights]
                               + [keys, Regenerator(self.weights, keys, uuid.uuid4().hex)])

    def stored(self, variables):
        """The variables the SavedModel stores: all but the regenerated ones."""
        return [variable for variable in variables if id(variable) not in self._ids]

    @contextlib.contextmanager
    def swapped(self):
        """Within: each regenerated variable reads its unstored twin's handle (for tracing and saving)."""
        inner = [(_resource_variable(variable), weight) for variable, weight in self.pairs]
        originals = [(variable, variable._handle) for variable, _ in inner]  # pylint: disable=protected-access
        try:
            for variable, weight in inner:
                variable._handle = weight.variable.handle  # pylint: disable=protected-access
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
        pairs.append((entry.variable, RegeneratedWeight(
            name, group_of(name), spec, seeded_values.key_of(name, manifest["random_seed"]), entry.variable.shape,
            fingerprint(drawn).numpy(), drawn)))
    return Regeneration(pairs)
