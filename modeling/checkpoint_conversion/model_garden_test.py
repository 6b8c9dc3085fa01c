"""Model Garden TF2 encoder checkpoints, saved as Model Garden saves them, converted and run in our BertModel."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from official.nlp.modeling import models, networks

import modeling
from layers import activations
from modeling.checkpoint_conversion import model_garden, original_format, testing
from modeling.checkpoint_conversion.converted_checkpoint import load_into_model
from modeling.checkpoint_conversion.errors import ConversionError

CONFIG = testing.CONFIG.replace(hidden_act="gelu")  # Model Garden's default activation


def _randomize(variables, seed):
    """Values far from the initializers, so that every weight matters."""
    rng = np.random.RandomState(seed)
    for variable in variables:
        scale = 0.5 if "embeddings" in variable.name else 0.2
        value = rng.standard_normal(variable.shape) * scale
        if variable.name.endswith("gamma:0"):
            value = 1.0 + value * 0.5
        variable.assign(value.astype(np.float32))


def _garden_encoder(cls=networks.BertEncoderV2, seed=0):
    kwargs = dict(vocab_size=CONFIG.vocab_size, hidden_size=CONFIG.hidden_size, num_layers=CONFIG.num_hidden_layers,
                  num_attention_heads=CONFIG.num_attention_heads, max_sequence_length=CONFIG.max_position_embeddings,
                  type_vocab_size=CONFIG.type_vocab_size, inner_activation=activations.get_activation("gelu"),
                  inner_dim=CONFIG.intermediate_size, output_dropout=0.0, attention_dropout=0.0)
    if cls is networks.BertEncoder:
        kwargs["dict_outputs"] = True
    encoder = cls(**kwargs)
    ids = tf.zeros([1, 2], tf.int32)
    encoder(dict(input_word_ids=ids, input_mask=ids, input_type_ids=ids))
    _randomize(encoder.weights, seed)
    return encoder


def _write_config_and_vocab(directory, config=CONFIG):
    os.makedirs(directory, exist_ok=True)
    config.to_json_file(os.path.join(directory, "bert_config.json"))
    testing.write_vocab(os.path.join(directory, "vocab.txt"))


def _inputs():
    rng = np.random.RandomState(1)
    ids = rng.randint(0, CONFIG.vocab_size, size=[2, 9]).astype(np.int32)
    mask = np.array([[1] * 9, [1] * 5 + [0] * 4], np.int32)
    types = np.array([[0] * 4 + [1] * 5, [0, 0, 1, 1, 1, 0, 0, 0, 0]], np.int32)
    return ids, mask, types


def _our_model(checkpoint, model_class=modeling.BertModel):
    """Our model after a round through bert_model.ckpt, as a user gets it."""
    converted, absent = load_into_model(checkpoint)
    directory = os.path.join(os.path.dirname(checkpoint.origin), "converted")
    original_format.write_original(converted, absent, checkpoint.config, checkpoint.vocab_file, directory)
    ours = modeling.build_model(model_class(
        modeling.BertConfig.from_json_file(os.path.join(directory, "bert_config.json"))))
    result = modeling.load_checkpoint(ours, os.path.join(directory, "bert_model.ckpt"))
    return ours, result


def _assert_same_outputs(ours, encoder):
    ids, mask, types = _inputs()
    want = encoder(dict(input_word_ids=ids, input_mask=mask, input_type_ids=types))
    got = ours(dict(input_ids=ids, input_mask=mask, token_type_ids=types))
    np.testing.assert_allclose(got["sequence_output"].numpy(), want["sequence_output"].numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(got["pooled_output"].numpy(), want["pooled_output"].numpy(), atol=1e-5, rtol=0)
    assert np.abs(want["pooled_output"].numpy()).max() > 0.1  # Not a vacuous comparison.


def test_an_encoder_saved_as_checkpoint_encoder_runs_as_in_model_garden(tmp_path):
    encoder = _garden_encoder()
    prefix = tf.train.Checkpoint(encoder=encoder).save(str(tmp_path / "ckpt"))
    _write_config_and_vocab(str(tmp_path))
    checkpoint = model_garden.read_model_garden(str(tmp_path))  # The directory: its latest checkpoint.
    assert checkpoint.origin == prefix
    assert checkpoint.sources["bert/encoder/layer_1/attention/self/query/kernel"] == (
        "%s: encoder/_transformer_layers/1/_attention_layer/_query_dense/kernel/.ATTRIBUTES/VARIABLE_VALUE" % prefix)
    ours, result = _our_model(checkpoint)
    assert result.missing == [] and result.unexpected == [] and len(result.loaded) == 5 + 2 * 16 + 2
    _assert_same_outputs(ours, encoder)


def test_the_functional_bert_encoder_saved_as_model_converts_too(tmp_path):
    """tf2_bert_encoder_checkpoint_converter's layout: the older BertEncoder under `model`."""
    encoder = _garden_encoder(networks.BertEncoder, seed=1)
    prefix = tf.train.Checkpoint(model=encoder).save(str(tmp_path / "bert_model.ckpt"))
    _write_config_and_vocab(str(tmp_path))
    ours, _ = _our_model(model_garden.read_model_garden(prefix))
    _assert_same_outputs(ours, encoder)


