"""BertModel against an independent NumPy implementation of the original."""

import numpy as np
import pytest
import tensorflow as tf

import modeling
from modeling.testing import original_bert_numpy as reference

VOCAB = 40
SEQ = 7


def _config(hidden, heads, head_size=None, hidden_act="gelu", layers=2):
    return modeling.BertConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=48,
        hidden_act=hidden_act,
        max_position_embeddings=16,
        type_vocab_size=2,
        head_size=head_size,
    )


def _inputs(seed=0):
    rng = np.random.RandomState(seed)
    ids = rng.randint(0, VOCAB, size=(3, SEQ))
    mask = np.ones((3, SEQ), np.int32)
    mask[1, 4:] = 0  # padding that must receive no attention
    mask[2, 2:] = 0
    types = np.zeros((3, SEQ), np.int32)
    types[:, 3:] = 1
    return ids.astype(np.int32), mask, types


@pytest.mark.parametrize(
    "hidden, heads, head_size, act",
    [
        (64, 4, None, "gelu"),  # standard: D = H/N = 16
        (64, 4, 32, "gelu"),  # fixed head size, N*D = 128 != H
        (64, 3, 24, "gelu"),  # N does not divide H
        (64, 4, None, "gelu_exact"),
        (64, 2, 8, "relu"),  # N*D = 16 < H
    ],
)
def test_matches_numpy_original_loaded_from_tf1_checkpoint(tmp_path, hidden, heads, head_size, act):
    config = _config(hidden, heads, head_size, act)
    tensors = reference.random_original_tensors(config, seed=hidden + heads, pretraining=False)
    prefix = reference.write_tf1_checkpoint(str(tmp_path / "bert_model.ckpt"), tensors)

    model = modeling.build_model(modeling.BertModel(config))
    result = modeling.load_checkpoint(model, prefix)
    assert result.missing == [] and result.unexpected == []

    ids, mask, types = _inputs()
    ours = model(
        dict(input_ids=ids, input_mask=mask, token_type_ids=types), training=False
    )
    expected = reference.bert_forward(config, tensors, ids, mask, types)
    np.testing.assert_allclose(ours["embedding_output"], expected["embedding_output"], atol=1e-5)
    assert len(ours["all_encoder_layers"]) == config.num_hidden_layers
    for got, want in zip(ours["all_encoder_layers"], expected["all_encoder_layers"]):
        np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(ours["sequence_output"], expected["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(ours["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_array_equal(
        ours["embedding_table"], tensors["bert/embeddings/word_embeddings"]
    )


def test_padding_tokens_do_not_change_real_outputs():
    config = _config(32, 4)
    model = modeling.build_model(modeling.BertModel(config))
    ids, mask, types = _inputs()
    out = model(dict(input_ids=ids, input_mask=mask, token_type_ids=types))
    changed = ids.copy()
    changed[1, 4:] = (changed[1, 4:] + 1) % VOCAB  # only padded positions change
    out2 = model(dict(input_ids=changed, input_mask=mask, token_type_ids=types))
    np.testing.assert_allclose(out["sequence_output"][1, :4], out2["sequence_output"][1, :4], atol=1e-6)
    assert not np.allclose(out["sequence_output"][1, 4:], out2["sequence_output"][1, 4:])


def test_dropout_only_in_training():
    config = _config(32, 4)
    model = modeling.build_model(modeling.BertModel(config))
    ids, mask, types = _inputs()
    inputs = dict(input_ids=ids, input_mask=mask, token_type_ids=types)
    a = model(inputs, training=False)["sequence_output"]
    b = model(inputs, training=False)["sequence_output"]
    c = model(inputs, training=True)["sequence_output"]
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c, atol=1e-3)


def test_default_mask_and_token_types():
    config = _config(32, 4)
    model = modeling.build_model(modeling.BertModel(config))
    ids, _, _ = _inputs()
    explicit = model(
        dict(input_ids=ids, input_mask=np.ones_like(ids), token_type_ids=np.zeros_like(ids))
    )
    implicit = model(dict(input_ids=ids))
    np.testing.assert_array_equal(explicit["pooled_output"], implicit["pooled_output"])


def test_variable_shapes_follow_head_size():
    config = _config(64, 3, head_size=24)
    model = modeling.build_model(modeling.BertModel(config))
    names = modeling.original_variables(model)
    assert names["bert/encoder/layer_0/attention/self/query/kernel"].shape == (64, 72)
    assert names["bert/encoder/layer_1/attention/self/value/bias"].shape == (72,)
    assert names["bert/encoder/layer_0/attention/output/dense/kernel"].shape == (72, 64)
    assert names["bert/encoder/layer_0/intermediate/dense/kernel"].shape == (64, 48)


def test_initialization_is_truncated_normal_with_initializer_range():
    config = _config(64, 4).replace(initializer_range=0.05, vocab_size=2000)
    tf.random.set_seed(1)
    model = modeling.build_model(modeling.BertModel(config))
    table = model.get_embedding_table().numpy()
    assert np.abs(table).max() <= 2 * 0.05 + 1e-7  # truncated at 2 stddev
    # A normal truncated at 2 sigma has stddev 0.88 sigma.
    assert abs(table.std() - 0.88 * 0.05) < 0.003
    names = modeling.original_variables(model)
    np.testing.assert_array_equal(names["bert/pooler/dense/bias"].variable.numpy(), 0.0)
    np.testing.assert_array_equal(names["bert/embeddings/LayerNorm/gamma"].variable.numpy(), 1.0)


def test_sequence_longer_than_max_position_embeddings_is_an_error():
    model = modeling.build_model(modeling.BertModel(_config(32, 4)))
    with pytest.raises(ValueError, match="Sequence length 17 is longer than max_position_embeddings 16"):
        model(dict(input_ids=np.zeros((1, 17), np.int32)))


def test_get_config_round_trip():
    config = _config(64, 3, head_size=24)
    model = modeling.BertModel(config)
    clone = modeling.BertModel.from_config(model.get_config())
    assert clone.config == config
    assert clone.config.head_size == 24
