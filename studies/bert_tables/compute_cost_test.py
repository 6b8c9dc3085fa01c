"""compute_cost against the products TensorFlow traces and the checkpoints it writes."""

import glob
import math
import os

import numpy as np
import pytest
import tensorflow as tf

import modeling
from checkpoints import tf1_checkpoint
from checkpoints import training_checkpoint
from studies.bert_tables import compute_cost as cost
from training import optimization

PRODUCT_OPS = ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum")
# Ops that would hide products inside a nested function body.
CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall", "While", "StatelessWhile", "If", "StatelessIf")

# Sizes chosen pairwise distinct (and h*p != d), so a swapped term shows.
TINY_CONFIGS = [
    modeling.BertConfig(vocab_size=50, hidden_size=30, num_hidden_layers=2, num_attention_heads=3, head_size=7,
                        intermediate_size=11, max_position_embeddings=16, type_vocab_size=3),
    modeling.BertConfig(vocab_size=41, hidden_size=24, num_hidden_layers=1, num_attention_heads=4,
                        intermediate_size=37, max_position_embeddings=12, type_vocab_size=2),
]
BATCH, SEQ, PREDICTIONS = 2, 9, 4


def _bert(layers, hidden, heads, inner):
    return modeling.BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers,
                               num_attention_heads=heads, intermediate_size=inner, type_vocab_size=2)


def _einsum_flops(equation, shapes):
    """2 x the product of the sizes of every index (an ellipsis counts its dimensions)."""
    sizes = {}
    for term, shape in zip(equation.split("->")[0].split(","), shapes):
        if "..." in term:
            before, after = term.split("...")
            hidden = len(shape) - len(before) - len(after)
            labels = list(before) + ["...%d" % i for i in range(hidden, 0, -1)] + list(after)
        else:
            labels = list(term)
        assert len(labels) == len(shape), (equation, shapes)
        for label, size in zip(labels, shape):
            sizes[label] = max(sizes.get(label, 1), size)  # broadcasting
    return 2 * math.prod(sizes.values())


def _product_flops(op):
    shapes = [tuple(t.shape.as_list()) for t in op.inputs]
    if op.type == "Einsum":
        return _einsum_flops(op.get_attr("equation").decode(), shapes)
    if op.type == "MatMul":
        a = shapes[0]
        contracted = a[0] if op.get_attr("transpose_a") else a[1]
        return 2 * op.outputs[0].shape.num_elements() * contracted
    if op.type in ("BatchMatMulV2", "BatchMatMulV3"):  # attention's per-head products (layers/attention.py)
        a = shapes[0]
        contracted = a[-2] if op.get_attr("adj_x") else a[-1]
        return 2 * op.outputs[0].shape.num_elements() * contracted
    raise AssertionError("unexpected product op %s (%s)" % (op.name, op.type))


def _component(name):
    """The forward_flops key a traced product belongs to, from its op name."""
    for part, key in (("token_type_embeddings", "embeddings"),
                      ("/query/", "attention_projections"), ("/key/", "attention_projections"),
                      ("/value/", "attention_projections"), ("/attention_output/", "attention_projections"),
                      ("/self_attention/MatMul", "attention_scores"),
                      ("/intermediate/", "ffn"), ("/output/", "ffn"),
                      ("/pooler/", "pooler"), ("/predictions/", "masked_lm"),
                      ("/seq_relationship/", "next_sentence")):
        if part in name:
            return key
    raise AssertionError("product %s belongs to no component" % name)


def _trace(config, step):
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    ints = lambda shape: tf.TensorSpec(shape, tf.int32)
    spec = dict(input_ids=ints([BATCH, SEQ]), input_mask=ints([BATCH, SEQ]), token_type_ids=ints([BATCH, SEQ]),
                masked_lm_positions=ints([BATCH, PREDICTIONS]))

    def forward(inputs):
        return model(inputs, training=False)

    def training_step(inputs):
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            loss = tf.reduce_sum(outputs["masked_lm_logits"]) + tf.reduce_sum(outputs["next_sentence_logits"])
        return tape.gradient(loss, model.trainable_variables)

    graph = tf.function(training_step if step else forward).get_concrete_function(spec).graph
    assert not [op.name for op in graph.get_operations() if op.type in CALL_OPS]
    assert all(op.type in ("MatMul", "BatchMatMulV2", "Einsum")
               for op in graph.get_operations() if op.type in PRODUCT_OPS)
    return graph


def _profiler_matmul_flops(graph):
    """TensorFlow's own FLOP statistics of the graph's MatMul ops (it has none for Einsum)."""
    options = (tf.compat.v1.profiler.ProfileOptionBuilder(tf.compat.v1.profiler.ProfileOptionBuilder.float_operation())
               .with_empty_output().build())
    profile = tf.compat.v1.profiler.profile(graph, cmd="op", options=options)
    return sum(node.float_ops for node in profile.children if node.name == "MatMul")


