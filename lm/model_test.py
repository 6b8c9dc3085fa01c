"""TransformerLm against an independent NumPy forward; causal masking; names, groups and counts."""

import json

import numpy as np
import pytest
import tensorflow as tf

from checkpoints import seeded_init
from freezing.selectors import ParameterGroups
from lm.config import LmConfig
from lm.model import TransformerLm, build_lm
from lm.parameter_groups import PARAMETER_GROUPS, count_parameters
from lm.testing import numpy_reference as lm_numpy
from modeling import original_variables

VOCAB = 37
SEQ = 9


def _config(hidden=24, heads=4, head_size=None, tie=True, act="relu", layers=2):
    return LmConfig(vocab_size=VOCAB, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                    head_size=head_size, intermediate_size=40, hidden_act=act, max_position_embeddings=16,
                    tie_embeddings=tie)


def _model_with(config, tensors):
    model = build_lm(TransformerLm(config))
    for name, entry in original_variables(model).items():
        entry.variable.assign(entry.from_original(tensors[name]))
    return model


@pytest.mark.parametrize("hidden, heads, head_size, tie, act", [
    (24, 4, None, True, "relu"),   # d_p = d/h, the standard rule
    (24, 4, 10, True, "gelu"),     # d_p != d/h
    (24, 5, 8, False, "relu"),     # h does not divide d; untied output
])
def test_logits_match_numpy_forward(hidden, heads, head_size, tie, act):
    config = _config(hidden, heads, head_size, tie, act)
    tensors = lm_numpy.random_lm_tensors(config, seed=3)
    model = _model_with(config, tensors)
    rng = np.random.RandomState(0)
    ids = rng.randint(0, VOCAB, size=(3, SEQ)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[1, 5:] = 0
    ours = model(dict(input_ids=ids, input_mask=mask), training=False)["logits"].numpy()
    expected = lm_numpy.lm_logits(config, tensors, ids, mask)
    real = mask.astype(bool)
    np.testing.assert_allclose(ours[real], expected[real], rtol=1e-4, atol=1e-4)


def test_a_tokens_logits_do_not_depend_on_later_tokens():
    config = _config(head_size=10)
    model = _model_with(config, lm_numpy.random_lm_tensors(config, seed=1))
    ids = np.random.RandomState(2).randint(0, VOCAB, size=(2, SEQ)).astype(np.int32)
    changed = ids.copy()
    changed[:, 5:] = (changed[:, 5:] + 7) % VOCAB
    a = model(dict(input_ids=ids), training=False)["logits"].numpy()
    b = model(dict(input_ids=changed), training=False)["logits"].numpy()
    np.testing.assert_array_equal(a[:, :5], b[:, :5])
    assert np.abs(a[:, 5:] - b[:, 5:]).max() > 1e-3  # later positions do see the change


@pytest.mark.parametrize("tie", [True, False])
def test_output_layer_gradient_is_one_product_not_one_per_sequence(tie):
    """No [batch, V, d] (or [batch, d, V]) tensor in the training gradient: the table is not broadcast."""
    config = _config(hidden=24, tie=tie)
    model = build_lm(TransformerLm(config))
    batch = 3
    ids = tf.constant(np.random.RandomState(4).randint(0, VOCAB, size=(batch, SEQ)).astype(np.int32))

    @tf.function
    def gradients(ids):
        with tf.GradientTape() as tape:
            logits = model(dict(input_ids=ids), training=True)["logits"]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ids, logits=logits))
        return tape.gradient(loss, model.trainable_variables)

    graph = gradients.get_concrete_function(ids).graph
    shapes = {tuple(t.shape.as_list()) for op in graph.get_operations() for t in op.outputs if t.shape.rank == 3}
    assert (batch, SEQ, VOCAB) in shapes  # the logits, found where they should be
    assert not shapes & {(batch, VOCAB, 24), (batch, 24, VOCAB)}, shapes
    # The gradients still reach the output layer.
    table = model.word_embeddings.embeddings if tie else model.output_kernel
    index = [v.ref() for v in model.trainable_variables].index(table.ref())
    assert float(tf.reduce_max(tf.abs(gradients(ids)[index]))) > 0


@pytest.mark.parametrize("head_size, tie", [(None, True), (10, True), (10, False)])
def test_parameter_count_matches_the_built_model(head_size, tie):
    config = _config(head_size=head_size, tie=tie)
    model = build_lm(TransformerLm(config))
    counts = count_parameters(config)
    assert counts["total"] == model.count_params()
    sizes = {name: int(np.prod(entry.shape)) for name, entry in original_variables(model).items()}
    report = PARAMETER_GROUPS.report(sizes, frozen=set())
    for group in ("embeddings", "attention", "ffn", "final_layer_norm"):
        assert report["groups"][group]["parameters"] == counts[group], group


def test_attention_grows_with_heads_at_fixed_head_size():
    small, large = (count_parameters(_config(hidden=256, heads=h, head_size=32)) for h in (8, 16))
    # 4*d*h*d_p + 3*h*d_p per layer: doubling h doubles the projections.
    assert large["attention_per_layer"] - small["attention_per_layer"] == 4 * 256 * 8 * 32 + 3 * 8 * 32


