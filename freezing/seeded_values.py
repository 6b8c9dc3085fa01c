"""Seeded values: each variable a pure function of (seed, name, shape, initializer).

Keras draws initial values from a stream whose position depends on creation
order; here every variable is drawn on its own from a counter-based (Philox)
stateless generator keyed by the seed and its original checkpoint name, in its
original checkpoint shape. The values are then the same across runs, worker
counts and machines, which makes frozen random weights regenerable: a
checkpoint may leave them out and list them in a manifest (seed, initializer,
shape, checksum) instead (`--save_frozen=seed`), as Bogoychev (2021) suggests.

A model family gives the initializer of each name as `initializer_of(name) ->
(kind, scale)`: kind truncated_normal (scale: the stddev of the normal before
truncation at two stddevs), uniform (scale: the limit a of U(-a, a)), zeros or
ones (scale None).
"""

import hashlib
import json

import numpy as np
import tensorflow as tf

import outputs

GENERATOR = ("tf.random.stateless_truncated_normal or stateless_uniform (Philox), "
             "seed=[random_seed, sha256(name)[:4]]")
MANIFEST_SUFFIX = ".frozen.json"
INITIALIZERS = ("truncated_normal", "uniform", "zeros", "ones")
# The manifest field of each random kind's scale.
SCALE_FIELD = {"truncated_normal": "stddev", "uniform": "limit"}


def _name_seed(name):
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little") & 0x7FFFFFFF


def key_of(name, seed):
    """The stateless generator's key of a variable: [random_seed, the first 4 bytes of sha256(name)]."""
    return [seed, _name_seed(name)]


def seeded_tensor(shape, kind, scale, key):
    """The initial value as a float32 tensor of `shape`, from the key of `key_of` (in eager mode or in a graph).

    Raises:
      ValueError: for an unknown initializer kind.
    """
    if kind == "ones":
        return tf.ones(list(shape), tf.float32)
    if kind == "zeros":
        return tf.zeros(list(shape), tf.float32)
    if kind == "truncated_normal":
        return tf.random.stateless_truncated_normal(list(shape), seed=key, stddev=scale, dtype=tf.float32)
    if kind == "uniform":
        return tf.random.stateless_uniform(list(shape), seed=key, minval=-scale, maxval=scale, dtype=tf.float32)
    raise ValueError("Unknown initializer %r; expected one of %s." % (kind, ", ".join(INITIALIZERS)))


def seeded_value(name, shape, kind, scale, seed):
    """The initial value (float32 numpy array of `shape`, the original layout); scale: see the module docstring."""
    if kind not in INITIALIZERS:
        raise ValueError("Unknown initializer %r for %s; expected one of %s." % (kind, name, ", ".join(INITIALIZERS)))
    return seeded_tensor(shape, kind, scale, key_of(name, seed)).numpy()


def checksum(value):
    """sha256 of the float32 bytes, C order."""
    return hashlib.sha256(np.ascontiguousarray(value, np.float32).tobytes()).hexdigest()


def assign_seeded(variables, names, seed, initializer_of):
    """Assigns seeded values to `names` of a {original name: OriginalVariable} map."""
    for name in names:
        entry = variables[name]
        value = seeded_value(name, entry.shape, *initializer_of(name), seed)
        entry.variable.assign(entry.from_original(value))


def manifest(variables, names, seed, initializer_of, label_of=None):
    """How to regenerate `names` (at their current values) of a {name: OriginalVariable} map.

    label_of: name -> its parameter group as --freeze selects it ("ffn:3"), recorded for messages.
    """
    described = {}
    for name in names:
        entry = variables[name]
        kind, scale = initializer_of(name)
        value = entry.to_original(entry.variable.numpy())
        described[name] = {"initializer": kind, SCALE_FIELD.get(kind, "stddev"): scale, "shape": list(entry.shape),
                           "sha256": checksum(value)}
        if label_of is not None:
            described[name]["group"] = label_of(name)
    return {"random_seed": seed, "generator": GENERATOR, "variables": described}


