"""AdamWeightDecay and the schedule against a NumPy transcription of the original."""

import re

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import modeling
from checkpoints import training_checkpoint
from training import optimization


def _original_lr(step, lr, num_train_steps, num_warmup_steps):
    decayed = lr * (1.0 - min(step, num_train_steps) / num_train_steps)
    if num_warmup_steps and step < num_warmup_steps:
        return lr * step / num_warmup_steps
    return decayed


@pytest.mark.parametrize("warmup", [0, 3])
def test_schedule_is_original(warmup):
    schedule = optimization.learning_rate_schedule(1e-3, 10, warmup)
    for step in range(12):
        assert float(schedule(step)) == pytest.approx(_original_lr(step, 1e-3, 10, warmup), abs=1e-9)


@pytest.mark.parametrize("warmup, hidden", [(10, 256), (1, 64)])
def test_rsqrt_schedule_is_tensor2tensors(warmup, hidden):
    # constant * linear_warmup * rsqrt_decay * rsqrt_hidden_size, written out.
    schedule = optimization.create_optimizer("adamw", 0.1, 1000, warmup, "rsqrt", hidden)._learning_rate
    for step in (0, 1, 5, warmup, warmup + 1, 100, 999):
        expected = 0.1 * min(1.0, step / warmup) / np.sqrt(max(step, warmup)) / np.sqrt(hidden)
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-6, abs=1e-12), step
    assert float(schedule(warmup)) == pytest.approx(0.1 / np.sqrt(warmup * hidden))
    config = schedule.get_config()
    assert type(schedule).from_config(config).get_config() == config


@pytest.mark.parametrize("warmup", [1, 16])
def test_inverse_sqrt_schedule_peaks_at_the_learning_rate(warmup):
    # min(step / warmup, sqrt(warmup / step)) * learning_rate, written out (step 0 counts as 1).
    schedule = optimization.create_optimizer("adam", 3e-4, 1000, warmup, "inverse_sqrt")._learning_rate
    for step in (0, 1, 2, warmup, warmup + 1, 100, 999):
        s = max(step, 1)
        expected = 3e-4 * min(s / warmup, np.sqrt(warmup / s))
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-6), step
    assert float(schedule(warmup)) == pytest.approx(3e-4)
    config = schedule.get_config()
    assert type(schedule).from_config(config).get_config() == config


def test_adam_matches_a_numpy_transcription_with_bias_correction():
    rng = np.random.RandomState(2)
    init = {"w": rng.randn(3, 4).astype(np.float32), "b": rng.randn(4).astype(np.float32)}
    variables = {k: tf.Variable(v, name=k) for k, v in init.items()}
    steps = [{k: (rng.randn(*v.shape) * s).astype(np.float32) for k, v in init.items()} for s in (0.1, 3.0, 0.5)]
    optimizer = optimization.create_optimizer("adam", 1e-2, 10, 2, "inverse_sqrt", adam_beta_2=0.998)
    optimization.build_optimizer(optimizer, list(variables.values()))
    for grads in steps:
        optimizer.apply_gradients([(tf.constant(grads[k]), variables[k]) for k in init])
    beta1, beta2, eps = 0.9, 0.998, 1e-9
    for k in init:
        w, m, v = init[k].astype(np.float64), 0.0, 0.0
        for t, grads in enumerate(steps, 1):
            g = grads[k].astype(np.float64)
            m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
            lr = 1e-2 * min(max(t - 1, 1) / 2, np.sqrt(2 / max(t - 1, 1)))  # the schedule at step t - 1
            # Keras folds the bias correction into the learning rate, and epsilon outside it.
            w = w - lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m / (np.sqrt(v) + eps)
        np.testing.assert_allclose(variables[k].numpy(), w, rtol=1e-5, atol=1e-6, err_msg=k)
    assert sorted(training_checkpoint.optimizer_slots(optimizer, variables["w"])) == ["adam_m", "adam_v"]


