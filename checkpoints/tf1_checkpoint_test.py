"""The original checkpoint layout: names, round trips, training checkpoints, errors."""

import logging

import numpy as np
import pytest
import tensorflow as tf

import modeling
from checkpoints import tf1_checkpoint
from modeling.testing import original_bert_numpy as reference

CONFIG = modeling.BertConfig(
    vocab_size=20,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    head_size=12,
    intermediate_size=24,
    max_position_embeddings=8,
    type_vocab_size=2,
)


def _pretraining_model():
    return modeling.build_model(modeling.BertPretrainingModel(CONFIG))


def test_save_writes_original_names_and_shapes(tmp_path):
    model = _pretraining_model()
    prefix = modeling.save_checkpoint(model, str(tmp_path / "model.ckpt-7"))
    shapes = dict(tf.train.list_variables(prefix))
    assert shapes["bert/encoder/layer_1/attention/self/query/kernel"] == [16, 24]
    assert shapes["bert/encoder/layer_0/attention/self/key/bias"] == [24]
    assert shapes["bert/encoder/layer_0/attention/output/dense/kernel"] == [24, 16]
    assert shapes["bert/encoder/layer_0/output/LayerNorm/gamma"] == [16]
    assert shapes["bert/embeddings/position_embeddings"] == [8, 16]
    assert shapes["cls/predictions/output_bias"] == [20]
    assert shapes["cls/seq_relationship/output_weights"] == [2, 16]
    assert len(shapes) == 5 + 16 * 2 + 2 + 7


