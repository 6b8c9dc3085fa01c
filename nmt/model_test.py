"""TransformerNmt against an independent NumPy forward; incremental decoding; beam search; names, groups, counts."""

import numpy as np
import pytest
import tensorflow as tf

from checkpoints import seeded_init
from modeling import original_variables
from nmt.config import NmtConfig
from nmt.model import TransformerNmt, build_nmt, initializers, kernel_shapes
from nmt.parameter_groups import PARAMETER_GROUPS, count_parameters
from nmt.testing import numpy_reference as nmt_numpy

VOCAB = 41
BOS, EOS = 2, 3


def _config(hidden=24, heads=4, head_size=None, norm_first=False, act="relu", encoder=2, decoder=2):
    return NmtConfig(vocab_size=VOCAB, hidden_size=hidden, num_encoder_layers=encoder, num_decoder_layers=decoder,
                     num_attention_heads=heads, head_size=head_size, intermediate_size=40, hidden_act=act,
                     norm_first=norm_first, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)


def _model_with(config, tensors):
    model = build_nmt(TransformerNmt(config))
    for name, entry in original_variables(model).items():
        entry.variable.assign(entry.from_original(tensors[name]))
    return model


def _batch(seed=0):
    rng = np.random.RandomState(seed)
    source = rng.randint(4, VOCAB, size=(3, 7)).astype(np.int32)
    source[1, 4:] = 0  # padding
    source[2, 6:] = 0
    target = rng.randint(4, VOCAB, size=(3, 6)).astype(np.int32)
    target[:, 0] = BOS
    return source, target


@pytest.mark.parametrize("hidden, heads, head_size, norm_first, act", [
    (24, 4, None, False, "relu"),  # d_p = d/h, post-norm (the presets)
    (24, 4, 10, False, "gelu"),    # d_p != d/h
    (24, 5, 8, True, "relu"),      # h does not divide d; pre-norm with final LayerNorms
])
def test_logits_match_numpy_forward(hidden, heads, head_size, norm_first, act):
    config = _config(hidden, heads, head_size, norm_first, act)
    tensors = nmt_numpy.random_nmt_tensors(config, seed=3)
    model = _model_with(config, tensors)
    source, target = _batch()
    ours = model(dict(source_ids=source, target_input_ids=target), training=False)["logits"].numpy()
    expected = nmt_numpy.nmt_logits(config, tensors, source, target)
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("head_size, norm_first", [(None, False), (10, False), (7, True)])
def test_incremental_decoding_equals_full_sequence_decoding(head_size, norm_first):
    config = _config(head_size=head_size, norm_first=norm_first)
    model = _model_with(config, nmt_numpy.random_nmt_tensors(config, seed=5))
    source, target = _batch(1)
    full = model(dict(source_ids=source, target_input_ids=target), training=False)["logits"].numpy()
    memory, mask = model.encode(source, training=False)
    cache = model.initial_cache(memory, mask)
    for step in range(target.shape[1]):
        logits, cache = model.decode_step(tf.constant(target[:, step]), step, cache)
        np.testing.assert_allclose(logits.numpy(), full[:, step], rtol=1e-4, atol=1e-4)
    assert cache["layer_0"]["key"].shape == (3, target.shape[1], config.num_attention_heads,
                                             config.attention_head_size)


def _greedy(model, source, length):
    """Greedy decoding by full-sequence forwards (no cache): an independent decoder."""
    ids = np.full((len(source), 1), BOS, np.int32)
    for _ in range(length):
        logits = model(dict(source_ids=source, target_input_ids=ids), training=False)["logits"].numpy()
        ids = np.concatenate([ids, logits[:, -1].argmax(-1)[:, None].astype(np.int32)], axis=1)
    return ids


def test_beam_search_with_beam_one_is_greedy():
    config = _config(head_size=10)
    model = _model_with(config, nmt_numpy.random_nmt_tensors(config, seed=7))
    source, _ = _batch(2)
    ids, scores = model.translate(tf.constant(source), BOS, EOS, beam_size=1, max_decode_length=6)
    greedy = _greedy(model, source, 6)
    for row, expected in zip(ids.numpy(), greedy):
        stop = list(expected).index(EOS) + 1 if EOS in expected[1:] else len(expected)
        np.testing.assert_array_equal(row[:stop], expected[:stop])
    assert scores.shape == (3,)


def test_translations_keep_their_width_when_every_beam_ends_early():
    config = _config(head_size=10)
    tensors = nmt_numpy.random_nmt_tensors(config, seed=9)
    tensors["nmt/output/bias"][EOS] = 1e4  # every hypothesis ends at its first token
    model = _model_with(config, tensors)
    source, _ = _batch(3)
    ids, _ = model.translate(tf.constant(source), BOS, EOS, beam_size=2, max_decode_length=6)
    # Model Garden's search stops after one step; the ids are padded to bos + 6 tokens.
    np.testing.assert_array_equal(ids.numpy(), [[BOS, EOS, 0, 0, 0, 0, 0]] * 3)


