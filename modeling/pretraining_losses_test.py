"""Pre-training losses and eval metrics against a NumPy transcription of the original.

The original (google-research/bert run_pretraining.py):
  masked LM loss  = sum(w * ce) / (sum(w) + 1e-5), w = masked_lm_weights
  next sentence   = mean(ce); total loss = masked LM + next sentence
  eval metric_fn  = tf.metrics.accuracy(ids, argmax, weights=w),
                    tf.metrics.mean(masked_lm_example_loss, weights=w),
                    tf.metrics.accuracy(nsp labels, argmax), tf.metrics.mean(nsp example loss)
                    and the Estimator's eval "loss" = tf.metrics.mean(total loss of each batch).
The streaming metrics accumulate over all eval batches, so each one is a
(weighted) mean over the union of the batches, not a mean of batch means.
"""

import numpy as np
import pytest
import tensorflow as tf

from modeling.pretraining_losses import PretrainingMetrics, pretraining_losses

METRIC_NAMES = ["loss", "masked_lm_accuracy", "masked_lm_loss",
                "next_sentence_accuracy", "next_sentence_loss"]


# ---------------------------------------------------------------- reference

def _np_cross_entropy(logits, labels):
    """-log softmax(logits)[label] per row, in float64."""
    logits = np.asarray(logits, np.float64).reshape(-1, np.shape(logits)[-1])
    labels = np.asarray(labels).reshape(-1)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1))
    return log_z - shifted[np.arange(len(labels)), labels]


def _np_losses(logits, ids, weights, nsp_logits, nsp_labels):
    ce = _np_cross_entropy(logits, ids)
    w = np.asarray(weights, np.float64).reshape(-1)
    mlm = (w * ce).sum() / (w.sum() + 1e-5)
    nsp_ce = _np_cross_entropy(nsp_logits, nsp_labels)
    nsp = nsp_ce.mean()
    return dict(loss=mlm + nsp, masked_lm_loss=mlm, next_sentence_loss=nsp,
                masked_lm_example_loss=ce, next_sentence_example_loss=nsp_ce)


def _np_metrics(batches):
    """The original's streaming eval metrics over a list of (outputs, batch) in NumPy."""
    correct, ce, w, nsp_correct, nsp_ce, batch_losses = [], [], [], [], [], []
    for outputs, batch in batches:
        logits = np.asarray(outputs["masked_lm_logits"], np.float64)
        nsp_logits = np.asarray(outputs["next_sentence_logits"], np.float64)
        ids = np.asarray(batch["masked_lm_ids"]).reshape(-1)
        nsp_labels = np.asarray(batch["next_sentence_labels"]).reshape(-1)
        correct.append(logits.reshape(-1, logits.shape[-1]).argmax(-1) == ids)
        ce.append(_np_cross_entropy(logits, ids))
        w.append(np.asarray(batch["masked_lm_weights"], np.float64).reshape(-1))
        nsp_correct.append(nsp_logits.argmax(-1) == nsp_labels)
        nsp_ce.append(_np_cross_entropy(nsp_logits, nsp_labels))
        batch_losses.append(_np_losses(logits, ids, w[-1], nsp_logits, nsp_labels)["loss"])
    correct, ce, w = np.concatenate(correct), np.concatenate(ce), np.concatenate(w)
    safe = lambda num, den: num / den if den else 0.0  # tf.metrics' _safe_div
    return dict(
        loss=np.mean(batch_losses),
        masked_lm_accuracy=safe((w * correct).sum(), w.sum()),
        masked_lm_loss=safe((w * ce).sum(), w.sum()),
        next_sentence_accuracy=np.concatenate(nsp_correct).mean(),
        next_sentence_loss=np.concatenate(nsp_ce).mean(),
    )


# ---------------------------------------------------------------- test data

