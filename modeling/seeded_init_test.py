"""Seeded initialisation and regeneration from a manifest."""

import numpy as np
import pytest
import tensorflow as tf

import modeling
from modeling import seeded_init

CONFIG = modeling.BertConfig(
    vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, head_size=12,
    intermediate_size=20, max_position_embeddings=8, type_vocab_size=2, initializer_range=0.05,
)


def _values(model):
    return {n: e.to_original(e.variable.numpy()) for n, e in modeling.original_variables(model).items()}


def test_values_are_a_function_of_seed_name_shape_and_initializer():
    tf.random.set_seed(1)
    a = modeling.build_model(modeling.BertPretrainingModel(CONFIG))
    tf.random.set_seed(2)  # Keras' own initial values differ ...
    b = modeling.build_model(modeling.BertClassifierModel(CONFIG, num_labels=3))
    seeded_init.initialize(a, seed=7)
    seeded_init.initialize(b, seed=7)
    va, vb = _values(a), _values(b)
    # ... but shared names get identical values, whatever else the model holds.
    for name in vb:
        if name in va:
            np.testing.assert_array_equal(va[name], vb[name], err_msg=name)
    seeded_init.initialize(a, seed=8)
    assert not np.array_equal(_values(a)["bert/embeddings/word_embeddings"], va["bert/embeddings/word_embeddings"])


def test_initializers_follow_the_original():
    model = modeling.build_model(modeling.BertClassifierModel(CONFIG.replace(vocab_size=3000), num_labels=2))
    seeded_init.initialize(model, seed=3)
    values = _values(model)
    np.testing.assert_array_equal(values["bert/encoder/layer_0/output/LayerNorm/gamma"], 1.0)
    np.testing.assert_array_equal(values["bert/encoder/layer_0/output/LayerNorm/beta"], 0.0)
    np.testing.assert_array_equal(values["bert/pooler/dense/bias"], 0.0)
    table = values["bert/embeddings/word_embeddings"]
    assert np.abs(table).max() <= 2 * 0.05 and abs(table.std() - 0.88 * 0.05) < 0.002
    # The classifier's output weights use the original's fixed 0.02.
    assert np.abs(values["output_weights"]).max() <= 0.04
    assert seeded_init.initializer_of("output_weights", 0.05) == ("truncated_normal", 0.02)


def test_known_value_pins_the_generator():
    """A golden value, recorded with TF 2.20: if a TensorFlow upgrade changes the
    stateless generator, seed-saved checkpoints would no longer regenerate, and
    this test says so before any checkpoint does."""
    value = seeded_init.seeded_value("bert/pooler/dense/kernel", (2, 3), "truncated_normal", 0.02, 12345)
    golden = [[0.015697619, 0.005647276, -0.02020378], [0.002464799, 0.012620177, 0.0007009842]]
    np.testing.assert_allclose(value, golden, rtol=1e-6)


def test_manifest_regenerates_and_detects_tampering(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    seeded_init.initialize(model, seed=11)
    names = ["bert/encoder/layer_0/attention/self/query/kernel", "bert/encoder/layer_1/output/dense/bias"]
    content = seeded_init.manifest(model, names, seed=11)
    assert content["variables"][names[0]]["shape"] == [16, 24]
    value = seeded_init.regenerate(content, names[0])
    np.testing.assert_array_equal(value, _values(model)[names[0]])
    content["random_seed"] = 12
    with pytest.raises(ValueError, match=r"Regenerating frozen variable bert/encoder/layer_0/attention/self/query/kernel from seed 12 .*gives a different tensor"):
        seeded_init.regenerate(content, names[0], "ckpt")