def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy():
    config = _config(head_size=10)
    tensors = nmt_numpy.random_nmt_tensors(config, seed=9)
    tensors["nmt/output/bias"][EOS] = -1e4  # no sentence ends: every hypothesis is full-length
    model = _model_with(config, tensors)
    source, _ = _batch(3)

    def log_prob(ids):
        logits = model(dict(source_ids=source, target_input_ids=ids[:, :-1]), training=False)["logits"]
        logp = tf.nn.log_softmax(logits).numpy()
        return np.take_along_axis(logp, ids[:, 1:, None], -1)[..., 0].sum(-1)

    greedy, _ = model.translate(tf.constant(source), BOS, EOS, beam_size=1, alpha=0.0, max_decode_length=5)
    beam, _ = model.translate(tf.constant(source), BOS, EOS, beam_size=4, alpha=0.0, max_decode_length=5)
    # Both are full-length; the beam's total log-probability is no lower, and higher somewhere.
    beam_logp, greedy_logp = log_prob(beam.numpy()), log_prob(greedy.numpy())
    assert np.all(beam_logp >= greedy_logp - 1e-4)
    assert np.any(beam_logp > greedy_logp + 1e-3)


def test_checkpoint_names_groups_and_counts_agree_with_the_built_model():
    config = _config(heads=5, head_size=8, norm_first=True, decoder=3)
    model = build_nmt(TransformerNmt(config))
    names = original_variables(model)
    assert "nmt/decoder/layer_2/attention/cross/query/kernel" in names
    assert names["nmt/decoder/layer_2/attention/cross/query/kernel"].shape == (24, 40)
    assert names["nmt/encoder/layer_1/attention/output/dense/kernel"].shape == (40, 24)
    counts = count_parameters(config)
    by_group = {}
    for name, entry in names.items():
        group, stack, _ = PARAMETER_GROUPS.locate(name)
        size = int(np.prod(entry.shape))
        by_group[group] = by_group.get(group, 0) + size
        if stack:
            by_group["%s:%s" % (group, stack)] = by_group.get("%s:%s" % (group, stack), 0) + size
    assert counts["total"] == model.count_params() == sum(int(np.prod(e.shape)) for e in names.values())
    for key, value in by_group.items():
        assert counts[key] == value, key
    assert set(kernel_shapes(config)) == {n for n in names if n.endswith("kernel")}


def test_selectors_by_stack_and_layer():
    config = _config(decoder=3)
    names = list(original_variables(build_nmt(TransformerNmt(config))))
    pick = lambda text: PARAMETER_GROUPS.select(  # noqa: E731
        names, PARAMETER_GROUPS.parse_selectors(text, num_layers=config.num_layers), num_layers=config.num_layers)
    encoder_attention = pick("attention:encoder")
    assert encoder_attention and all(n.startswith("nmt/encoder/") and "/attention/" in n for n in encoder_attention)
    decoder_ffn = pick("ffn:decoder:0-1")
    assert {n.split("/")[2] for n in decoder_ffn} == {"layer_0", "layer_1"}
    assert all(n.startswith("nmt/decoder/") and "/attention/" not in n for n in decoder_ffn)
    assert set(pick("ffn:1")) == {n for n in names if "/layer_1/" in n and "/attention/" not in n}
    assert pick("embeddings") == ["nmt/embeddings/word_embeddings", "nmt/output/bias"]
    with pytest.raises(ValueError, match="unknown stack 'decodr'; expected one of encoder, decoder"):
        PARAMETER_GROUPS.parse_selectors("ffn:decodr")
    with pytest.raises(ValueError, match=r"'ffn:encoder:2' matches no variable .*layers 0-1"):
        PARAMETER_GROUPS.parse_selectors("ffn:encoder:2", num_layers=config.num_layers)
    report = PARAMETER_GROUPS.report({n: 1 for n in names}, set(decoder_ffn))
    assert report["layers"]["ffn:decoder:1"]["frozen"] == report["layers"]["ffn:decoder:1"]["parameters"] > 0