def _make_batch(rng, batch_size, predictions=4, vocab=11, weights=None, hit_rate=0.5):
    """Random logits where about `hit_rate` of the argmaxes are right."""
    ids = rng.randint(0, vocab, size=(batch_size, predictions)).astype(np.int32)
    logits = rng.normal(size=(batch_size, predictions, vocab)).astype(np.float32)
    hits = rng.rand(batch_size, predictions) < hit_rate
    b, p = np.nonzero(hits)
    logits[b, p, ids[b, p]] += 4.0
    if weights is None:
        # As create_pretraining_data writes them: 1 for real predictions, then 0 padding.
        counts = rng.randint(1, predictions + 1, size=batch_size)
        weights = (np.arange(predictions)[None, :] < counts[:, None]).astype(np.float32)
    nsp_labels = rng.randint(0, 2, size=(batch_size, 1)).astype(np.int32)
    nsp_logits = rng.normal(size=(batch_size, 2)).astype(np.float32)
    nsp_hits = rng.rand(batch_size) < hit_rate
    nsp_logits[nsp_hits, nsp_labels[nsp_hits, 0]] += 3.0
    outputs = dict(masked_lm_logits=logits, next_sentence_logits=nsp_logits)
    batch = dict(masked_lm_ids=ids, masked_lm_weights=np.asarray(weights, np.float32),
                 next_sentence_labels=nsp_labels)
    return outputs, batch


def _tf(d):
    return {k: tf.constant(v) for k, v in d.items()}


def _np_args(outputs, batch):
    return (outputs["masked_lm_logits"], batch["masked_lm_ids"], batch["masked_lm_weights"],
            outputs["next_sentence_logits"], batch["next_sentence_labels"])


def _assert_losses_match(losses, expected, rtol=1e-5):
    assert set(losses) == set(expected)
    for name, value in expected.items():
        assert losses[name].dtype == tf.float32, name
        np.testing.assert_allclose(losses[name].numpy(), value, rtol=rtol, atol=1e-6, err_msg=name)


def _run_metrics(batches):
    metrics = PretrainingMetrics()
    for outputs, batch in batches:
        outputs, batch = _tf(outputs), _tf(batch)
        metrics.update(outputs, batch, pretraining_losses(outputs, batch))
    return metrics.result()


# ---------------------------------------------------------------- losses

def test_losses_match_original_definitions():
    rng = np.random.RandomState(0)
    outputs, batch = _make_batch(rng, batch_size=3, predictions=5, vocab=13)
    assert 0 < batch["masked_lm_weights"].sum() < batch["masked_lm_weights"].size  # has padding
    losses = pretraining_losses(_tf(outputs), _tf(batch))
    expected = _np_losses(*_np_args(outputs, batch))
    _assert_losses_match(losses, expected)
    assert losses["masked_lm_example_loss"].shape == [15]
    assert losses["next_sentence_example_loss"].shape == [3]
    for name in ("loss", "masked_lm_loss", "next_sentence_loss"):
        assert losses[name].shape == []
    # The masked LM loss is the weighted mean, not the plain mean of all predictions.
    plain_mean = expected["masked_lm_example_loss"].mean()
    assert abs(expected["masked_lm_loss"] - plain_mean) > 0.05
    # The 1e-5 in the denominator is there: with all weights 1 the loss is just below the mean.
    ones = dict(batch, masked_lm_weights=np.ones_like(batch["masked_lm_weights"]))
    ones_loss = pretraining_losses(_tf(outputs), _tf(ones))
    ce = expected["masked_lm_example_loss"]
    np.testing.assert_allclose(ones_loss["masked_lm_loss"].numpy(), ce.sum() / (15 + 1e-5), rtol=1e-6)