@pytest.mark.parametrize("config", TINY_CONFIGS)
def test_forward_flops_match_the_products_in_the_traced_graph(config):
    graph = _trace(config, step=False)
    traced = {}
    matmuls = 0
    for op in graph.get_operations():
        if op.type in PRODUCT_OPS:
            flops = _product_flops(op)
            key = _component(op.name)
            traced[key] = traced.get(key, 0) + flops
            matmuls += flops if op.type == "MatMul" else 0
    assert _profiler_matmul_flops(graph) == matmuls  # our count of MatMul agrees with TensorFlow's
    computed = cost.forward_flops(config, BATCH, SEQ, PREDICTIONS)
    for key in traced:
        assert computed[key] == traced[key], key
    assert sorted(traced) == sorted(k for k in computed if not k.endswith("_per_layer") and k not in ("encoder", "total"))
    assert computed["total"] == sum(traced.values())
    assert computed["encoder"] == computed["total"] - traced["masked_lm"] - traced["next_sentence"]
    layers = config.num_hidden_layers
    for key in ("attention_projections", "attention_scores", "ffn"):
        assert computed[key + "_per_layer"] * layers == traced[key]


@pytest.mark.parametrize("config", TINY_CONFIGS)
def test_step_flops_match_the_products_in_the_gradient_graph(config):
    graph = _trace(config, step=True)
    products = [op for op in graph.get_operations() if op.type in PRODUCT_OPS]
    assert _profiler_matmul_flops(graph) == sum(_product_flops(op) for op in products if op.type == "MatMul")
    assert cost.pretraining_step_flops(config, BATCH, SEQ, PREDICTIONS) == sum(_product_flops(op) for op in products)


def test_bert_sizes_are_about_two_flops_per_parameter_and_token():
    # A forward pass costs about 2 FLOPs per weight outside the embedding
    # tables per token; attention scores add 4*n*h*p per token and layer.
    for config in (_bert(12, 768, 12, 3072), _bert(24, 1024, 16, 4096)):
        counts = modeling.count_parameters(config)
        weights = counts["total"] - counts["embeddings"]
        forward = cost.forward_flops(config, 1, 128, 20)
        ratio = forward["encoder"] / (2 * weights * 128)
        assert 1.0 < ratio < 1.03, ratio
        # A step, about 6 per weight and token, plus the scores and the MLM
        # output layer over 30522 words (4% of BERT-base's forward pass).
        step = cost.pretraining_step_flops(config, 256, 128, 20)
        assert 1.0 < step / (6 * weights * 256 * 128) < 1.08
    # BERT-large: about 79 GFLOP per 128-token sequence; BERT-base about 22.
    assert 78e9 < cost.forward_flops(_bert(24, 1024, 16, 4096), 1, 128, 20)["encoder"] < 80e9
    assert 22e9 < cost.forward_flops(_bert(12, 768, 12, 3072), 1, 128, 20)["encoder"] < 23e9


def test_attention_scores_grow_with_the_square_of_seq_length_and_with_heads_at_fixed_head_size():
    config = _bert(24, 512, 8, 4096).replace(head_size=128)
    short = cost.forward_flops(config, 1, 128, 20)
    long = cost.forward_flops(config, 1, 512, 20)
    assert long["attention_scores"] == 16 * short["attention_scores"]
    assert long["ffn"] == 4 * short["ffn"] and long["masked_lm"] == short["masked_lm"]
    more_heads = cost.forward_flops(config.replace(num_attention_heads=32), 1, 128, 20)
    assert more_heads["attention_scores"] == 4 * short["attention_scores"]
    assert more_heads["attention_projections"] == 4 * short["attention_projections"]
    assert more_heads["ffn"] == short["ffn"]


def test_schedule_is_the_sum_over_stages():
    config = _bert(24, 1024, 16, 4096)
    stages = [cost.Stage(450000, 1024, 128, 20), (50000, 1024, 512, 80), [0, 1, 8, 1]]
    total = cost.schedule_flops(config, stages)
    assert total == (450000 * cost.pretraining_step_flops(config, 1024, 128, 20)
                     + 50000 * cost.pretraining_step_flops(config, 1024, 512, 80))
    # Python ints throughout: NumPy's int64 would overflow near 9.2e18.
    assert isinstance(total, int) and 1e20 < total < 1e21
    assert cost.schedule_flops(config, [cost.Stage(np.int64(450000), np.int64(1024), 128, 20)]) == (
        450000 * cost.pretraining_step_flops(config, 1024, 128, 20))


