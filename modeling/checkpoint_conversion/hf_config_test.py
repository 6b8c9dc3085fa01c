"""HF config.json <-> BertConfig: the keys, the activations, HF's defaults, and what is refused."""

import pytest

from modeling.checkpoint_conversion import hf_config, testing
from modeling.checkpoint_conversion.errors import ConversionError

SOURCE = "/m/config.json"


def test_a_transformers_config_reads_as_ours():
    config = hf_config.bert_config_from_hf(testing.hf_config(), SOURCE)
    assert config == testing.CONFIG  # HF "gelu" (erf) is our "gelu_exact".


@pytest.mark.parametrize("hf,ours", [("gelu", "gelu_exact"), ("gelu_python", "gelu_exact"), ("gelu_new", "gelu"),
                                     ("gelu_fast", "gelu"), ("gelu_pytorch_tanh", "gelu"), ("relu", "relu"),
                                     ("tanh", "tanh"), ("linear", "linear")])
def test_activations_map_to_the_same_function(hf, ours):
    assert hf_config.bert_config_from_hf(testing.hf_config(hidden_act=hf), SOURCE).hidden_act == ours


def test_absent_keys_take_hf_defaults():
    config = hf_config.bert_config_from_hf({"vocab_size": 100, "hidden_size": 64, "num_attention_heads": 2}, SOURCE)
    assert (config.type_vocab_size, config.num_hidden_layers, config.intermediate_size, config.hidden_act) == (
        2, 12, 3072, "gelu_exact")


@pytest.mark.parametrize("key,value,expected", [
    ("model_type", "roberta", r'`model_type` = \'roberta\' is not supported; expected "bert"'),
    ("position_embedding_type", "relative_key", r'`position_embedding_type` = \'relative_key\' is not supported; '
                                                r'expected "absolute"'),
    ("hidden_act", "silu", r"`hidden_act` = 'silu' is not supported; expected one of gelu, gelu_fast, "),
    ("hidden_act", "quick_gelu", r"`hidden_act` = 'quick_gelu' is not supported"),
    ("layer_norm_eps", 1e-5, r"`layer_norm_eps` = 1e-05 is not supported; expected 1e-12"),
    ("is_decoder", True, r"`is_decoder` = True is not supported; expected false"),
    ("add_cross_attention", True, r"`add_cross_attention` = True is not supported"),
    ("embedding_size", 16, r"`embedding_size` = 16 is not supported; expected hidden_size"),
    ("hidden_size", 0, r"BertConfig: `hidden_size` = 0 must be a positive integer"),
])
def test_what_the_model_cannot_follow_is_refused_by_key(key, value, expected):
    with pytest.raises(ConversionError, match=r"^/m/config.json: " + expected):
        hf_config.bert_config_from_hf(testing.hf_config(**{key: value}), SOURCE)


def test_not_an_object_is_refused():
    with pytest.raises(ConversionError, match=r"/m/config.json must hold a JSON object"):
        hf_config.bert_config_from_hf([1], SOURCE)


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_exact", "relu"])
def test_our_config_written_for_hf_reads_back_equal(hidden_act):
    config = testing.CONFIG.replace(hidden_act=hidden_act, type_vocab_size=16)
    values = hf_config.hf_config_from_bert(config, "BertModel")
    assert values["architectures"] == ["BertModel"] and values["model_type"] == "bert"
    assert values["hidden_act"] == {"gelu": "gelu_new", "gelu_exact": "gelu", "relu": "relu"}[hidden_act]
    assert hf_config.bert_config_from_hf(values, SOURCE) == config


def test_a_head_size_hf_cannot_express_is_refused():
    with pytest.raises(ConversionError, match=r"BertConfig `head_size` = 12 cannot be expressed in a Hugging Face "
                                              r"BertConfig, whose head size is hidden_size / num_attention_heads = "
                                              r"32 / 4"):
        hf_config.hf_config_from_bert(testing.CONFIG.replace(head_size=12), "BertModel")
    # The head size HF derives anyway converts, and reads back as unset.
    values = hf_config.hf_config_from_bert(testing.CONFIG.replace(head_size=8), "BertModel")
    assert "head_size" not in values
    assert hf_config.bert_config_from_hf(values, SOURCE) == testing.CONFIG
