"""Loads SavedModels and calls a signature each, with TensorFlow and tensorflow-text alone.

Run as `python -I call_saved_model.py '<json list of calls>'`: isolated mode
keeps the repository off sys.path, as on a serving machine. Each call is
{"path", "signature", "inputs": {name: list of str}}; prints one JSON line,
a list of {"outputs": {name: list}, "project_modules": [...]}, where
project_modules lists modules loaded from this repository (none, if the
SavedModel is self-contained).
"""

import json
import os
import sys

import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import  (registers the tokenizer ops)

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_repository(module):
    """Whether a module comes from this repository (a virtualenv inside it does not count)."""
    path = getattr(module, "__file__", None) or ""
    return path.startswith(REPOSITORY + os.sep) and not path.startswith(sys.prefix + os.sep)


def _plain(value):
    value = value.numpy()
    if value.dtype.kind in "SO":
        return [v.decode("utf-8") for v in value.reshape(-1)] if value.ndim else value.decode("utf-8")
    return value.tolist()


def main(calls):
    results = []
    for call in calls:
        signature = tf.saved_model.load(call["path"]).signatures[call["signature"]]
        outputs = signature(**{name: tf.constant(values) for name, values in call["inputs"].items()})
        project = sorted(name for name, module in sys.modules.items() if module is not sys.modules["__main__"] and _in_repository(module))
        results.append(dict(outputs={name: _plain(value) for name, value in outputs.items()},
                            project_modules=project))
    print(json.dumps(results))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
