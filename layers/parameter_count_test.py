"""count_parameters against built models and against the papers' counts; the shared formulas against Keras."""

import numpy as np
import pytest
import tf_keras

import modeling
from layers import parameter_count
from modeling.parameter_groups import count_parameters


def _paper_config(hidden, heads, head_size, intermediate, layers=24):
    # The original BERT layout the paper used: 24 layers, the uncased 30522-token vocabulary.
    return modeling.BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=512,
        type_vocab_size=2,
        head_size=head_size,
    )


@pytest.mark.parametrize(
    "config",
    [
        modeling.BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=20),
        modeling.BertConfig(vocab_size=50, hidden_size=30, num_hidden_layers=3, num_attention_heads=7,
                            head_size=9, intermediate_size=11, type_vocab_size=3, max_position_embeddings=9),
    ],
)
def test_counts_equal_built_model_variables(config):
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    sizes = {name: int(np.prod(entry.shape)) for name, entry in modeling.original_variables(model).items()}
    counts = count_parameters(config, include_pretraining_heads=True)

    def total(predicate):
        return sum(size for name, size in sizes.items() if predicate(name))

    assert counts["embeddings"] == total(lambda n: n.startswith("bert/embeddings/"))
    assert counts["attention"] == total(lambda n: "/attention/" in n)
    assert counts["ffn"] == total(lambda n: "/intermediate/" in n or "/output/" in n and "/attention/" not in n)
    assert counts["pooler"] == total(lambda n: n.startswith("bert/pooler/"))
    assert counts["total"] == total(lambda n: n.startswith("bert/"))
    assert counts["total"] == modeling.build_model(modeling.BertModel(config)).count_params()
    assert counts["masked_lm"] == total(lambda n: n.startswith("cls/predictions/"))
    assert counts["next_sentence"] == total(lambda n: n.startswith("cls/seq_relationship/"))
    assert counts["total_with_pretraining_heads"] == sum(sizes.values()) == model.count_params()


# (hidden, heads, head_size, intermediate) -> parameters as the paper reports
# them, and recomputed to one decimal with the pre-training heads (MLM transform included).
PAPER_COUNTS = [
    # Table 1: BERT-large, standard head size.
    ((1024, 8, None, 4096), 336e6, 336.2e6),
    ((1024, 16, None, 4096), 336e6, 336.2e6),
    ((1024, 32, None, 4096), 336e6, 336.2e6),
    # Table 2A: d = 512, d_p = 128.
    ((512, 8, 128, 4096), 168e6, 167.7e6),
    ((512, 12, 128, 4096), 193e6, 192.9e6),
    ((512, 16, 128, 4096), 218e6, 218.1e6),
    ((512, 32, 128, 4096), 319e6, 318.9e6),
    # Table 2B: d = 512, h = 8.
    ((512, 8, 32, 4096), 130e6, 129.9e6),
    ((512, 8, 64, 4096), 142e6, 142.5e6),
    ((512, 8, 256, 4096), 218e6, 218.1e6),
    # Table 3: d = 768, d_p = 128.
    ((768, 8, 128, 3072), 214e6, 214.1e6),
    ((768, 12, 128, 3072), 252e6, 251.8e6),
    ((768, 16, 128, 3072), 290e6, 289.6e6),
    ((768, 20, 128, 3072), 327e6, 327.4e6),
]


@pytest.mark.parametrize("shape, paper, recomputed", PAPER_COUNTS)
def test_reproduces_paper_counts(shape, paper, recomputed):
    counts = count_parameters(_paper_config(*shape), include_pretraining_heads=True)
    assert abs(counts["total"] - paper) / paper < 0.005
    # The one-decimal recomputation counts the MLM transform too.
    with_transform = counts["total_with_pretraining_heads"]
    assert abs(with_transform - recomputed) < 0.06e6


def test_bert_base_count():
    # The well-known 109.48M of BERT-base uncased (encoder + pooler).
    config = _paper_config(768, 12, None, 3072, layers=12)
    assert count_parameters(config)["total"] == 109482240


def test_attention_grows_with_heads_only_when_head_size_is_fixed():
    standard = [count_parameters(_paper_config(1024, h, None, 4096))["attention"] for h in (8, 16, 32)]
    assert len(set(standard)) == 1
    fixed = [count_parameters(_paper_config(512, h, 128, 4096))["attention"] for h in (8, 16, 32)]
    assert fixed[0] < fixed[1] < fixed[2]


@pytest.mark.parametrize("d,heads,head_size", [(64, 4, 16), (64, 8, 32), (48, 3, 40)])
def test_the_shared_attention_formula_matches_keras_and_its_layer_norm(d, heads, head_size):
    """The per-sub-layer counts every family adds up, against Keras's own layers."""
    inputs = tf_keras.Input([5, d])
    attention = tf_keras.layers.MultiHeadAttention(heads, head_size, output_shape=d)
    attention(inputs, inputs)
    norm = tf_keras.layers.LayerNormalization()
    norm.build([None, d])
    assert parameter_count.attention(d, heads, head_size) == attention.count_params() + norm.count_params()
    first, second = tf_keras.layers.Dense(4 * d), tf_keras.layers.Dense(d)
    second(first(inputs))
    assert parameter_count.feed_forward(d, 4 * d) == first.count_params() + second.count_params() + norm.count_params()
