"""SavedModels that draw their frozen random weights at load: bitwise the full export, smaller, refused when wrong.

A two-layer BERT of hidden 32 whose feed-forward layers hold their seeded
random values (as --freeze=ffn --reinit=ffn leaves them), checkpointed with
--save_frozen=seed's manifest (modeling/testing/frozen_exports.py), is exported twice by export_model.py: with
--save_frozen=seed and with --save_frozen=values. Both are loaded by
TensorFlow alone (`python -I`, serving/testing/call_saved_model.py) and by
TensorFlow 1's loader, which runs the restore and initialisation ops as TF
Serving does.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import modeling
from freezing import seeded_values
from serving import regenerated
from modeling.testing import frozen_exports

TEXTS = ["the cat sat on a mat.", "where is the gold", "a dog , a cat"]
LOADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testing", "call_saved_model.py")


def _variables_bytes(path):
    directory = os.path.join(path, "variables")
    return sum(os.path.getsize(os.path.join(directory, name)) for name in os.listdir(directory))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Files, the encoder, classifier and squad checkpoints (frozen FFN saved by seed), and their FFN names."""
    root = tmp_path_factory.mktemp("regenerated")
    prefixes, ffn = frozen_exports.write_checkpoints(root)
    return root, prefixes, ffn


def _export(setup, kind, save_frozen, **values):
    root, prefixes, _ = setup
    return frozen_exports.export(root, values.pop("init_checkpoint", prefixes[kind]), kind, save_frozen, **values)


@pytest.fixture(scope="module")
def exports(setup):
    """{kind: (seed export, full export)}."""
    return {kind: (_export(setup, kind, "seed"), _export(setup, kind, "values"))
            for kind in ("encoder", "classifier", "squad")}


def _call(calls):
    result = subprocess.run([sys.executable, "-I", LOADER, json.dumps(calls)], capture_output=True, text=True,
                            timeout=300, check=False, cwd="/")
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_outputs_are_bitwise_the_full_exports_in_a_process_without_the_project(exports):
    inputs = dict(encoder=dict(text_a=TEXTS, text_b=TEXTS[::-1]), classifier=dict(text_a=TEXTS, text_b=TEXTS[::-1]),
                  squad=dict(question=TEXTS, context=TEXTS[::-1]))
    calls = []
    for kind, paths in exports.items():
        signature = "serving_default"
        if kind == "encoder":  # text in, both outputs of the encoder
            signature = "preprocess_pair"
        calls += [dict(path=path, signature=signature, inputs=inputs[kind]) for path in paths]
    results = _call(calls)
    for index, kind in enumerate(exports):
        seed_export, full_export = results[2 * index], results[2 * index + 1]
        assert seed_export["project_modules"] == []
        assert seed_export["outputs"] == full_export["outputs"], kind  # bitwise: the same floats, as JSON


def test_encoder_outputs_bitwise_from_ids(exports, setup):
    seed_path, full_path = exports["encoder"]
    ids = dict(input_word_ids=[[2, 5, 6, 7, 3] + [0] * 11], input_mask=[[1] * 5 + [0] * 11],
               input_type_ids=[[0] * 16])
    seed_out, full_out = _call([dict(path=path, signature="serving_default", inputs=ids)
                                for path in (seed_path, full_path)])
    assert seed_out["outputs"] == full_out["outputs"]
    assert np.abs(np.array(seed_out["outputs"]["sequence_output"])).sum() > 0


def test_the_frozen_weights_are_off_the_disk(exports, setup):
    _, _, ffn = setup
    assert len(ffn) == 12  # 2 layers: the intermediate and output dense layers, the output LayerNorm
    for kind, (seed_path, full_path) in exports.items():
        stored, all_stored = (
            [name for name, _ in tf.train.list_variables(os.path.join(path, "variables", "variables"))
             if name.endswith("VARIABLE_VALUE")] for path in (seed_path, full_path))
        # Stored in their place: the generator's keys, one int64 [12, 2] variable.
        keys = [name for name in stored if name.startswith("regenerated/")]
        assert len(keys) == 1 and tf.train.load_variable(os.path.join(seed_path, "variables", "variables"),
                                                         keys[0]).shape == (len(ffn), 2), kind
        assert len(all_stored) - (len(stored) - 1) == len(ffn), kind
        saved, full = _variables_bytes(seed_path), _variables_bytes(full_path)
        # 2 layers x (32x64 + 64 + 64x32 + 32 + 2x32) float32: 33,792 bytes fewer (and a smaller object graph)
        assert full - saved == pytest.approx(4 * 2 * (32 * 64 + 64 + 64 * 32 + 32 + 2 * 32), abs=2048), kind


def test_seeded_exports_loaded_side_by_side_keep_their_weights_apart(exports, tmp_path):
    # Another checkpoint whose FFN another seed drew: the same weight names, other values.
    other_prefixes, _ = frozen_exports.write_checkpoints(tmp_path, kinds=["classifier"], seed=999)
    other_path = frozen_exports.export(tmp_path, other_prefixes["classifier"], "classifier", "seed")
    seed_path, _ = exports["classifier"]

    def logits(model):
        return model.signatures["serving_default"](text_a=tf.constant(TEXTS), text_b=tf.constant(TEXTS[::-1]))[
            "logits"].numpy()

    first = tf.saved_model.load(seed_path)
    before = logits(first)
    other, again = tf.saved_model.load(other_path), tf.saved_model.load(seed_path)  # loaded after the first
    np.testing.assert_array_equal(logits(first), before)
    np.testing.assert_array_equal(logits(again), before)
    assert not np.array_equal(logits(other), before)


