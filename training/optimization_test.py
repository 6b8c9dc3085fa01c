"""AdamWeightDecay and the schedule against a NumPy transcription of the original."""

import numpy as np
import pytest
import tensorflow as tf

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
    slots = optimization.optimizer_slots(optimizer, variables["layer/dense/kernel"])
    assert sorted(slots) == ["adam_m", "adam_v"] and slots["adam_m"].shape == (3, 4)


def test_weight_decay_exclusions_follow_original_names():
    assert optimization.uses_weight_decay("bert/encoder/layer_0/attention/self/query/kernel")
    assert optimization.uses_weight_decay("bert/embeddings/word_embeddings")
    assert optimization.uses_weight_decay("cls/seq_relationship/output_weights")
    assert not optimization.uses_weight_decay("bert/encoder/layer_0/output/LayerNorm/gamma")
    assert not optimization.uses_weight_decay("cls/predictions/output_bias")
    assert not optimization.uses_weight_decay("bert_pretraining/bert/layer_0/self_attention_layer_norm/beta:0")


def test_lamb_builds_and_exposes_original_slots():
    variable = tf.Variable(np.ones((2, 2), np.float32), name="dense/kernel")
    optimizer = optimization.create_optimizer("lamb", 1e-3, 10, 0)
    optimizer.apply_gradients([(tf.ones((2, 2)), variable)])
    assert sorted(optimization.optimizer_slots(optimizer, variable)) == ["adam_m", "adam_v"]
    assert not np.allclose(variable.numpy(), 1.0)


def test_unknown_optimizer():
    with pytest.raises(ValueError, match="--optimizer=sgd is not supported; expected one of adamw, lamb"):
        optimization.create_optimizer("sgd", 1e-3, 10, 0)