def test_denominator_epsilon_is_the_originals():
    # With sum(w) = 1e-4 the 1e-5 is a tenth of the denominator.
    rng = np.random.RandomState(11)
    weights = np.zeros((2, 4), np.float32)
    weights[1, 2] = 1e-4
    outputs, batch = _make_batch(rng, batch_size=2, weights=weights)
    losses = pretraining_losses(_tf(outputs), _tf(batch))
    ce = _np_cross_entropy(outputs["masked_lm_logits"], batch["masked_lm_ids"])[6]
    np.testing.assert_allclose(losses["masked_lm_loss"].numpy(), ce / 1.1, rtol=1e-5)
    _assert_losses_match(losses, _np_losses(*_np_args(outputs, batch)))


def test_losses_in_tf_function_match():
    rng = np.random.RandomState(1)
    outputs, batch = _make_batch(rng, batch_size=4)
    losses = tf.function(pretraining_losses)(_tf(outputs), _tf(batch))
    _assert_losses_match(losses, _np_losses(*_np_args(outputs, batch)))


def test_padding_predictions_do_not_affect_the_masked_lm_loss():
    rng = np.random.RandomState(2)
    outputs, batch = _make_batch(rng, batch_size=4, predictions=6)
    padding = batch["masked_lm_weights"] == 0
    assert padding.any()
    changed = dict(outputs, masked_lm_logits=outputs["masked_lm_logits"].copy())
    changed["masked_lm_logits"][padding] = rng.normal(scale=10.0, size=changed["masked_lm_logits"][padding].shape)
    before = pretraining_losses(_tf(outputs), _tf(batch))
    after = pretraining_losses(_tf(changed), _tf(batch))
    assert float(after["masked_lm_loss"]) == pytest.approx(float(before["masked_lm_loss"]), rel=1e-6)
    # The per-prediction losses of padding positions are still computed (and do change).
    assert not np.allclose(after["masked_lm_example_loss"].numpy()[padding.reshape(-1)],
                           before["masked_lm_example_loss"].numpy()[padding.reshape(-1)])


def test_fractional_weights_weigh_each_prediction():
    rng = np.random.RandomState(3)
    weights = np.array([[1.0, 0.5, 0.25, 0.0], [2.0, 0.0, 0.0, 0.0]], np.float32)
    outputs, batch = _make_batch(rng, batch_size=2, weights=weights)
    losses = pretraining_losses(_tf(outputs), _tf(batch))
    _assert_losses_match(losses, _np_losses(*_np_args(outputs, batch)))


def test_bfloat16_logits_are_cast_to_float32():
    rng = np.random.RandomState(4)
    outputs, batch = _make_batch(rng, batch_size=3, predictions=4, vocab=9)
    # Multiples of 1/8 in [-8, 8] are exact in bfloat16, so the NumPy reference
    # on the same values is exact; only the arithmetic precision can differ.
    exact = {k: np.round(np.clip(v, -8, 8) * 8) / 8 for k, v in outputs.items()}
    bf16 = {k: tf.constant(v, tf.bfloat16) for k, v in exact.items()}
    np.testing.assert_array_equal(tf.cast(bf16["masked_lm_logits"], tf.float32).numpy(),
                                  exact["masked_lm_logits"])
    losses = pretraining_losses(bf16, _tf(batch))
    expected = _np_losses(*_np_args(exact, batch))
    # float32 arithmetic: ~1e-7 relative error; bfloat16 arithmetic would be ~1e-2.
    _assert_losses_match(losses, expected, rtol=1e-5)

    metrics = PretrainingMetrics()
    metrics.update(bf16, _tf(batch), losses)
    ref = _np_metrics([(exact, batch)])
    for name in METRIC_NAMES:
        assert metrics.result()[name] == pytest.approx(ref[name], rel=1e-5), name


