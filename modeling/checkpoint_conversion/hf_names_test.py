"""HF BERT names and layouts <-> the original's, checked against a hand transcription (testing.hf_state_dict)."""

import numpy as np
import pytest

import modeling
from modeling.checkpoint_conversion import hf_names, testing
from modeling.checkpoint_conversion.errors import ConversionError

LAYERS = testing.CONFIG.num_hidden_layers


@pytest.fixture(scope="module")
def tensors():
    return testing.random_tensors()


def _convert(hf):
    return hf_names.hf_to_original(hf, LAYERS, "model.safetensors")


def _assert_same(a, b):
    assert sorted(a) == sorted(b)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_the_table_names_every_variable_of_the_pretraining_model():
    model = modeling.build_model(modeling.BertPretrainingModel(testing.CONFIG))
    table = hf_names.name_table(LAYERS)
    assert sorted(e.original for e in table) == sorted(modeling.original_variables(model))
    assert len({e.hf for e in table}) == len(table)


@pytest.mark.parametrize("prefix", ["bert.", ""])
def test_reads_the_state_dict_with_and_without_the_bert_prefix(tensors, prefix):
    converted, sources = _convert(testing.hf_state_dict(tensors, LAYERS, prefix=prefix))
    _assert_same(converted, tensors)
    assert sources["bert/encoder/layer_1/attention/self/query/kernel"] == (
        "model.safetensors: %sencoder.layer.1.attention.self.query.weight (transposed)" % prefix)
    assert sources["cls/seq_relationship/output_weights"] == "model.safetensors: cls.seq_relationship.weight"


def test_linear_weights_are_transposed_and_the_rest_kept(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    converted, _ = _convert(hf)
    query = hf["bert.encoder.layer.0.attention.self.query.weight"]
    assert query.shape == (32, 32) and converted["bert/encoder/layer_0/attention/self/query/kernel"].flags.c_contiguous
    np.testing.assert_array_equal(converted["bert/encoder/layer_0/intermediate/dense/kernel"],
                                  hf["bert.encoder.layer.0.intermediate.dense.weight"].T)
    assert converted["bert/encoder/layer_0/intermediate/dense/kernel"].shape == (32, 48)  # [in, out]
    assert converted["cls/seq_relationship/output_weights"].shape == (2, 32)  # as HF's [2, H]
    assert converted["bert/embeddings/word_embeddings"].shape == (30, 32)


def test_older_gamma_beta_layer_norms_and_index_buffers(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    old = {name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
           for name, v in hf.items()}
    assert "bert.encoder.layer.0.output.LayerNorm.gamma" in old
    old["bert.embeddings.position_ids"] = np.arange(16)[None]
    old["bert.embeddings.token_type_ids"] = np.zeros([1, 16], np.int64)
    converted, _ = _convert(old)
    _assert_same(converted, tensors)


def test_tied_decoder_is_checked_and_skipped(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["cls.predictions.decoder.weight"] = hf["bert.embeddings.word_embeddings.weight"].copy()
    hf["cls.predictions.decoder.bias"] = hf["cls.predictions.bias"].copy()
    converted, _ = _convert(hf)
    _assert_same(converted, tensors)

    hf["cls.predictions.decoder.weight"] = hf["cls.predictions.decoder.weight"] + 1
    with pytest.raises(ConversionError, match=r"model.safetensors: `cls.predictions.decoder.weight` differs from "
                                              r"`bert.embeddings.word_embeddings.weight`; expected them tied"):
        _convert(hf)


def test_only_the_tied_copy_of_the_output_bias_is_the_bias(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["cls.predictions.decoder.bias"] = hf.pop("cls.predictions.bias")
    converted, sources = _convert(hf)
    _assert_same(converted, tensors)
    assert sources["cls/predictions/output_bias"] == "model.safetensors: cls.predictions.decoder.bias"


def test_unknown_weights_are_named_not_dropped(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["classifier.weight"] = np.zeros([3, 32], np.float32)
    hf["bert.encoder.layer.2.output.dense.bias"] = np.zeros([32], np.float32)
    with pytest.raises(ConversionError, match=r"model.safetensors: 2 weight\(s\) have no original BERT name: "
                                              r"bert.encoder.layer.2.output.dense.bias, classifier.weight\. "
                                              r"Expected .* num_hidden_layers=2"):
        _convert(hf)


def test_a_prefix_on_part_of_the_encoder_is_refused(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["pooler.dense.bias"] = hf.pop("bert.pooler.dense.bias")
    with pytest.raises(ConversionError, match=r"mixes names with and without the `bert.` prefix \(e.g. `bert.embed"
                                              r".*` and `pooler.dense.bias`\)"):
        _convert(hf)


def test_a_weight_given_twice_is_refused(tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["bert.embeddings.LayerNorm.gamma"] = hf["bert.embeddings.LayerNorm.weight"]
    with pytest.raises(ConversionError, match=r"holds `embeddings.LayerNorm.weight` twice"):
        _convert(hf)


@pytest.mark.parametrize("heads,architecture,prefix", [
    (("cls/predictions/", "cls/seq_relationship/"), "BertForPreTraining", "bert."),
    (("cls/predictions/",), "BertForMaskedLM", "bert."),
    ((), "BertModel", ""),
])
def test_writes_hf_names_the_hand_transcription_reads(tensors, heads, architecture, prefix):
    subset = {n: v for n, v in tensors.items() if not n.startswith("cls/") or n.startswith(heads)}
    hf, got_architecture = hf_names.original_to_hf(subset, LAYERS)
    assert got_architecture == architecture
    _assert_same(hf, testing.hf_state_dict(subset, LAYERS, prefix=prefix))