def test_adam_s_fused_update_is_keras_adam_s_for_dense_and_sparse_gradients():
    rng = np.random.RandomState(3)
    init = {"w": rng.randn(5, 4).astype(np.float32), "table": rng.randn(6, 3).astype(np.float32)}
    ours = {k: tf.Variable(v, name=k) for k, v in init.items()}
    keras = {k: tf.Variable(v, name=k) for k, v in init.items()}
    optimizer = optimization.Adam(1e-2, beta_2=0.998)
    reference = tf_keras.optimizers.Adam(learning_rate=1e-2, beta_1=0.9, beta_2=0.998, epsilon=1e-9)
    optimizer.build(list(ours.values()))
    reference.build(list(keras.values()))

    @tf.function
    def step(optimizer, variables, dense, rows, values):
        optimizer.apply_gradients([(dense, variables["w"]),
                                   (tf.IndexedSlices(values, rows, tf.constant([6, 3])), variables["table"])])

    for scale in (0.1, 3.0, 0.5, 1.0):
        dense = tf.constant((rng.randn(5, 4) * scale).astype(np.float32))
        rows, values = tf.constant([0, 2, 2, 5]), tf.constant(rng.randn(4, 3).astype(np.float32))
        step(optimizer, ours, dense, rows, values)
        step(reference, keras, dense, rows, values)
    for k in init:
        # Float32 rounding apart (a few ulps of 1): each step moves a weight by up to 1e-2.
        np.testing.assert_allclose(ours[k].numpy(), keras[k].numpy(), rtol=0, atol=1e-6, err_msg=k)
        assert np.abs(ours[k].numpy() - init[k]).max() > 1e-3  # the variables moved
    for mine, theirs in zip(optimizer.variables(), reference.variables()):
        # The kernel takes 1 - beta_2 from float32(0.998), Keras from the Python float: 1.3e-5 apart, relatively.
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=3e-5, atol=1e-7, err_msg=mine.name)


def test_unknown_learning_rate_schedule():
    with pytest.raises(ValueError, match="--learning_rate_schedule=cosine is not supported"):
        optimization.create_optimizer("adamw", 1e-3, 10, 0, "cosine")


def _numpy_adamw(params, grads_per_step, decay_names, lr_fn):
    """The original AdamWeightDecayOptimizer.apply_gradients, step by step."""
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(x) for k, x in params.items()}
    params = {k: x.astype(np.float64) for k, x in params.items()}
    for step, grads in enumerate(grads_per_step):
        norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads.values()))
        scale = 1.0 / max(norm, 1.0)  # tf.clip_by_global_norm(grads, 1.0)
        lr = lr_fn(step)
        for k in params:
            g = grads[k] * scale
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            update = m[k] / (np.sqrt(v[k]) + 1e-6)
            if k in decay_names:
                update = update + 0.01 * params[k]
            params[k] = params[k] - lr * update
    return params