def test_glorot_initializers_follow_the_fans():
    config = NmtConfig(vocab_size=100, hidden_size=16, num_attention_heads=2, head_size=12, intermediate_size=64,
                       initializer="glorot")
    model = build_nmt(TransformerNmt(config))
    seeded_init.initialize(model, seed=4)
    names = original_variables(model)
    init = initializers(config)
    kind, stddev = init("nmt/decoder/layer_0/intermediate/dense/kernel")
    assert kind == "truncated_normal" and stddev == pytest.approx((2.0 / (16 + 64)) ** 0.5 / 0.8796, rel=1e-3)
    assert init("nmt/encoder/layer_0/attention/output/LayerNorm/gamma") == ("ones", None)
    assert init("nmt/output/bias") == ("zeros", None)
    value = names["nmt/decoder/layer_0/intermediate/dense/kernel"].variable.numpy()
    assert value.std() == pytest.approx((2.0 / 80) ** 0.5, rel=0.1)  # truncation brings it back to Glorot's
    embeddings = names["nmt/embeddings/word_embeddings"].variable.numpy()
    assert embeddings.std() == pytest.approx(16 ** -0.5, rel=0.1)


def test_the_toolkit_scheme_per_group_is_the_default():
    d, projection, inner = 64, 8 * 12, 256
    config = NmtConfig(vocab_size=3000, hidden_size=d, num_attention_heads=8, head_size=12, intermediate_size=inner,
                       num_encoder_layers=2, num_decoder_layers=1)
    assert config.initializer == "marian"
    model = build_nmt(TransformerNmt(config))
    seeded_init.initialize(model, seed=7)
    names = original_variables(model)

    def value(name):
        entry = names[name]
        return entry.to_original(entry.variable.numpy())

    # Embeddings: U(±sqrt(3/d)), stddev 1/sqrt(d); matrices Glorot uniform, stddev sqrt(2/(fan_in+fan_out)).
    expected = {"nmt/embeddings/word_embeddings": d ** -0.5,
                "nmt/encoder/layer_0/attention/self/query/kernel": (2 / (d + projection)) ** 0.5,
                "nmt/decoder/layer_0/attention/cross/value/kernel": (2 / (d + projection)) ** 0.5,
                "nmt/encoder/layer_1/attention/output/dense/kernel": (2 / (projection + d)) ** 0.5,
                "nmt/encoder/layer_0/intermediate/dense/kernel": (2 / (d + inner)) ** 0.5,
                "nmt/decoder/layer_0/output/dense/kernel": (2 / (inner + d)) ** 0.5}
    for name, std in expected.items():
        drawn = value(name)
        assert drawn.std() == pytest.approx(std, rel=0.05), name
        assert np.abs(drawn).max() <= std * 3 ** 0.5 * (1 + 1e-6), name  # uniform: bounded by sqrt(3) stddevs
    assert not value("nmt/encoder/layer_0/attention/self/query/bias").any()
    assert (value("nmt/encoder/layer_0/output/LayerNorm/gamma") == 1).all()
    assert not value("nmt/output/bias").any()
    # After the sqrt(d) multiplier a token's vector has entries of unit variance, as large as the sinusoids'.
    assert (value("nmt/embeddings/word_embeddings") * d ** 0.5).std() == pytest.approx(1.0, rel=0.05)


def test_config_round_trips_and_refuses_bad_values(tmp_path):
    config = _config(head_size=10)
    model = TransformerNmt.from_config(TransformerNmt(config).get_config())
    assert model.config == config
    assert NmtConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="did you mean head_size"):
        NmtConfig.from_dict({"head_sise": 32})
    with pytest.raises(ValueError, match="hidden_size 30 is not a multiple of num_attention_heads 8"):
        NmtConfig(hidden_size=30)
    with pytest.raises(ValueError, match="--model_config_file=.*missing.json does not exist"):
        NmtConfig.from_json_file(str(tmp_path / "missing.json"))
    with pytest.raises(ValueError, match="`initializer` = 'xavier'"):
        NmtConfig(initializer="xavier")
    query = "nmt/encoder/layer_0/attention/self/query/kernel"
    assert initializers(NmtConfig())(query) == ("uniform", pytest.approx((6.0 / (512 + 512)) ** 0.5))
    assert initializers(NmtConfig(initializer="bert"))(query) == ("truncated_normal", 0.02)


@pytest.mark.parametrize("norm_first", [False, True])
def test_bfloat16_mixed_precision_trains_and_translates(norm_first):
    import tf_keras  # pylint: disable=import-outside-toplevel
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        config = _config(head_size=10, norm_first=norm_first)
        model = build_nmt(TransformerNmt(config))
        source, target = _batch(4)
        with tf.GradientTape() as tape:
            logits = model(dict(source_ids=source, target_input_ids=target), training=True)["logits"]
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logits))
        grads = tape.gradient(loss, model.trainable_variables)
        assert logits.dtype == tf.float32 and all(g is not None for g in grads)
        ids, _ = model.translate(tf.constant(source), BOS, EOS, beam_size=2, max_decode_length=4)
        assert ids.shape == (3, 5)
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
