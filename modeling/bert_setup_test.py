"""BERT's set-up: the effective config, --head_size applied and the length checked."""

import pytest

import modeling
from modeling import bert_setup
from modeling.pretraining import PretrainingOptions


def test_effective_config_applies_head_size_and_checks_the_length(tmp_path):
    config_file = tmp_path / "bert_config.json"
    modeling.BertConfig(vocab_size=10, hidden_size=8, num_attention_heads=2,
                        max_position_embeddings=16).to_json_file(str(config_file))
    options = PretrainingOptions(bert_config_file=str(config_file), input_file="x", output_dir="o",
                                 head_size=32, max_seq_length=16)
    assert bert_setup.effective_config(options).attention_head_size == 32
    with pytest.raises(ValueError, match=r"sequence length 17 .* up to sequence length 16"):
        bert_setup.effective_config(PretrainingOptions(bert_config_file=str(config_file), input_file="x",
                                                       output_dir="o", max_seq_length=17))