def test_adamw_matches_original_update():
    rng = np.random.RandomState(0)
    init = {
        "layer/dense/kernel": rng.randn(3, 4).astype(np.float32),
        "layer/dense/bias": rng.randn(4).astype(np.float32),
        "layer/LayerNorm/gamma": rng.randn(4).astype(np.float32),
        "attention_layer_norm/beta": rng.randn(4).astype(np.float32),
    }
    variables = {k: tf.Variable(v, name=k) for k, v in init.items()}
    # Large gradients in some steps so that clipping is exercised.
    steps = [{k: (rng.randn(*v.shape) * s).astype(np.float32) for k, v in init.items()} for s in (0.1, 3.0, 0.5, 5.0, 0.2)]
    optimizer = optimization.create_optimizer("adamw", 1e-2, num_train_steps=6, num_warmup_steps=2)
    for grads in steps:
        optimizer.apply_gradients([(tf.constant(grads[k]), variables[k]) for k in init])
    expected = _numpy_adamw(
        init, steps, {"layer/dense/kernel"}, lambda s: _original_lr(s, 1e-2, 6, 2)
    )
    for k in init:
        np.testing.assert_allclose(variables[k].numpy(), expected[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert int(optimizer.iterations) == 5
    slots = training_checkpoint.optimizer_slots(optimizer, variables["layer/dense/kernel"])
    assert sorted(slots) == ["adam_m", "adam_v"] and slots["adam_m"].shape == (3, 4)


def _original_decays(name):
    """The original's rule: no weight decay for LayerNorm and bias variables."""
    return not any(re.search(p, name) for p in ("LayerNorm", "layer_norm", "bias"))


@pytest.mark.parametrize("name", ["adamw", "lamb"])
@pytest.mark.parametrize("model_class", ["pretraining", "classifier", "squad"])
def test_weight_decay_exclusions_on_the_real_model(name, model_class):
    """With zero gradients only weight decay moves a variable: exactly the decayed ones move."""
    config = modeling.BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=12)
    model = modeling.build_model({
        "pretraining": lambda: modeling.BertPretrainingModel(config),
        "classifier": lambda: modeling.BertClassifierModel(config, 3),
        "squad": lambda: modeling.BertSquadModel(config),
    }[model_class]())
    entries = modeling.original_variables(model)
    for entry in entries.values():  # Nonzero everywhere, so that decay shows.
        entry.variable.assign(tf.fill(entry.variable.shape, 0.5))
    optimizer = optimization.create_optimizer(name, 0.1, num_train_steps=10, num_warmup_steps=0)
    variables = [entry.variable for entry in entries.values()]
    optimization.build_optimizer(optimizer, variables)
    optimizer.apply_gradients([(tf.zeros_like(v), v) for v in variables])
    moved = {n for n, e in entries.items() if not np.all(e.variable.numpy() == 0.5)}
    decayed = {n for n in entries if _original_decays(n)}
    assert moved == decayed
    assert "bert/encoder/layer_1/attention/self/query/kernel" in decayed
    assert "bert/encoder/layer_1/output/LayerNorm/gamma" not in decayed


def _numpy_lamb(params, grads_per_step, decay_names, lr_fn):
    """LAMB (You et al., 2019) as Model Garden implements it, with the original's clipping."""
    m = {k: np.zeros_like(v, np.float64) for k, v in params.items()}
    v = {k: np.zeros_like(x, np.float64) for k, x in params.items()}
    params = {k: x.astype(np.float64) for k, x in params.items()}
    for step, grads in enumerate(grads_per_step):
        norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads.values()))
        scale = 1.0 / max(norm, 1.0)
        for k in params:
            g = grads[k] * scale
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            update = (m[k] / (1 - 0.9 ** (step + 1))) / (np.sqrt(v[k] / (1 - 0.999 ** (step + 1))) + 1e-6)
            ratio = 1.0
            if k in decay_names:  # Layer adaptation has the same exclusions.
                update = update + 0.01 * params[k]
                w_norm, u_norm = np.linalg.norm(params[k]), np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            params[k] = params[k] - lr_fn(step) * ratio * update
    return params


def test_lamb_matches_a_numpy_transcription():
    rng = np.random.RandomState(1)
    init = {
        "layer/dense/kernel": rng.randn(3, 4).astype(np.float32),
        "layer/dense/bias": rng.randn(4).astype(np.float32),
        "layer/LayerNorm/gamma": rng.randn(4).astype(np.float32),
    }
    variables = {k: tf.Variable(v, name=k) for k, v in init.items()}
    steps = [{k: (rng.randn(*v.shape) * s).astype(np.float32) for k, v in init.items()} for s in (0.1, 3.0, 0.5, 5.0)]
    optimizer = optimization.create_optimizer("lamb", 1e-2, num_train_steps=6, num_warmup_steps=2)
    optimization.build_optimizer(optimizer, list(variables.values()))
    for grads in steps:
        optimizer.apply_gradients([(tf.constant(grads[k]), variables[k]) for k in init])
    expected = _numpy_lamb(init, steps, {"layer/dense/kernel"}, lambda s: _original_lr(s, 1e-2, 6, 2))
    for k in init:
        np.testing.assert_allclose(variables[k].numpy(), expected[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert optimization.current_learning_rate(optimizer) == pytest.approx(_original_lr(4, 1e-2, 6, 2))


@pytest.mark.parametrize("name", ["adamw", "lamb", "adam"])
def test_build_optimizer_creates_slots_before_the_first_step(name):
    """A resume assigns the slots before any step: they must exist (float16's wrapper too)."""
    variable = tf.Variable(np.ones((2, 2), np.float32), name="dense/kernel")
    for wrap in (False, True):
        optimizer = optimization.create_optimizer(name, 1e-3, 10, 0)
        if wrap:
            optimizer = tf_keras.mixed_precision.LossScaleOptimizer(optimizer)
        optimization.build_optimizer(optimizer, [variable])
        slots = training_checkpoint.optimizer_slots(optimizer, variable)
        assert sorted(slots) == ["adam_m", "adam_v"] and slots["adam_m"].shape == (2, 2)
        assert optimization.current_learning_rate(optimizer) == pytest.approx(1e-3)
def test_unknown_optimizer():
    with pytest.raises(ValueError, match="--optimizer=sgd is not supported; expected one of adamw, lamb, adam"):
        optimization.create_optimizer("sgd", 1e-3, 10, 0)