def test_batch_with_all_zero_weights():
    rng = np.random.RandomState(5)
    outputs, batch = _make_batch(rng, batch_size=3, weights=np.zeros((3, 4), np.float32))
    losses = pretraining_losses(_tf(outputs), _tf(batch))
    expected = _np_losses(*_np_args(outputs, batch))
    assert float(losses["masked_lm_loss"]) == 0.0
    assert np.isfinite(losses["loss"].numpy())
    assert float(losses["loss"]) == pytest.approx(expected["next_sentence_loss"], rel=1e-6)
    _assert_losses_match(losses, expected)

    # Alone, its masked-LM metrics are 0 (tf.metrics' safe division), not NaN.
    result = _run_metrics([(outputs, batch)])
    assert result["masked_lm_accuracy"] == 0.0
    assert result["masked_lm_loss"] == 0.0
    ref = _np_metrics([(outputs, batch)])
    for name in METRIC_NAMES:
        assert result[name] == pytest.approx(ref[name], rel=1e-5, abs=1e-7), name


# ---------------------------------------------------------------- metrics

def test_metrics_of_one_batch():
    rng = np.random.RandomState(6)
    outputs, batch = _make_batch(rng, batch_size=8, predictions=5, hit_rate=0.3)
    # Padding predictions all right, so that an unweighted accuracy would be higher.
    logits, ids = outputs["masked_lm_logits"], batch["masked_lm_ids"]
    b, p = np.nonzero(batch["masked_lm_weights"] == 0)
    logits[b, p, ids[b, p]] = logits[b, p].max(-1) + 1.0
    result = _run_metrics([(outputs, batch)])
    assert sorted(result) == sorted(METRIC_NAMES)
    ref = _np_metrics([(outputs, batch)])
    for name in METRIC_NAMES:
        assert result[name] == pytest.approx(ref[name], rel=1e-5), name
    # The accuracy is weighted: the plain accuracy over all predictions differs here.
    plain = (logits.argmax(-1) == ids).mean()
    assert abs(plain - ref["masked_lm_accuracy"]) > 0.05
    assert 0.0 < result["masked_lm_accuracy"] < 1.0
    assert 0.0 < result["next_sentence_accuracy"] < 1.0


def test_wrong_predictions_at_padding_do_not_lower_accuracy():
    rng = np.random.RandomState(7)
    weights = np.array([[1, 1, 0, 0], [1, 0, 0, 0]], np.float32)
    outputs, batch = _make_batch(rng, batch_size=2, weights=weights)
    logits = outputs["masked_lm_logits"]
    ids = batch["masked_lm_ids"]
    # Weighted predictions all right, padding predictions all wrong.
    for (b, p), w in np.ndenumerate(weights):
        target = ids[b, p] if w else (ids[b, p] + 1) % logits.shape[-1]
        logits[b, p, target] = logits[b, p].max() + 1.0
    result = _run_metrics([(outputs, batch)])
    assert result["masked_lm_accuracy"] == 1.0


def test_metrics_accumulate_over_batches_as_the_union():
    rng = np.random.RandomState(8)
    batches = [
        _make_batch(rng, batch_size=2, predictions=4, hit_rate=0.9),
        _make_batch(rng, batch_size=5, predictions=4, hit_rate=0.2),
        _make_batch(rng, batch_size=3, predictions=4, hit_rate=0.5,
                    weights=np.array([[1, 0, 0, 0]] * 3, np.float32)),
    ]
    result = _run_metrics(batches)
    ref = _np_metrics(batches)
    for name in METRIC_NAMES:
        assert result[name] == pytest.approx(ref[name], rel=1e-5), name

    # The data tells the union apart from a mean of the per-batch metrics,
    # so the comparison above would catch per-batch averaging.
    per_batch = [_np_metrics([b]) for b in batches]
    for name in ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy",
                 "next_sentence_loss"):
        naive = np.mean([m[name] for m in per_batch])
        assert abs(naive - ref[name]) > 0.01, name
    # The eval loss, however, is the Estimator's mean of the per-batch total losses.
    assert ref["loss"] == pytest.approx(np.mean([m["loss"] for m in per_batch]))