def test_any_groups_drawn_from_the_seed_embeddings_and_attention(tmp_path):
    prefixes, frozen = frozen_exports.write_checkpoints(tmp_path, kinds=["encoder"], groups=("embeddings", "attention"))
    assert len(frozen) == 5 + 2 * 10  # 3 tables, LayerNorm (2); per layer Q, K, V, output (kernel, bias), LayerNorm
    seed_path, full_path = (frozen_exports.export(tmp_path, prefixes["encoder"], "encoder", save_frozen)
                            for save_frozen in ("seed", "values"))
    ids = dict(input_word_ids=tf.constant([[2, 5, 6, 7, 3] + [0] * 11]), input_mask=tf.constant([[1] * 5 + [0] * 11]),
               input_type_ids=tf.zeros([1, 16], tf.int32))
    outputs = [tf.saved_model.load(path).signatures["serving_default"](**ids) for path in (seed_path, full_path)]
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_array_equal(outputs[0][key].numpy(), outputs[1][key].numpy(), err_msg=key)
    stored = [len(tf.train.list_variables(os.path.join(path, "variables", "variables"))) for path in (seed_path, full_path)]
    assert stored[1] - stored[0] == len(frozen) - 1  # and one more stored: the generator keys


def test_tensorflow_1s_loader_restores_and_draws_as_tf_serving_does(exports):
    seed_path, full_path = exports["classifier"]
    outputs = []
    for path in (seed_path, full_path):
        with tf.compat.v1.Session(graph=tf.Graph()) as session:
            meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], path)
            signature = meta_graph.signature_def["serving_default"]
            outputs.append(session.run(signature.outputs["logits"].name, {
                signature.inputs["text_a"].name: TEXTS, signature.inputs["text_b"].name: TEXTS[::-1]}))
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_a_weight_drawn_differently_at_load_is_refused_naming_it_and_its_group(setup, monkeypatch):
    # As a TensorFlow whose generator draws other bits than the exporter's: the fingerprints differ.
    real_init = regenerated.RegeneratedWeight.__init__

    def other_fingerprint(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.expected = self.expected ^ 1

    monkeypatch.setattr(regenerated.RegeneratedWeight, "__init__", other_fingerprint)
    path = _export(setup, "encoder", "seed", export_dir=str(setup[0] / "exports" / "changed"))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"The frozen weight bert/encoder/layer_0/intermediate/"
                                                             r"dense/bias \(group ffn:0\), drawn from its seed at load, "
                                                             r"differs from the one exported"):
        tf.saved_model.load(path)


def test_the_tensorflow_internals_relied_on_were_checked_on_this_version():
    # The swap of a variable's handle and the variables left out of the checkpoint rely on TensorFlow internals
    # (the module docstring names them); the tests above show they work on the versions listed. On another,
    # run them and add it to CHECKED_TENSORFLOW_VERSIONS, or change the module.
    assert tf.__version__.startswith(regenerated.CHECKED_TENSORFLOW_VERSIONS), (
        "serving/regenerated.py relies on TensorFlow internals checked on %s only; this is TensorFlow %s"
        % (", ".join(v + "*" for v in regenerated.CHECKED_TENSORFLOW_VERSIONS), tf.__version__))
    for name in ("_serialize_to_tensors", "_export_to_saved_model_graph"):
        assert name in vars(regenerated.resource_variable_ops.BaseResourceVariable), name
    assert "_handle" in vars(tf.Variable(1.0))


def test_a_damaged_manifest_is_refused_at_export(setup, tmp_path):
    root, prefixes, _ = setup
    prefix = str(tmp_path / "model.ckpt-3")
    for suffix in (".index", ".data-00000-of-00001"):
        tf.io.gfile.copy(prefixes["encoder"] + suffix, prefix + suffix)
    manifest = seeded_values.read_manifest(prefixes["encoder"])
    manifest["variables"]["bert/encoder/layer_1/output/dense/kernel"]["sha256"] = "0" * 64
    seeded_values.write_manifest(prefix, manifest)
    # Refused when the checkpoint is loaded, before anything is exported.
    with pytest.raises(ValueError, match=r"Regenerating frozen variable bert/encoder/layer_1/output/dense/kernel "
                                         r"\(group ffn:1\) from seed 12345 \(manifest .*model.ckpt-3.frozen.json\) gives a different "
                                         r"tensor: checksum [0-9a-f]{16}, manifest says 0000000000000000"):
        _export(setup, "encoder", "seed", init_checkpoint=prefix)


def test_save_frozen_defaults_to_the_checkpoints_way_and_seed_needs_a_manifest(setup, tmp_path):
    root, prefixes, _ = setup
    default = _export(setup, "encoder", None, export_dir=str(tmp_path / "default"))
    assert _variables_bytes(default) == _variables_bytes(_export(setup, "encoder", "seed",
                                                                 export_dir=str(tmp_path / "seed")))
    prefix = str(tmp_path / "plain" / "model.ckpt-3")
    tf.keras.utils.set_random_seed(7)
    modeling.save_checkpoint(modeling.build_model(modeling.BertModel(
        modeling.BertConfig.from_json_file(str(root / "bert_config.json")))), prefix)
    with pytest.raises(ValueError, match=r"--save_frozen=seed: checkpoint .*plain/model.ckpt-3 has no seed manifest"):
        _export(setup, "encoder", "seed", init_checkpoint=prefix)
