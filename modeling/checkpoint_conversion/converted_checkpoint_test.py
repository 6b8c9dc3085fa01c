"""Filling our model from converted weights: shapes, groups, dtypes and the errors that name the source."""

import numpy as np
import pytest

import modeling
from modeling.checkpoint_conversion import testing
from modeling.checkpoint_conversion.converted_checkpoint import ConvertedCheckpoint, load_into_model
from modeling.checkpoint_conversion.errors import ConversionError


def _checkpoint(tensors, config=testing.CONFIG):
    sources = {name: "in.safetensors: %s" % name.replace("/", ".") for name in tensors}
    return ConvertedCheckpoint(config, tensors, sources, "vocab.txt", "config.json", "in.safetensors")


def test_every_value_lands_in_its_variable():
    tensors = testing.random_tensors()
    model, absent = load_into_model(_checkpoint(tensors))
    assert absent == []
    for name, entry in modeling.original_variables(model).items():
        np.testing.assert_array_equal(entry.to_original(entry.variable.numpy()), tensors[name], err_msg=name)


def test_absent_optional_groups_are_listed_and_logged(caplog):
    tensors = {n: v for n, v in testing.random_tensors().items() if not n.startswith("cls/seq_relationship/")}
    with caplog.at_level("INFO"):
        _, absent = load_into_model(_checkpoint(tensors))
    assert absent == ["cls/seq_relationship/output_bias", "cls/seq_relationship/output_weights"]
    assert "in.safetensors has no next-sentence head (cls/seq_relationship/)" in caplog.text
    assert "in.safetensors: converting the encoder, the pooler, the masked-LM head." in caplog.text


def test_a_partial_group_is_refused():
    tensors = testing.random_tensors()
    del tensors["cls/predictions/output_bias"]
    with pytest.raises(ConversionError, match=r"in.safetensors has part of the masked-LM head \(cls/predictions/\): "
                                              r"present in.safetensors: cls.predictions.transform.dense.kernel; .*; "
                                              r"missing \(original names\) cls/predictions/output_bias\."):
        load_into_model(_checkpoint(tensors))


def test_missing_encoder_weights_are_refused():
    tensors = testing.random_tensors()
    del tensors["bert/encoder/layer_1/output/LayerNorm/beta"]
    with pytest.raises(ConversionError, match=r"in.safetensors lacks 1 encoder variable\(s\) \(original names\): "
                                              r"bert/encoder/layer_1/output/LayerNorm/beta\."):
        load_into_model(_checkpoint(tensors))


def test_a_shape_that_does_not_fit_names_source_config_and_both_shapes():
    tensors = testing.random_tensors(testing.CONFIG.replace(intermediate_size=40))
    with pytest.raises(ConversionError, match=r"6 variable\(s\) do not fit the config config.json \(hidden_size=32, "
                                              r"num_attention_heads=4, head_size=None, intermediate_size=48, .*\): "
                                              r"in.safetensors: bert.encoder.layer_0.intermediate.dense.kernel is "
                                              r"\[32, 40\] in the original layout \(bert/encoder/layer_0/intermediate/"
                                              r"dense/kernel\), expected \[32, 48\]"):
        load_into_model(_checkpoint(tensors))


def test_task_heads_and_integer_tensors_are_refused():
    tensors = testing.random_tensors()
    tensors["output_weights"] = np.zeros([3, 32], np.float32)
    with pytest.raises(ConversionError, match=r"1 variable\(s\) have no place in BERT .*task heads are not "
                                              r"converted\): in.safetensors: output_weights\."):
        load_into_model(_checkpoint(tensors))
    tensors = testing.random_tensors()
    tensors["bert/pooler/dense/bias"] = np.zeros([32], np.int64)
    with pytest.raises(ConversionError, match=r"in.safetensors: bert.pooler.dense.bias has dtype int64, expected a "
                                              r"float"):
        load_into_model(_checkpoint(tensors))