def _data_bytes(prefix):
    return sum(os.path.getsize(path) for path in glob.glob(prefix + ".data-*"))


def test_checkpoint_bytes_are_the_checkpoints_written(tmp_path):
    config = TINY_CONFIGS[0]
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    prefix = modeling.save_checkpoint(model, str(tmp_path / "model.ckpt"))
    assert cost.checkpoint_bytes(config) == _data_bytes(prefix)

    encoder = modeling.build_model(modeling.BertModel(config))
    prefix = modeling.save_checkpoint(encoder, str(tmp_path / "encoder.ckpt"))
    assert cost.checkpoint_bytes(config, include_pretraining_heads=False) == _data_bytes(prefix)

    for name in optimization.OPTIMIZERS:
        optimizer = optimization.create_optimizer(name, 1e-4, num_train_steps=10, num_warmup_steps=1)
        optimization.build_optimizer(optimizer, model.trainable_variables)
        tensors = training_checkpoint.training_tensors(model, optimizer, model.trainable_variables)
        prefix = tf1_checkpoint.write_tensors(str(tmp_path / name / "model.ckpt-0"), tensors)
        assert cost.checkpoint_bytes(config, with_adam_slots=True) == _data_bytes(prefix), name


def test_bert_large_checkpoint_sizes():
    config = _bert(24, 1024, 16, 4096)
    parameters = modeling.count_parameters(config, include_pretraining_heads=True)["total_with_pretraining_heads"]
    assert cost.checkpoint_bytes(config) == 4 * parameters
    assert cost.checkpoint_bytes(config, with_adam_slots=True) == 12 * parameters + 8
    assert cost.format_bytes(cost.checkpoint_bytes(config)) == "1.3 GB"
    assert cost.format_bytes(cost.checkpoint_bytes(config, with_adam_slots=True)) == "4.0 GB"


@pytest.mark.parametrize(
    "value, text",
    [(0, "0 FLOP"), (999, "999 FLOP"), (2.5, "2.5 FLOP"), (1000, "1.0 kFLOP"), (6.14e15, "6.1 PFLOP"),
     (999.94e9, "999.9 GFLOP"), (999.96e9, "1.0 TFLOP"), (1.9e20, "190.0 EFLOP"), (3e27, "3000.0 YFLOP")],
)
def test_format_flops(value, text):
    assert cost.format_flops(value) == text


def test_format_bytes():
    assert cost.format_bytes(512) == "512 B"
    assert cost.format_bytes(1_340_000_000) == "1.3 GB"
    assert cost.format_bytes(440_000_000) == "440.0 MB"


@pytest.mark.parametrize("value", [-1, math.nan, math.inf, "1e9", None, True])
def test_formatters_refuse_bad_values(value):
    with pytest.raises(ValueError, match=r"format_flops: `flops` must be a non-negative number"):
        cost.format_flops(value)
    with pytest.raises(ValueError, match=r"format_bytes: `num_bytes` must be a non-negative number"):
        cost.format_bytes(value)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda c: cost.forward_flops(c, 0, 128, 20), r"forward_flops: `batch_size` must be a positive integer, got 0"),
        (lambda c: cost.forward_flops(c, 8, 128.0, 20), r"`seq_length` must be a positive integer, got 128.0"),
        (lambda c: cost.forward_flops(c, 8, 128, True), r"`max_predictions_per_seq` must be a positive integer"),
        (lambda c: cost.forward_flops(c, 8, 513, 20), r"`seq_length` = 513 is longer than the model's max_position_embeddings = 512"),
        (lambda c: cost.pretraining_step_flops(c, 8, 16, 20), r"pretraining_step_flops: `max_predictions_per_seq` = 20 must be at most seq_length = 16"),
        (lambda c: cost.forward_flops(c.to_dict(), 8, 128, 20), r"`config` must be a BertConfig, got dict"),
        (lambda c: cost.checkpoint_bytes(None), r"checkpoint_bytes: `config` must be a BertConfig"),
        (lambda c: cost.schedule_flops(c, []), r"`stages` must be a non-empty sequence"),
        (lambda c: cost.schedule_flops(c, cost.Stage(1, 8, 128, 20)), r"`stages\[0\]` must be Stage"),
        (lambda c: cost.schedule_flops(c, [(1, 8, 128)]), r"`stages\[0\]` must be Stage"),
        (lambda c: cost.schedule_flops(c, [(1, 8, 128, 20), (-5, 8, 128, 20)]), r"`stages\[1\].steps` must be a non-negative integer, got -5"),
        (lambda c: cost.schedule_flops(c, [(1, 8, 600, 20)]), r"schedule_flops \(stages\[0\]\): `seq_length` = 600 is longer"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call(_bert(2, 64, 4, 256))