def test_round_trip_is_bitwise(tmp_path):
    model = _pretraining_model()
    prefix = modeling.save_checkpoint(model, str(tmp_path / "model.ckpt"))
    tf.random.set_seed(99)
    other = _pretraining_model()
    result = modeling.load_checkpoint(other, prefix)
    assert result.missing == [] and result.unexpected == [] and result.ignored == []
    assert len(result.loaded) == len(modeling.original_variables(model))
    for a, b in zip(model.weights, other.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_our_checkpoint_reads_in_tf1_graph_code(tmp_path):
    """What the original code does: variables by name + init_from_checkpoint."""
    model = _pretraining_model()
    prefix = modeling.save_checkpoint(model, str(tmp_path / "model.ckpt"))
    expected = tf1_checkpoint.model_tensors(model)
    name = "bert/encoder/layer_0/attention/self/value/kernel"
    with tf.Graph().as_default():
        variable = tf.compat.v1.get_variable(name, shape=[16, 24])
        tf.compat.v1.train.init_from_checkpoint(prefix, {name: name})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            value = session.run(variable)
    np.testing.assert_array_equal(value, expected[name])
    # And the attention kernel is the heads-major flattening of Keras' [H, N, D].
    keras_kernel = modeling.original_variables(model)[name].variable.numpy()
    np.testing.assert_array_equal(value[:, 12:24], keras_kernel[:, 1, :])


def test_init_from_original_training_checkpoint_ignores_adam_slots(tmp_path, caplog):
    tensors = reference.random_original_tensors(CONFIG, seed=1)
    training_state = {"global_step": np.int64(1234)}
    for name, value in list(tensors.items()):
        training_state[name + "/adam_m"] = np.zeros_like(value)
        training_state[name + "/adam_v"] = np.ones_like(value)
    prefix = reference.write_tf1_checkpoint(
        str(tmp_path / "model.ckpt-1234"), dict(tensors, **training_state)
    )
    model = _pretraining_model()
    with caplog.at_level(logging.INFO):
        result = modeling.load_checkpoint(model, str(tmp_path))  # a directory works too
    assert len(result.ignored) == len(training_state)
    assert result.missing == [] and result.unexpected == []
    names = modeling.original_variables(model)
    for name, value in tensors.items():
        np.testing.assert_array_equal(names[name].to_original(names[name].variable.numpy()), value)
    assert "%d optimizer/step entries ignored" % len(training_state) in caplog.text


def test_missing_and_unexpected_are_reported(tmp_path, caplog):
    tensors = reference.random_original_tensors(CONFIG, seed=2, pretraining=True)
    prefix = reference.write_tf1_checkpoint(str(tmp_path / "bert_model.ckpt"), tensors)
    model = modeling.build_model(modeling.BertClassifierModel(CONFIG, num_labels=3))
    before = model.classifier.output_weights.numpy()
    with caplog.at_level(logging.INFO):
        result = modeling.load_checkpoint(model, prefix)
    assert result.missing == ["output_bias", "output_weights"]
    assert result.unexpected == sorted(n for n in tensors if n.startswith("cls/"))
    np.testing.assert_array_equal(model.classifier.output_weights.numpy(), before)
    assert "2 model variables are not in" in caplog.text and "output_weights" in caplog.text
    assert "7 checkpoint variables are not used by this model" in caplog.text
    assert "cls/seq_relationship/output_bias" in caplog.text
    assert not [record for record in caplog.records if "encoder are not in this model" in record.getMessage()]


def test_a_deeper_checkpoints_extra_layers_are_named_in_a_warning(tmp_path, caplog):
    deeper = modeling.BertConfig.from_dict(dict(CONFIG.to_dict(), num_hidden_layers=CONFIG.num_hidden_layers + 1))
    tensors = reference.random_original_tensors(deeper, seed=2, pretraining=False)
    prefix = reference.write_tf1_checkpoint(str(tmp_path / "bert_model.ckpt"), tensors)
    with caplog.at_level(logging.INFO):
        result = modeling.load_checkpoint(modeling.build_model(modeling.BertModel(CONFIG)), prefix)
    extra = sorted(n for n in tensors if n.startswith("bert/encoder/layer_%d/" % CONFIG.num_hidden_layers))
    assert result.unexpected == extra and len(extra) == 16
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warnings == ["16 variables of the checkpoint's encoder are not in this model, which has fewer layers or "
                        "another structure (is --bert_config_file the checkpoint's?):\n  " + "\n  ".join(extra)]


def test_shape_mismatch_names_variable_and_both_shapes(tmp_path):
    tensors = reference.random_original_tensors(CONFIG, seed=3, pretraining=False)
    prefix = reference.write_tf1_checkpoint(str(tmp_path / "bert_model.ckpt"), tensors)
    model = modeling.build_model(modeling.BertModel(CONFIG.replace(head_size=8)))
    before = [w.numpy() for w in model.weights]
    with pytest.raises(ValueError) as error:
        modeling.load_checkpoint(model, prefix)
    message = str(error.value)
    assert (
        "bert/encoder/layer_0/attention/self/query/kernel: checkpoint shape [16, 24], "
        "model shape [16, 16]" in message
    )
    assert "Shape mismatch for 14 variable(s)" in message
    # 7 per layer: Q, K, V kernels and biases, the output kernel. Nothing was assigned.
    for b, w in zip(before, model.weights):
        np.testing.assert_array_equal(b, w.numpy())


def test_missing_checkpoint_errors(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    with pytest.raises(ValueError, match=r"Checkpoint .*nope not found: expected the file .*nope.index"):
        modeling.load_checkpoint(model, str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="No checkpoint found in directory"):
        modeling.load_checkpoint(model, str(tmp_path))


def test_extra_tensors_are_saved_and_cannot_shadow_variables(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    prefix = modeling.save_checkpoint(
        model, str(tmp_path / "model.ckpt-3"), extra_tensors={"global_step": np.int64(3)}
    )
    assert tf.train.load_checkpoint(prefix).get_tensor("global_step") == 3
    with pytest.raises(ValueError, match="would overwrite a model variable"):
        modeling.save_checkpoint(
            model, str(tmp_path / "x"), extra_tensors={"bert/pooler/dense/bias": np.zeros(16)}
        )


def test_resolve_checkpoint_takes_a_prefix_or_the_newest_in_a_directory(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    prefix = modeling.save_checkpoint(model, str(tmp_path / "model.ckpt-7"))
    assert tf1_checkpoint.resolve_checkpoint(prefix) == prefix
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-7"\n')
    assert tf1_checkpoint.resolve_checkpoint(str(tmp_path)) == prefix


def test_checkpoint_variable_names_leave_out_training_state_and_add_manifest_names(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    prefix = modeling.save_checkpoint(
        model, str(tmp_path / "model.ckpt-1"), omit=["bert/pooler/dense/kernel"],
        extra_tensors={"global_step": np.int64(1), "bert/pooler/dense/bias/adam_m": np.zeros(16, np.float32)})
    names = tf1_checkpoint.checkpoint_variable_names(prefix)
    assert "global_step" not in names and "bert/pooler/dense/bias/adam_m" not in names
    assert "bert/pooler/dense/kernel" not in names and "bert/pooler/dense/bias" in names
    # A --save_frozen=seed manifest names what the checkpoint regenerates.
    from freezing import seeded_values

    seeded_values.write_manifest(prefix, {"random_seed": 1, "variables": {"bert/pooler/dense/kernel": {}}})
    assert "bert/pooler/dense/kernel" in tf1_checkpoint.checkpoint_variable_names(prefix)
    assert tf1_checkpoint.is_training_state("global_step")
    assert tf1_checkpoint.is_training_state("bert/embeddings/word_embeddings/adam_v")
    assert not tf1_checkpoint.is_training_state("bert/embeddings/word_embeddings")