def write_manifest(checkpoint_prefix, content):
    outputs.write_text(checkpoint_prefix + MANIFEST_SUFFIX, json.dumps(content, indent=2, sort_keys=True) + "\n")


def read_manifest(checkpoint_prefix):
    """The manifest beside a checkpoint, or None.

    Raises:
      ValueError: naming the file, when it is not JSON or lacks an integer
        "random_seed" or an object "variables" (entries are checked by
        `variable_spec`).
    """
    path = checkpoint_prefix + MANIFEST_SUFFIX
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    try:
        content = json.loads(data)
    except ValueError as error:  # JSONDecodeError (names the line), UnicodeDecodeError.
        raise ValueError("Manifest %s is not valid JSON: %s." % (path, error)) from None
    problem = _manifest_problem(content)
    if problem:
        raise ValueError("Manifest %s %s." % (path, problem))
    return content


def _manifest_problem(content):
    """What is wrong with a manifest's top level, or None."""
    if not isinstance(content, dict):
        return "is not a JSON object"
    for key in ("random_seed", "variables"):
        if key not in content:
            return 'lacks "%s"' % key
    if not _is_int(content["random_seed"]):
        return 'has "random_seed": %s; expected an integer' % json.dumps(content["random_seed"])
    if not isinstance(content["variables"], dict):
        return 'has "variables" of the wrong type; expected a JSON object (name: entry)'
    return None


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return _is_int(value) or isinstance(value, float)


def _spec_problem(spec):
    """What is wrong with one manifest entry, or None."""
    if not isinstance(spec, dict):
        return "is %s, not an object" % json.dumps(spec)
    missing = [key for key in ("initializer", "shape", "sha256") if key not in spec]
    if missing:
        return "lacks %s" % ", ".join('"%s"' % key for key in missing)
    kind, shape = spec["initializer"], spec["shape"]
    if kind not in INITIALIZERS:
        return 'has "initializer": %s; expected one of %s' % (json.dumps(kind), ", ".join(INITIALIZERS))
    field = SCALE_FIELD.get(kind)
    if field and not (_is_number(spec.get(field)) and spec[field] > 0):
        return 'has "%s": %s; expected a positive number' % (field, json.dumps(spec.get(field)))
    if not (isinstance(shape, list) and all(_is_int(d) and d >= 0 for d in shape)):
        return 'has "shape": %s; expected a list of non-negative integers' % json.dumps(shape)
    if not isinstance(spec["sha256"], str):
        return 'has "sha256": %s; expected a hex string' % json.dumps(spec["sha256"])
    return None


def variable_spec(content, name, checkpoint_prefix=""):
    """The manifest entry of `name` (initializer, stddev or limit, shape, sha256), checked.

    Raises:
      ValueError: naming the manifest, the variable and the bad field.
    """
    spec = content["variables"][name]
    problem = _spec_problem(spec)
    if problem:
        raise ValueError("Manifest %s: the entry of %s %s."
                         % (checkpoint_prefix + MANIFEST_SUFFIX, name, problem))
    return spec


def regenerate(content, name, path=""):
    """Regenerates one manifest entry and verifies its checksum.

    Raises:
      ValueError: when the entry is malformed, or the regenerated tensor's
        checksum differs, naming the variable (a different random generator,
        or a tampered manifest).
    """
    spec = variable_spec(content, name, path)
    kind = spec["initializer"]
    value = seeded_value(name, tuple(spec["shape"]), kind, spec.get(SCALE_FIELD.get(kind, "stddev")),
                         content["random_seed"])
    if checksum(value) != spec["sha256"]:
        group = " (group %s)" % spec["group"] if isinstance(spec.get("group"), str) else ""
        raise ValueError(
            "Regenerating frozen variable %s%s from seed %d (manifest %s) gives a different "
            "tensor: checksum %s, manifest says %s. The checkpoint needs the same random "
            "generator (%s)." % (name, group, content["random_seed"], path + MANIFEST_SUFFIX,
                                 checksum(value)[:16], spec["sha256"][:16], GENERATOR)
        )
    return value
