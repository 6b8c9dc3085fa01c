"""BertConfig: original keys and defaults, JSON round trip, validation."""

import json
from unittest import mock

import pytest
from absl import logging

from modeling.bert_config import BertConfig

RELEASED_BASE = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}


def test_original_defaults():
    config = BertConfig(vocab_size=100)
    assert config.to_dict() == {
        "vocab_size": 100,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 512,
        "type_vocab_size": 16,
        "initializer_range": 0.02,
        "head_size": None,
    }
    assert config.attention_head_size == 64


def test_released_config_and_json_round_trip(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(RELEASED_BASE))
    config = BertConfig.from_json_file(str(path))
    assert config.head_size is None and config.attention_head_size == 64
    text = config.to_json_string()
    # Sorted keys, indent 2, as the original writes.
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert text.splitlines()[1] == '  "attention_probs_dropout_prob": 0.1,'
    out = tmp_path / "out.json"
    config.to_json_file(str(out))
    assert BertConfig.from_json_file(str(out)) == config


# The extra keys of the released multilingual BERT-Base config.
RELEASED_MULTILINGUAL_EXTRAS = {
    "directionality": "bidi",
    "pooler_fc_size": 768,
    "pooler_num_attention_heads": 12,
    "pooler_num_fc_layers": 3,
    "pooler_size_per_head": 128,
    "pooler_type": "first_token_transform",
}


def test_unknown_keys_are_kept_and_named_in_a_warning(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(dict(RELEASED_BASE, **RELEASED_MULTILINGUAL_EXTRAS)))
    with mock.patch.object(logging, "warning") as warning:
        config = BertConfig.from_json_file(str(path))
    assert config.directionality == "bidi"
    assert json.loads(config.to_json_string())["pooler_type"] == "first_token_transform"
    (message, *args), _ = warning.call_args
    assert message % tuple(args) == (
        "BertConfig: %s has keys the model does not use: directionality, pooler_fc_size, "
        "pooler_num_attention_heads, pooler_num_fc_layers, pooler_size_per_head, pooler_type "
        "(kept, and written back)." % path)


def test_a_released_config_loads_without_a_warning():
    with mock.patch.object(logging, "warning") as warning:
        BertConfig.from_dict(RELEASED_BASE)
        BertConfig.from_dict(RELEASED_BASE).replace(head_size=32)
    warning.assert_not_called()


@pytest.mark.parametrize("typo, meant", [
    ("head_sise", "head_size"),
    ("intermediate_sise", "intermediate_size"),
    ("hiden_size", "hidden_size"),
    ("num_attention_head", "num_attention_heads"),
    ("Hidden_Act", "hidden_act"),
])
def test_a_key_two_edits_from_a_known_one_is_an_error(tmp_path, typo, meant):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(dict(RELEASED_BASE, **{typo: 32})))
    with pytest.raises(ValueError) as error:
        BertConfig.from_json_file(str(path))
    assert str(error.value) == "BertConfig: unknown key `%s` in %s (did you mean %s?)." % (typo, path, meant)


def test_replace_refuses_unknown_keys():
    with pytest.raises(ValueError, match="cannot replace unknown keys head_sise"):
        BertConfig.from_dict(RELEASED_BASE).replace(head_sise=32)


def test_head_size_set_needs_no_divisibility():
    config = BertConfig.from_dict(dict(RELEASED_BASE, hidden_size=64, num_attention_heads=3, head_size=24))
    assert config.attention_head_size == 24
    assert json.loads(config.to_json_string())["head_size"] == 24
    assert BertConfig.from_dict(json.loads(config.to_json_string())) == config


def test_replace_validates():
    config = BertConfig(vocab_size=10, hidden_size=64, num_attention_heads=4)
    assert config.replace(head_size=128).attention_head_size == 128
    with pytest.raises(ValueError, match="`head_size` = 0"):
        config.replace(head_size=0)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"hidden_size": 0}, "`hidden_size` = 0 must be a positive integer"),
        ({"num_hidden_layers": -1}, "`num_hidden_layers` = -1 must be a positive integer"),
        ({"num_attention_heads": 2.5}, "`num_attention_heads` = 2.5 must be a positive integer"),
        ({"intermediate_size": 0}, "`intermediate_size` = 0"),
        ({"vocab_size": 0}, "`vocab_size` = 0"),
        ({"max_position_embeddings": 0}, "`max_position_embeddings` = 0"),
        ({"type_vocab_size": -2}, "`type_vocab_size` = -2"),
        ({"hidden_act": "swish"}, "`hidden_act` = 'swish' is not supported; expected one of gelu, gelu_exact"),
        ({"hidden_dropout_prob": 1.0}, r"`hidden_dropout_prob` = 1.0 must be a probability in \[0, 1\)"),
        ({"attention_probs_dropout_prob": -0.1}, "`attention_probs_dropout_prob` = -0.1"),
        ({"initializer_range": 0}, "`initializer_range` = 0 must be a positive number"),
        ({"head_size": 0}, "`head_size` = 0 must be a positive integer"),
        ({"head_size": -64}, "`head_size` = -64"),
        ({"head_size": "64"}, "`head_size` = '64'"),
        (
            {"hidden_size": 100, "num_attention_heads": 12},
            r"The hidden size \(100\) is not a multiple of the number of attention heads \(12\)",
        ),
    ],
)
def test_validation_errors_name_key_and_value(overrides, message):
    with pytest.raises(ValueError, match=message):
        BertConfig.from_dict(dict(RELEASED_BASE, **overrides))


def test_missing_vocab_size():
    values = dict(RELEASED_BASE)
    del values["vocab_size"]
    with pytest.raises(ValueError, match="`vocab_size` is required"):
        BertConfig.from_dict(values)
    with pytest.raises(ValueError, match="`vocab_size` is required"):
        BertConfig.from_dict(dict(RELEASED_BASE, vocab_size=None))


def test_file_errors(tmp_path):
    with pytest.raises(ValueError, match="config file not found: .*nope.json"):
        BertConfig.from_json_file(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"vocab_size": 3,\n}')
    with pytest.raises(ValueError, match=r"bad.json is not valid JSON \(line 2"):
        BertConfig.from_json_file(str(bad))
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"vocab_size": 3, "name": "caf\xe9"}')
    with pytest.raises(ValueError, match=r"^BertConfig \(--bert_config_file\): \S+/latin1.json is not UTF-8 text "
                                         r"\(byte 31\); a config file is JSON in UTF-8\.$"):
        BertConfig.from_json_file(str(latin1))
