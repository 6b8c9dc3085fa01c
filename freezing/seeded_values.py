"""Seeded values: each variable a pure function of (seed, name, shape, initializer).

Keras draws initial values from a stream whose position depends on creation
order; here every variable is drawn on its own from a counter-based (Philox)
stateless generator keyed by the seed and its original checkpoint name, in its
original checkpoint shape. The values are then the same across runs, worker
counts and machines, which makes frozen random weights regenerable: a
checkpoint may leave them out and list them in a manifest (seed, initializer,
shape, checksum) instead (`--save_frozen=seed`), as Bogoychev (2021) suggests.

A model family gives the initializer of each name as `initializer_of(name) ->
(kind, stddev)`, kind one of truncated_normal, zeros, ones.
"""

import hashlib
import json

import numpy as np
import tensorflow as tf

GENERATOR = "tf.random.stateless_truncated_normal(Philox), seed=[random_seed, sha256(name)[:4]]"
MANIFEST_SUFFIX = ".frozen.json"


def _name_seed(name):
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little") & 0x7FFFFFFF


def seeded_value(name, shape, kind, stddev, seed):
    """The initial value (float32 numpy array of `shape`, the original layout)."""
    if kind == "ones":
        return np.ones(shape, np.float32)
    if kind == "zeros":
        return np.zeros(shape, np.float32)
    if kind != "truncated_normal":
        raise ValueError("Unknown initializer %r for %s." % (kind, name))
    value = tf.random.stateless_truncated_normal(
        list(shape), seed=[seed, _name_seed(name)], stddev=stddev, dtype=tf.float32
    )
    return value.numpy()


def checksum(value):
    """sha256 of the float32 bytes, C order."""
    return hashlib.sha256(np.ascontiguousarray(value, np.float32).tobytes()).hexdigest()


def assign_seeded(variables, names, seed, initializer_of):
    """Assigns seeded values to `names` of a {original name: OriginalVariable} map."""
    for name in names:
        entry = variables[name]
        value = seeded_value(name, entry.shape, *initializer_of(name), seed)
        entry.variable.assign(entry.from_original(value))


def manifest(variables, names, seed, initializer_of):
    """How to regenerate `names` (at their current values) of a {name: OriginalVariable} map."""
    described = {}
    for name in names:
        entry = variables[name]
        kind, stddev = initializer_of(name)
        value = entry.to_original(entry.variable.numpy())
        described[name] = dict(initializer=kind, stddev=stddev, shape=list(entry.shape), sha256=checksum(value))
    return {"random_seed": seed, "generator": GENERATOR, "variables": described}


def write_manifest(checkpoint_prefix, content):
    with tf.io.gfile.GFile(checkpoint_prefix + MANIFEST_SUFFIX, "w") as f:
        f.write(json.dumps(content, indent=2, sort_keys=True) + "\n")


def read_manifest(checkpoint_prefix):
    """The manifest beside a checkpoint, or None."""
    path = checkpoint_prefix + MANIFEST_SUFFIX
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def regenerate(content, name, path=""):
    """Regenerates one manifest entry and verifies its checksum.

    Raises:
      ValueError: when the regenerated tensor's checksum differs, naming the
        variable (a different random generator, or a tampered manifest).
    """
    spec = content["variables"][name]
    value = seeded_value(name, tuple(spec["shape"]), spec["initializer"], spec["stddev"], content["random_seed"])
    if checksum(value) != spec["sha256"]:
        raise ValueError(
            "Regenerating frozen variable %s from seed %d (manifest %s) gives a different "
            "tensor: checksum %s, manifest says %s. The checkpoint needs the same random "
            "generator (%s)." % (name, content["random_seed"], path + MANIFEST_SUFFIX,
                                 checksum(value)[:16], spec["sha256"][:16], GENERATOR)
        )
    return value
