"""Seeded values and the manifests that regenerate them."""

import numpy as np
import pytest

import modeling
from checkpoints import seeded_init
from freezing import seeded_values
from modeling import bert_model

CONFIG = modeling.BertConfig(
    vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, head_size=12,
    intermediate_size=20, max_position_embeddings=8, type_vocab_size=2, initializer_range=0.05,
)


def test_known_value_pins_the_generator():
    """A golden value, recorded with TF 2.20: if a TensorFlow upgrade changes the
    stateless generator, seed-saved checkpoints would no longer regenerate, and
    this test says so before any checkpoint does."""
    value = seeded_values.seeded_value("bert/pooler/dense/kernel", (2, 3), "truncated_normal", 0.02, 12345)
    golden = [[0.015697619, 0.005647276, -0.02020378], [0.002464799, 0.012620177, 0.0007009842]]
    np.testing.assert_allclose(value, golden, rtol=1e-6)


def test_manifest_regenerates_and_detects_tampering(tmp_path):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    seeded_init.initialize(model, seed=11)
    variables = modeling.original_variables(model)
    names = ["bert/encoder/layer_0/attention/self/query/kernel", "bert/encoder/layer_1/output/dense/bias"]
    content = seeded_values.manifest(variables, names, 11, bert_model.initializers(CONFIG))
    assert content["variables"][names[0]]["shape"] == [16, 24]
    assert content["variables"][names[0]]["stddev"] == 0.05
    assert content["variables"][names[1]]["initializer"] == "zeros"
    value = seeded_values.regenerate(content, names[0])
    entry = variables[names[0]]
    np.testing.assert_array_equal(value, entry.to_original(entry.variable.numpy()))
    # Written beside a checkpoint prefix and read back.
    prefix = str(tmp_path / "model.ckpt-1")
    seeded_values.write_manifest(prefix, content)
    assert seeded_values.read_manifest(prefix) == content
    assert seeded_values.read_manifest(str(tmp_path / "model.ckpt-2")) is None
    content["random_seed"] = 12
    with pytest.raises(ValueError, match=r"Regenerating frozen variable bert/encoder/layer_0/attention/self/query/kernel from seed 12 .*gives a different tensor"):
        seeded_values.regenerate(content, names[0], "ckpt")


def test_assign_seeded_touches_only_the_named_variables():
    model = modeling.build_model(modeling.BertModel(CONFIG))
    variables = modeling.original_variables(model)
    kernel, other = "bert/encoder/layer_1/intermediate/dense/kernel", "bert/pooler/dense/kernel"
    before = variables[other].variable.numpy().copy()
    seeded_values.assign_seeded(variables, [kernel], 4, lambda name: ("truncated_normal", 0.5))
    expected = seeded_values.seeded_value(kernel, (16, 20), "truncated_normal", 0.5, 4)
    np.testing.assert_array_equal(variables[kernel].variable.numpy(), expected)
    np.testing.assert_array_equal(variables[other].variable.numpy(), before)
    with pytest.raises(ValueError, match="Unknown initializer 'laplace' for x; expected one of truncated_normal, "
                                         "uniform, zeros, ones"):
        seeded_values.seeded_value("x", (2,), "laplace", None, 1)