def test_all_zero_weight_batch_adds_nothing_to_masked_lm_metrics():
    rng = np.random.RandomState(9)
    first = _make_batch(rng, batch_size=4)
    empty = _make_batch(rng, batch_size=3, weights=np.zeros((3, 4), np.float32))
    last = _make_batch(rng, batch_size=2)
    with_empty = _run_metrics([first, empty, last])
    without = _run_metrics([first, last])
    assert with_empty["masked_lm_accuracy"] == pytest.approx(without["masked_lm_accuracy"], rel=1e-12)
    assert with_empty["masked_lm_loss"] == pytest.approx(without["masked_lm_loss"], rel=1e-12)
    ref = _np_metrics([first, empty, last])
    for name in METRIC_NAMES:
        assert with_empty[name] == pytest.approx(ref[name], rel=1e-5), name
    # ... but its examples do count for next sentence and its loss for the mean loss.
    assert with_empty["next_sentence_loss"] != pytest.approx(without["next_sentence_loss"], rel=1e-4)
    assert with_empty["loss"] != pytest.approx(without["loss"], rel=1e-4)


def test_metrics_match_the_original_tf_v1_metric_ops():
    """Cross-check with the very ops the original's metric_fn used, in a v1 graph."""
    rng = np.random.RandomState(10)
    batches = [_make_batch(rng, batch_size=n, predictions=3, vocab=7) for n in (3, 6, 2)]
    ours = _run_metrics(batches)

    graph = tf.Graph()
    with graph.as_default():
        v1 = tf.compat.v1
        logits = v1.placeholder(tf.float32, [None, None, None])
        ids = v1.placeholder(tf.int32, [None, None])
        weights = v1.placeholder(tf.float32, [None, None])
        nsp_logits = v1.placeholder(tf.float32, [None, 2])
        nsp_labels = v1.placeholder(tf.int32, [None, 1])
        log_probs = tf.nn.log_softmax(tf.reshape(logits, [-1, tf.shape(logits)[-1]]))
        flat_ids = tf.reshape(ids, [-1])
        flat_w = tf.reshape(weights, [-1])
        example_loss = -tf.reduce_sum(log_probs * tf.one_hot(flat_ids, tf.shape(logits)[-1]), -1)
        mlm_loss = tf.reduce_sum(flat_w * example_loss) / (tf.reduce_sum(flat_w) + 1e-5)
        nsp_log_probs = tf.nn.log_softmax(nsp_logits)
        flat_labels = tf.reshape(nsp_labels, [-1])
        nsp_example_loss = -tf.reduce_sum(nsp_log_probs * tf.one_hot(flat_labels, 2), -1)
        total = mlm_loss + tf.reduce_mean(nsp_example_loss)
        metric_ops = dict(
            masked_lm_accuracy=v1.metrics.accuracy(
                flat_ids, tf.argmax(log_probs, -1, output_type=tf.int32), weights=flat_w),
            masked_lm_loss=v1.metrics.mean(example_loss, weights=flat_w),
            next_sentence_accuracy=v1.metrics.accuracy(
                flat_labels, tf.argmax(nsp_log_probs, -1, output_type=tf.int32)),
            next_sentence_loss=v1.metrics.mean(nsp_example_loss),
            loss=v1.metrics.mean(total),
        )
        with v1.Session(graph=graph) as session:
            session.run(v1.local_variables_initializer())
            for outputs, batch in batches:
                session.run([op for _, op in metric_ops.values()], {
                    logits: outputs["masked_lm_logits"], ids: batch["masked_lm_ids"],
                    weights: batch["masked_lm_weights"],
                    nsp_logits: outputs["next_sentence_logits"],
                    nsp_labels: batch["next_sentence_labels"]})
            original = session.run({k: value for k, (value, _) in metric_ops.items()})
    for name in METRIC_NAMES:
        assert ours[name] == pytest.approx(original[name], rel=1e-5), name


def test_no_batches_give_zero_metrics():
    assert PretrainingMetrics().result() == {name: 0.0 for name in METRIC_NAMES}
