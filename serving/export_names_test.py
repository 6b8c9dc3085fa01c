"""Several exports in one TensorFlow 1 session (two import scopes) and through tf.saved_model.load, each with its weights.

Two tiny BERT classifiers whose feed-forward layers two seeds drew
(modeling/testing/frozen_exports.py), each exported with its frozen weights
stored (--save_frozen=values) and drawn from the seed at load (=seed). Without
export_names, the two full exports in one session share every variable of
the same name, and the first answers with the second's weights.
"""

import re

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import  (registers the tokenizer's ops for TF1 loads)
from tensorflow.core.protobuf import fingerprint_pb2, saved_model_pb2
from tensorflow.python.saved_model.pywrap_saved_model import fingerprinting

from modeling.testing import frozen_exports
from serving import export_names

TEXTS = ["the cat sat on a mat.", "where is the gold", "a dog , a cat"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{(seed, save_frozen): export path} for two seeds, each saved both ways."""
    found = {}
    for seed in (1, 999):
        root = tmp_path_factory.mktemp("seed%d" % seed)
        prefixes, _ = frozen_exports.write_checkpoints(root, kinds=["classifier"], seed=seed)
        for save_frozen in ("seed", "values"):
            found[seed, save_frozen] = frozen_exports.export(root, prefixes["classifier"], "classifier", save_frozen)
    return found


def _session_logits(session, meta_graph, scope=None):
    signature = meta_graph.signature_def["serving_default"]

    def scoped(name):
        return "%s/%s" % (scope, name) if scope else name

    return session.run(scoped(signature.outputs["logits"].name), {
        scoped(signature.inputs["text_a"].name): TEXTS, scoped(signature.inputs["text_b"].name): TEXTS[::-1]})


def _alone(path):
    with tf.compat.v1.Session(graph=tf.Graph()) as session:
        return _session_logits(session, tf.compat.v1.saved_model.loader.load(session, ["serve"], path))


def _together(first, second):
    with tf.compat.v1.Session(graph=tf.Graph()) as session:
        loaded = [(tf.compat.v1.saved_model.loader.load(session, ["serve"], path, import_scope=scope), scope)
                  for path, scope in ((first, "first"), (second, "second"))]
        return [_session_logits(session, meta_graph, scope) for meta_graph, scope in loaded]


@pytest.mark.parametrize("first,second", [
    ((1, "values"), (999, "values")), ((1, "seed"), (999, "seed")), ((1, "seed"), (999, "values")),
    ((1, "seed"), (1, "seed")), ((1, "values"), (1, "values"))])
def test_two_exports_in_one_tf1_session_answer_each_with_its_own_weights(exports, first, second):
    alone = [_alone(exports[key]) for key in (first, second)]
    if first[0] != second[0]:
        assert not np.array_equal(alone[0], alone[1])  # the two models do differ
    together = _together(exports[first], exports[second])
    np.testing.assert_array_equal(together[0], alone[0])
    np.testing.assert_array_equal(together[1], alone[1])


def test_the_same_and_other_exports_through_tf_saved_model_load(exports):
    def logits(model):
        return model.signatures["serving_default"](text_a=tf.constant(TEXTS), text_b=tf.constant(TEXTS[::-1]))[
            "logits"].numpy()

    for save_frozen in ("seed", "values"):
        one, other, again = (tf.saved_model.load(exports[seed, save_frozen]) for seed in (1, 999, 1))
        np.testing.assert_array_equal(logits(again), logits(one))
        np.testing.assert_array_equal(logits(one), _alone(exports[1, save_frozen]))
        np.testing.assert_array_equal(logits(other), _alone(exports[999, save_frozen]))


def _names(path):
    saved_model = saved_model_pb2.SavedModel()
    with open("%s/saved_model.pb" % path, "rb") as f:
        saved_model.ParseFromString(f.read())
    graph = saved_model.meta_graphs[0].graph_def
    nodes = list(graph.node) + [node for function in graph.library.function for node in function.node_def]
    return ([function.signature.name for function in graph.library.function],
            [node.attr["shared_name"].s.decode() for node in nodes if node.op == "VarHandleOp"])


def test_every_function_and_variable_resource_carries_the_exports_tag(exports):
    # What keeps exports made by the same command in two processes apart: no name of one is the other's.
    tags = {}
    for key, path in exports.items():
        functions, resources = _names(path)
        assert functions and resources
        tag = resources[0].split("/")[0]
        assert re.fullmatch("[0-9a-f]{12}", tag), resources[0]
        assert all(name.startswith(tag + "/") for name in resources), resources[:3]
        assert all(re.fullmatch(r".*_%s_\d+" % tag, name) for name in functions), functions[:3]
        tags[key] = tag
    assert len(set(tags.values())) == len(tags)


def test_the_fingerprint_is_that_of_the_rewritten_graph(exports):
    path = exports[1, "seed"]
    recorded = tf.saved_model.experimental.read_fingerprint(path)
    computed = fingerprint_pb2.FingerprintDef.FromString(fingerprinting.CreateFingerprintDef(path))
    assert recorded.saved_model_checksum == computed.saved_model_checksum
    assert recorded.graph_def_program_hash == computed.graph_def_program_hash


def test_the_private_fingerprint_writer_was_checked_on_this_tensorflow():
    # fingerprint.pb is recomputed with a private TensorFlow module; the tests above show it works on the versions
    # listed. On another, run them and add it to CHECKED_TENSORFLOW_VERSIONS, or change the module.
    assert tf.__version__.startswith(export_names.CHECKED_TENSORFLOW_VERSIONS), (
        "serving/export_names.py relies on tensorflow.python.saved_model.fingerprinting_utils, checked on %s only; "
        "this is TensorFlow %s" % (", ".join(v + "*" for v in export_names.CHECKED_TENSORFLOW_VERSIONS),
                                   tf.__version__))
    assert callable(export_names.fingerprinting_utils.write_fingerprint)