def test_a_pretrainer_checkpoint_brings_its_masked_lm_and_leaves_training_state(tmp_path):
    encoder = _garden_encoder(seed=2)
    pretrainer = models.BertPretrainerV2(encoder_network=encoder, mlm_activation=activations.get_activation("gelu"))
    positions = np.array([[1, 3], [0, 4]], np.int32)
    ids, mask, types = _inputs()
    pretrainer(dict(input_word_ids=ids, input_mask=mask, input_type_ids=types, masked_lm_positions=positions))
    _randomize(pretrainer.masked_lm.weights[1:], seed=3)  # [0] is the word embeddings, already random.
    optimizer = tf_keras.optimizers.Adam()
    optimizer.build(pretrainer.trainable_variables)
    # Model Garden's trainer: the model, its checkpoint items, the optimizer and the step.
    checkpoint = tf.train.Checkpoint(model=pretrainer, optimizer=optimizer, global_step=tf.Variable(7),
                                     **pretrainer.checkpoint_items)
    _write_config_and_vocab(str(tmp_path))
    converted = model_garden.read_model_garden(checkpoint.save(str(tmp_path / "ckpt")))
    assert sum(n.startswith("cls/predictions/") for n in converted.tensors) == 5

    ours, result = _our_model(converted, modeling.BertPretrainingModel)
    assert result.missing == ["cls/seq_relationship/output_bias", "cls/seq_relationship/output_weights"]
    want = pretrainer(dict(input_word_ids=ids, input_mask=mask, input_type_ids=types, masked_lm_positions=positions))
    got = ours(dict(input_ids=ids, input_mask=mask, token_type_ids=types, masked_lm_positions=positions))
    np.testing.assert_allclose(got["masked_lm_logits"].numpy(), want["mlm_logits"].numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(got["sequence_output"].numpy(), want["sequence_output"].numpy(), atol=1e-5, rtol=0)


def test_leftover_variables_are_named(tmp_path):
    encoder = _garden_encoder()
    classifier = tf_keras.layers.Dense(3)
    classifier.build([None, CONFIG.hidden_size])
    prefix = tf.train.Checkpoint(encoder=encoder, classifier=classifier).save(str(tmp_path / "ckpt"))
    _write_config_and_vocab(str(tmp_path))
    with pytest.raises(ConversionError, match=r"ckpt-1: 2 variable\(s\) are not part of a BERT encoder or its "
                                              r"masked-LM head: classifier/bias/.ATTRIBUTES/VARIABLE_VALUE, "
                                              r"classifier/kernel/.ATTRIBUTES/VARIABLE_VALUE"):
        model_garden.read_model_garden(prefix)


def test_a_config_that_does_not_fit_names_the_variable(tmp_path):
    prefix = tf.train.Checkpoint(encoder=_garden_encoder()).save(str(tmp_path / "ckpt"))
    _write_config_and_vocab(str(tmp_path), CONFIG.replace(intermediate_size=40))
    with pytest.raises(ConversionError, match=r"ckpt-1: encoder/_transformer_layers/0/_intermediate_dense/kernel/"
                                              r".ATTRIBUTES/VARIABLE_VALUE has shape \[32, 48\]; bert_config .* gives "
                                              r"Model Garden's encoder \[32, 40\] there \(bert/encoder/layer_0/"
                                              r"intermediate/dense/kernel\)"):
        model_garden.read_model_garden(prefix)


def test_what_is_not_a_model_garden_bert_encoder_is_refused(tmp_path):
    _write_config_and_vocab(str(tmp_path))
    name_based = testing.write_original_dir(str(tmp_path / "tf1"), testing.random_tensors(CONFIG))
    with pytest.raises(ConversionError, match=r"bert_model.ckpt is a name-based \(TF1\) checkpoint, not Model "
                                              r"Garden's object-based one; read it with --input_format=original"):
        model_garden.read_model_garden(os.path.join(name_based, "bert_model.ckpt"))

    dense = tf_keras.layers.Dense(3)
    dense.build([None, 2])
    prefix = tf.train.Checkpoint(model=dense).save(str(tmp_path / "ckpt"))
    with pytest.raises(ConversionError, match=r"ckpt-1 is an object-based checkpoint with no bert/ variables, not "
                                              r"the original layout; for Model Garden's, give "
                                              r"--input_format=model_garden"):
        original_format.read_original(prefix)
    with pytest.raises(ConversionError, match=r"ckpt-1: expected one BertEncoder \(an object with _embedding_layer "
                                              r"and _transformer_layers\) in the checkpoint's object graph, found none "
                                              r"\(top-level objects: model, save_counter\)"):
        model_garden.read_model_garden(prefix)


@pytest.mark.parametrize("overrides,expected", [
    (dict(head_size=12), r"`head_size` = 12, but Model Garden's BERT encoder has heads of hidden_size / "
                         r"num_attention_heads = 8"),
])
def test_configs_model_garden_cannot_have_are_refused(tmp_path, overrides, expected):
    _write_config_and_vocab(str(tmp_path), CONFIG.replace(**overrides))
    with pytest.raises(ConversionError, match=r"bert_config.json: " + expected):
        model_garden.read_model_garden(str(tmp_path / "ckpt-1"))


@pytest.mark.parametrize("key,value,expected", [
    ("embedding_size", 16, r"`embedding_size` = 16 is not supported; expected hidden_size \(32\)"),
    ("norm_first", True, r"`norm_first` = true is not supported; expected false"),
])
def test_model_garden_config_keys_that_are_not_bert_are_refused(tmp_path, key, value, expected):
    _write_config_and_vocab(str(tmp_path))
    values = CONFIG.to_dict()
    values[key] = value
    (tmp_path / "bert_config.json").write_text(json.dumps(values))
    with pytest.raises(ConversionError, match=r"bert_config.json: " + expected):
        model_garden.read_model_garden(str(tmp_path / "ckpt-1"))
