"""Tests for metrics.py against hand-computed values."""

import math

import numpy as np
import pytest

from classifier_data import metrics

# Confusion matrix of the positive class 1:
#   predictions 1 1 1 0 0 0 1 0
#   labels      1 1 0 0 0 1 1 0
#   tp = 3 (positions 0, 1, 6), fp = 1 (2), fn = 1 (5), tn = 3 (3, 4, 7).
#   accuracy = 6 / 8 = 0.75
#   F1 = 2 tp / (2 tp + fp + fn) = 6 / 8 = 0.75
#   MCC = (3*3 - 1*1) / sqrt(4 * 4 * 4 * 4) = 8 / 16 = 0.5
PREDICTIONS = [1, 1, 1, 0, 0, 0, 1, 0]
LABELS = [1, 1, 0, 0, 0, 1, 1, 0]

# An asymmetric one: tp = 2, fp = 1, fn = 3, tn = 4.
#   F1 = 4 / (4 + 1 + 3) = 0.5
#   MCC = (2*4 - 1*3) / sqrt((2+1) (2+3) (4+1) (4+3)) = 5 / sqrt(525)
ASYM_PREDICTIONS = [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
ASYM_LABELS = [1, 1, 0, 1, 1, 1, 0, 0, 0, 0]


def test_accuracy_f1_mcc():
    assert metrics.accuracy(PREDICTIONS, LABELS) == 0.75
    assert metrics.f1_score(PREDICTIONS, LABELS) == 0.75
    assert metrics.matthews_corrcoef(PREDICTIONS, LABELS) == 0.5
    assert metrics.f1_score(ASYM_PREDICTIONS, ASYM_LABELS) == 0.5
    assert metrics.matthews_corrcoef(ASYM_PREDICTIONS, ASYM_LABELS) == pytest.approx(
        5 / math.sqrt(525))


def test_f1_is_of_the_positive_class():
    # Swapping the roles of 0 and 1: tp = 3 (positions 3, 4, 7), fp = 1, fn = 1.
    assert metrics.f1_score(PREDICTIONS, LABELS, positive=0) == 0.75
    # tp = 4 (positions 6-9), fp = 3 (3-5), fn = 1 (2): F1 = 8 / 12.
    assert metrics.f1_score(ASYM_PREDICTIONS, ASYM_LABELS, positive=0) == pytest.approx(2 / 3)


def test_degenerate_cases_are_zero():
    # Every prediction is 1: tn + fn = 0, so MCC is 0/0, reported as 0.0.
    assert metrics.matthews_corrcoef([1, 1, 1], [1, 0, 1]) == 0.0
    # No positive predicted or gold: F1 is 0/0, reported as 0.0.
    assert metrics.f1_score([0, 0], [0, 0]) == 0.0


def test_mcc_of_large_counts_does_not_overflow():
    # Each margin is 1e5: their product, 1e20, overflows int64.
    predictions = np.array([1] * 100_000 + [0] * 100_000)
    labels = predictions.copy()
    assert metrics.matthews_corrcoef(predictions, labels) == 1.0


def test_pearson_and_spearman_by_hand():
    # x = 1 2 3, y = 1 2 4: deviations (-1, 0, 1) and (-4/3, -1/3, 5/3);
    # covariance sum 3, sums of squares 2 and 42/9: r = 3 / sqrt(84/9) = 9 / sqrt(84).
    # The ranks agree exactly, so Spearman is 1.
    pearson, spearman = metrics.pearson_and_spearman([1, 2, 3], [1, 2, 4])
    assert pearson == pytest.approx(9 / math.sqrt(84))
    assert spearman == pytest.approx(1.0)
    # Ranks 1 2 3 4 vs 1 3 2 4: d^2 sums to 2, rho = 1 - 6*2 / (4 * 15) = 0.8.
    assert metrics.pearson_and_spearman([1, 2, 3, 4], [1, 3, 2, 4])[1] == pytest.approx(0.8)


def test_constant_predictions_give_nan_correlation():
    pearson, spearman = metrics.pearson_and_spearman([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    assert math.isnan(pearson) and math.isnan(spearman)


def test_shape_errors():
    with pytest.raises(ValueError, match="equal length"):
        metrics.accuracy([1, 0], [1])
    with pytest.raises(ValueError, match="No examples"):
        metrics.accuracy([], [])


def test_task_metrics_keys_per_task():
    assert metrics.task_metrics("CoLA", PREDICTIONS, LABELS) == {
        "eval_accuracy": 0.75, "eval_mcc": 0.5}
    assert metrics.task_metrics("mrpc", PREDICTIONS, LABELS) == {
        "eval_accuracy": 0.75, "eval_f1": 0.75}
    assert metrics.task_metrics("qqp", ASYM_PREDICTIONS, ASYM_LABELS) == {
        "eval_accuracy": 0.6, "eval_f1": 0.5}
    for task in ("mnli", "sst-2", "qnli", "rte", "wnli", "xnli"):
        assert metrics.task_metrics(task, PREDICTIONS, LABELS) == {"eval_accuracy": 0.75}


def test_task_metrics_takes_scores():
    # MNLI scores [n, 3]: the argmax is 2, 0, 1, 1.
    scores = [[0.1, 0.2, 0.7], [0.8, 0.1, 0.1], [0.2, 0.5, 0.3], [0.3, 0.4, 0.3]]
    labels = [2, 0, 0, 0]
    assert metrics.task_metrics("mnli", scores, labels) == {"eval_accuracy": 0.5}


def test_task_metrics_stsb():
    result = metrics.task_metrics("sts-b", [[1.0], [2.0], [3.0]], [1.0, 2.0, 4.0])
    assert sorted(result) == ["eval_corr", "eval_pearson", "eval_spearman"]
    assert result["eval_pearson"] == pytest.approx(9 / math.sqrt(84))
    assert result["eval_spearman"] == pytest.approx(1.0)
    assert result["eval_corr"] == pytest.approx((9 / math.sqrt(84) + 1) / 2)


def test_task_metrics_unknown_task():
    with pytest.raises(ValueError, match="Task not found: squad; known tasks: cola"):
        metrics.task_metrics("squad", [1], [1])
