"""Seeded initialisation: a function of (seed, name), with the model's initializers (BERT's here)."""

import numpy as np
import tensorflow as tf

import modeling
from checkpoints import seeded_init
from layers.initializers import bert_initializer_of

CONFIG = modeling.BertConfig(
    vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, head_size=12,
    intermediate_size=20, max_position_embeddings=8, type_vocab_size=2, initializer_range=0.05,
)


def _values(model):
    return {n: e.to_original(e.variable.numpy()) for n, e in modeling.original_variables(model).items()}


def test_values_are_a_function_of_seed_name_shape_and_initializer():
    tf.random.set_seed(1)
    a = modeling.build_model(modeling.BertPretrainingModel(CONFIG))
    tf.random.set_seed(2)  # Keras' own initial values differ ...
    b = modeling.build_model(modeling.BertClassifierModel(CONFIG, num_labels=3))
    seeded_init.initialize(a, seed=7)
    seeded_init.initialize(b, seed=7)
    va, vb = _values(a), _values(b)
    # ... but shared names get identical values, whatever else the model holds.
    for name in vb:
        if name in va:
            np.testing.assert_array_equal(va[name], vb[name], err_msg=name)
    seeded_init.initialize(a, seed=8)
    assert not np.array_equal(_values(a)["bert/embeddings/word_embeddings"], va["bert/embeddings/word_embeddings"])


def test_initializers_follow_the_original():
    model = modeling.build_model(modeling.BertClassifierModel(CONFIG.replace(vocab_size=3000), num_labels=2))
    seeded_init.initialize(model, seed=3)
    values = _values(model)
    np.testing.assert_array_equal(values["bert/encoder/layer_0/output/LayerNorm/gamma"], 1.0)
    np.testing.assert_array_equal(values["bert/encoder/layer_0/output/LayerNorm/beta"], 0.0)
    np.testing.assert_array_equal(values["bert/pooler/dense/bias"], 0.0)
    table = values["bert/embeddings/word_embeddings"]
    assert np.abs(table).max() <= 2 * 0.05 and abs(table.std() - 0.88 * 0.05) < 0.002
    # The classifier's output weights use the original's fixed 0.02.
    assert np.abs(values["output_weights"]).max() <= 0.04
    assert bert_initializer_of("output_weights", 0.05) == ("truncated_normal", 0.02)