def test_checkpoint_names_and_groups():
    model = build_lm(TransformerLm(_config(tie=False)))
    names = list(original_variables(model))
    assert names[:2] == ["lm/embeddings/word_embeddings", "lm/embeddings/position_embeddings"]
    assert "lm/decoder/layer_1/attention/self/query/kernel" in names
    assert names[-2:] == ["lm/output/kernel", "lm/output/bias"]
    groups = {name: PARAMETER_GROUPS.group_of(name)[0] for name in names}
    assert groups["lm/output/bias"] == "embeddings"
    assert groups["lm/decoder/layer_0/output/LayerNorm/gamma"] == "ffn"
    assert groups["lm/decoder/LayerNorm/beta"] == "final_layer_norm"
    assert isinstance(PARAMETER_GROUPS, ParameterGroups)
    # Query kernels are stored [d, h*d_p], as BERT's.
    assert original_variables(model)["lm/decoder/layer_0/attention/self/query/kernel"].shape == (24, 24)


def test_seeded_initialisation_is_a_function_of_seed_and_name():
    config = _config(head_size=10)
    a, b = build_lm(TransformerLm(config)), build_lm(TransformerLm(config))
    seeded_init.initialize(a, 7)
    seeded_init.initialize(b, 7)
    for (name, x), y in zip(original_variables(a).items(), original_variables(b).values()):
        np.testing.assert_array_equal(x.variable.numpy(), y.variable.numpy(), err_msg=name)
    gamma = original_variables(a)["lm/decoder/LayerNorm/gamma"].variable.numpy()
    np.testing.assert_array_equal(gamma, np.ones_like(gamma))
    table = original_variables(a)["lm/embeddings/word_embeddings"].variable.numpy()
    assert 0.015 < table.std() < 0.02 and np.abs(table).max() <= 0.04 + 1e-6  # truncated at 2 stddev


@pytest.mark.parametrize("tie", [True, False])
def test_the_toolkit_scheme_per_group(tie):
    """"marian": tables U(±sqrt(3/d)) (stddev 1/sqrt(d)), matrices Glorot uniform, as freezing_lm's rows start."""
    d, heads, head_size, inner, vocab = 64, 4, 24, 256, 3000
    config = LmConfig(vocab_size=vocab, hidden_size=d, num_hidden_layers=2, num_attention_heads=heads,
                      head_size=head_size, intermediate_size=inner, max_position_embeddings=512,
                      tie_embeddings=tie, initializer="marian")
    model = build_lm(TransformerLm(config))
    seeded_init.initialize(model, 3)
    names = original_variables(model)

    def value(name):
        entry = names[name]
        return entry.to_original(entry.variable.numpy())

    projection = heads * head_size
    expected = {"lm/embeddings/word_embeddings": d ** -0.5, "lm/embeddings/position_embeddings": d ** -0.5,
                "lm/decoder/layer_0/attention/self/key/kernel": (2 / (d + projection)) ** 0.5,
                "lm/decoder/layer_1/attention/output/dense/kernel": (2 / (projection + d)) ** 0.5,
                "lm/decoder/layer_0/intermediate/dense/kernel": (2 / (d + inner)) ** 0.5,
                "lm/decoder/layer_1/output/dense/kernel": (2 / (inner + d)) ** 0.5}
    if not tie:
        expected["lm/output/kernel"] = (2 / (d + vocab)) ** 0.5
    for name, std in expected.items():
        drawn = value(name)
        assert drawn.std() == pytest.approx(std, rel=0.05), name
        assert np.abs(drawn).max() <= std * 3 ** 0.5 * (1 + 1e-6), name
    assert not value("lm/decoder/layer_0/intermediate/dense/bias").any() and not value("lm/output/bias").any()
    assert (value("lm/decoder/layer_0/attention/output/LayerNorm/gamma") == 1).all()
    with pytest.raises(ValueError, match="`initializer` = 'glorot'; expected one of bert, marian"):
        LmConfig(initializer="glorot")


def test_get_config_round_trip():
    model = TransformerLm(_config(head_size=10, tie=False), name="lm")
    clone = TransformerLm.from_config(json.loads(json.dumps(model.get_config())))
    assert clone.config == model.config and clone.name == "lm"


def test_bfloat16_logits_are_float32():
    from tf_keras import mixed_precision  # pylint: disable=import-outside-toplevel
    mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = build_lm(TransformerLm(_config()))
        logits = model(dict(input_ids=tf.zeros([1, 4], tf.int32)))["logits"]
    finally:
        mixed_precision.set_global_policy("float32")
    assert logits.dtype == tf.float32


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ValueError, match=r"unknown key `head_sise`.*did you mean head_size"):
        LmConfig.from_dict({"head_sise": 32})
    with pytest.raises(ValueError, match="num_attention_heads 5"):
        LmConfig(hidden_size=24, num_attention_heads=5, head_size=None)
    with pytest.raises(ValueError, match="`hidden_dropout_prob` = 1.5"):
        LmConfig(hidden_dropout_prob=1.5)
    path = tmp_path / "lm.json"
    path.write_text("{oops")
    with pytest.raises(ValueError, match=r"lm.json is not valid JSON \(line 1"):
        LmConfig.from_json_file(str(path))
    path.write_bytes(b"\xff{}")
    with pytest.raises(ValueError, match=r"^LmConfig \(--lm_config_file\): \S+/lm.json is not UTF-8 text \(byte 1\)"):
        LmConfig.from_json_file(str(path))
    with pytest.raises(ValueError, match="--lm_config_file=.*missing.json does not exist"):
        LmConfig.from_json_file(str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="vocab_size` is needed"):
        TransformerLm(LmConfig())
