"""Names in a SavedModel made unique to its export, so that two exports can share one TensorFlow 1 graph.

TensorFlow 1's loader (`tf.compat.v1.saved_model.loader.load(..., import_scope=...)`)
can put several SavedModels into one session, each under its own scope. The
scope renames the graph's nodes, but not two kinds of names a TensorFlow 2
export carries:

  - a variable's `shared_name` (the name of the resource in the session that
    its VarHandleOp looks up): TensorFlow writes the Keras variable's name,
    the same in every export of one architecture. Two models in one session
    then share every variable of the same name, and the second restore
    overwrites the first model's weights: the first answers with the
    second's, silently;
  - the functions of the graph's library (`__inference_<name>_<counter>`):
    the counter is the exporting process's, so exports made by the same
    command in two processes carry functions of the same name, and where
    their bodies differ (a seeded export's weights are drawn inside them)
    the second import fails ("Cannot add function ... because a different
    function with the same name already exists").

`make_unique` rewrites both in a written SavedModel with a tag of the export
(the hash of its variables' contents and of its graph): every variable's
resource becomes `<tag>/<name>`, every function `<name>_<tag>_<counter>`
(`__inference_<name>_<tag>_<counter>`, the form TensorFlow 2's loader reads a
function's name from), and the fingerprint is written again. The same export loaded twice keeps the
same names (and shares its identical weights); two different exports never
share a name. `tf.saved_model.load` and TF Serving (a session per model) are
unaffected: they never shared names.
"""

import hashlib
import os
import re

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2
# The one way to recompute a SavedModel's fingerprint.pb after its graph changed (TensorFlow 2.20).
from tensorflow.python.saved_model import fingerprinting_utils

# The TensorFlow versions on which fingerprinting_utils.write_fingerprint was checked (export_names_test.py fails on
# any other).
CHECKED_TENSORFLOW_VERSIONS = ("2.20.",)
SAVED_MODEL_FILE = "saved_model.pb"
_COUNTED = re.compile(r"^(.*)_(\d+)$")


def export_tag(path):
    """12 hex digits of sha256 over the export's graph and its variables' files (names and contents)."""
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(os.path.join(path, SAVED_MODEL_FILE), "rb") as f:
        digest.update(f.read())
    variables = os.path.join(path, "variables")
    for name in sorted(tf.io.gfile.listdir(variables)) if tf.io.gfile.isdir(variables) else []:
        digest.update(name.encode())
        with tf.io.gfile.GFile(os.path.join(variables, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:12]


def _function_name(name, tag):
    match = _COUNTED.match(name)
    return "%s_%s_%s" % (match.group(1), tag, match.group(2)) if match else "%s_%s" % (name, tag)


def _rename_attr_functions(attr_value, names):
    if attr_value.HasField("func") and attr_value.func.name in names:
        attr_value.func.name = names[attr_value.func.name]
    if attr_value.HasField("list"):
        for function in attr_value.list.func:
            if function.name in names:
                function.name = names[function.name]


def _rename_nodes(nodes, names, tag):
    for node in nodes:
        if node.op == "VarHandleOp" and node.attr["shared_name"].s:
            shared_name = node.attr["shared_name"].s.decode()
            if not shared_name.startswith(tag + "/"):
                node.attr["shared_name"].s = ("%s/%s" % (tag, shared_name)).encode()
        for attr_value in node.attr.values():
            _rename_attr_functions(attr_value, names)


def make_unique(path):
    """Rewrites the SavedModel in `path` as the module docstring says; returns its tag."""
    tag = export_tag(path)
    saved_model = saved_model_pb2.SavedModel()
    pb_path = os.path.join(path, SAVED_MODEL_FILE)
    with tf.io.gfile.GFile(pb_path, "rb") as f:
        saved_model.ParseFromString(f.read())
    for meta_graph in saved_model.meta_graphs:
        library = meta_graph.graph_def.library
        names = {function.signature.name: _function_name(function.signature.name, tag)
                 for function in library.function}
        for function in library.function:
            function.signature.name = names[function.signature.name]
            _rename_nodes(function.node_def, names, tag)
        for gradient in library.gradient:
            gradient.function_name = names.get(gradient.function_name, gradient.function_name)
            gradient.gradient_func = names.get(gradient.gradient_func, gradient.gradient_func)
        _rename_nodes(meta_graph.graph_def.node, names, tag)
        aliases = meta_graph.meta_info_def.function_aliases
        for alias in list(aliases):
            aliases[alias] = names.get(aliases[alias], aliases[alias])
        objects = meta_graph.object_graph_def
        concrete = {names.get(name, name): value for name, value in objects.concrete_functions.items()}
        objects.ClearField("concrete_functions")
        for name, value in concrete.items():
            objects.concrete_functions[name].CopyFrom(value)
        for node in objects.nodes:
            if node.HasField("function"):
                renamed = [names.get(name, name) for name in node.function.concrete_functions]
                del node.function.concrete_functions[:]
                node.function.concrete_functions.extend(renamed)
            if node.HasField("bare_concrete_function"):
                bare = node.bare_concrete_function
                bare.concrete_function_name = names.get(bare.concrete_function_name, bare.concrete_function_name)
    with tf.io.gfile.GFile(pb_path, "wb") as f:
        f.write(saved_model.SerializeToString(deterministic=True))
    fingerprinting_utils.write_fingerprint(path)
    return tag
