"""Task heads (pre-training, classifier, SQuAD) against the NumPy original."""

import numpy as np
import pytest
import tf_keras

import modeling
from modeling.testing import original_bert_numpy as reference

CONFIG = modeling.BertConfig(
    vocab_size=30,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    head_size=12,
    intermediate_size=40,
    max_position_embeddings=12,
    type_vocab_size=2,
)


def _inputs():
    rng = np.random.RandomState(3)
    ids = rng.randint(0, 30, size=(2, 6)).astype(np.int32)
    mask = np.array([[1] * 6, [1] * 4 + [0] * 2], np.int32)
    types = np.array([[0, 0, 0, 1, 1, 1]] * 2, np.int32)
    return dict(input_ids=ids, input_mask=mask, token_type_ids=types)


def _load(model, tmp_path, tensors):
    prefix = reference.write_tf1_checkpoint(str(tmp_path / "model.ckpt"), tensors)
    result = modeling.load_checkpoint(modeling.build_model(model), prefix)
    assert result.missing == [] and result.unexpected == []


def test_pretraining_heads_match_original(tmp_path):
    tensors = reference.random_original_tensors(CONFIG, seed=5, pretraining=True)
    model = modeling.BertPretrainingModel(CONFIG)
    _load(model, tmp_path, tensors)
    inputs = _inputs()
    positions = np.array([[1, 3, 0], [2, 2, 5]], np.int32)
    out = model(dict(inputs, masked_lm_positions=positions), training=False)
    encoder = reference.bert_forward(
        CONFIG, tensors, inputs["input_ids"], inputs["input_mask"], inputs["token_type_ids"]
    )
    mlm, nsp = reference.pretraining_heads_forward(
        CONFIG, tensors, encoder["sequence_output"], encoder["pooled_output"], positions
    )
    assert out["masked_lm_logits"].shape == (2, 3, 30)
    np.testing.assert_allclose(out["masked_lm_logits"], mlm, atol=2e-5)
    np.testing.assert_allclose(out["next_sentence_logits"], nsp, atol=1e-5)


def test_mlm_decoder_is_tied_to_word_embeddings():
    model = modeling.BertPretrainingModel(CONFIG)
    modeling.build_model(model)
    names = modeling.original_variables(model)
    assert "cls/predictions/output_weights" not in names
    assert model.masked_lm.embedding_table is names["bert/embeddings/word_embeddings"].variable
    assert names["cls/predictions/output_bias"].shape == (30,)
    assert names["cls/seq_relationship/output_weights"].shape == (2, 32)


def test_classifier_logits_match_original(tmp_path):
    tensors = reference.random_original_tensors(CONFIG, seed=6, pretraining=False, num_labels=3)
    model = modeling.BertClassifierModel(CONFIG, num_labels=3)
    _load(model, tmp_path, tensors)
    inputs = _inputs()
    logits = model(inputs, training=False)["logits"]
    encoder = reference.bert_forward(CONFIG, tensors, *inputs.values())
    expected = encoder["pooled_output"] @ tensors["output_weights"].T + tensors["output_bias"]
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    assert modeling.original_variables(model)["output_weights"].shape == (3, 32)


def test_squad_logits_match_original(tmp_path):
    tensors = reference.random_original_tensors(CONFIG, seed=7, pretraining=False, squad=True)
    model = modeling.BertSquadModel(CONFIG)
    _load(model, tmp_path, tensors)
    inputs = _inputs()
    out = model(inputs, training=False)
    encoder = reference.bert_forward(CONFIG, tensors, *inputs.values())
    logits = encoder["sequence_output"] @ tensors["cls/squad/output_weights"].T
    logits += tensors["cls/squad/output_bias"]
    np.testing.assert_allclose(out["start_logits"], logits[..., 0], atol=1e-5)
    np.testing.assert_allclose(out["end_logits"], logits[..., 1], atol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda: modeling.BertPretrainingModel(CONFIG),
        lambda: modeling.BertClassifierModel(CONFIG, num_labels=5),
        lambda: modeling.BertSquadModel(CONFIG),
    ],
)
def test_get_config_round_trip(make):
    model = make()
    config = model.get_config()
    clone = type(model).from_config(config)
    assert clone.get_config() == config
    assert clone.config.head_size == 12
    # Registered with Keras, so tf_keras can deserialize it by name.
    serialized = tf_keras.utils.serialize_keras_object(model)
    assert tf_keras.utils.deserialize_keras_object(serialized).get_config() == config
