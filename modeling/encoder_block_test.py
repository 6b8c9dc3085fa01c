"""transformer_block: the config's head size, widths and norm placement reach the Model Garden block."""

import pytest
import tensorflow as tf
import tf_keras

import modeling
from modeling.encoder_block import transformer_block
from modeling.lm_config import LmConfig


@pytest.mark.parametrize("config, norm_first", [
    (modeling.BertConfig(vocab_size=10, hidden_size=24, num_attention_heads=4, intermediate_size=40, head_size=10),
     False),
    (LmConfig(vocab_size=10, hidden_size=24, num_attention_heads=5, head_size=7, intermediate_size=40), True),
])
def test_block_takes_the_configs_shapes(config, norm_first):
    block = transformer_block(config, tf_keras.initializers.TruncatedNormal(stddev=0.02), norm_first, 1e-6, "layer_0")
    out = block(tf.zeros([2, 3, 24]))
    assert out.shape == (2, 3, 24)
    shapes = {w.name.split("/", 1)[1].split(":")[0]: tuple(w.shape) for w in block.weights}
    heads, size = config.num_attention_heads, config.attention_head_size
    assert shapes["self_attention/query/kernel"] == (24, heads, size)
    assert shapes["self_attention/attention_output/kernel"] == (heads, size, 24)
    assert shapes["intermediate/kernel"] == (24, 40)
    assert block.get_config()["norm_first"] is norm_first and block.get_config()["norm_epsilon"] == 1e-6
