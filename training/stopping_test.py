"""should_stop on synthetic learning curves: flat and noisy stops, a slow rise with a spike does not."""

import random

import numpy as np
import pytest

from training import stopping


def _first_stop(scores, patience=5):
    """The evaluation (1-based) after which the run stops, or None."""
    for count in range(1, len(scores) + 1):
        if stopping.should_stop(scores[:count], patience):
            return count
    return None


def test_the_trend_is_numpy_s_least_squares_line():
    rng = random.Random(1)
    scores = [0.3 * x + rng.gauss(0, 1) for x in range(12)]
    slope, error = stopping.trend(scores)
    (fitted, _), covariance = np.polyfit(np.arange(12), scores, 1, cov="unscaled")
    residuals = np.asarray(scores) - np.polyval(np.polyfit(np.arange(12), scores, 1), np.arange(12))
    assert slope == pytest.approx(fitted)
    assert error == pytest.approx(np.sqrt(covariance[0, 0] * (residuals ** 2).sum() / 10))
    assert stopping.trend([1.0, 2.0]) == (1.0, float("inf"))


@pytest.mark.parametrize("seed", range(10))
def test_a_flat_noisy_curve_stops_once_patience_runs_out(seed):
    rng = random.Random(seed)
    scores = [30 + rng.gauss(0, 0.5) for _ in range(60)]
    stop = _first_stop(scores)
    assert stop is not None and stop <= 30
    # Never before the patience rule alone would stop it.
    assert all(not stopping.patience_exhausted(scores[:count], 5) for count in range(1, stop))
    assert stopping.patience_exhausted(scores[:stop], 5)


@pytest.mark.parametrize("seed", range(10))
def test_a_slow_noisy_rise_with_a_spike_does_not_stop(seed):
    # The translation run that the patience rule stopped: rising by about 5% of its level per evaluation,
    # one evaluation well above the trend, then five lower ones.
    rng = random.Random(seed)
    scores = [2.0 * 1.05 ** x * (1 + rng.gauss(0, 0.02)) for x in range(30)]
    scores[20] = 2.0 * 1.05 ** 26  # as high as the trend six evaluations later
    assert stopping.patience_exhausted(scores[:26], 5)  # the rule alone stops it here
    assert _first_stop(scores) is None


@pytest.mark.parametrize("seed", range(10))
def test_a_rise_then_a_plateau_stops_soon_after_the_plateau_begins(seed):
    rng = random.Random(seed)
    rise = [20 * (1 - 0.8 ** x) for x in range(25)]  # within 0.1% of its top by evaluation 25
    scores = [value + rng.gauss(0, 0.1) for value in rise + [rise[-1]] * 35]
    stop = _first_stop(scores)
    assert stop is not None and 25 < stop <= 25 + 15


def test_no_patience_never_stops_and_few_scores_do_not_stop():
    assert not stopping.should_stop([5.0, 4.0, 3.0, 2.0], 0)
    assert not stopping.should_stop([5.0, 4.0, 3.0], 3)  # no score before the window
    assert stopping.should_stop([5.0, 4.0, 4.0, 4.0], 3)  # exhausted, and falling: no rise to wait for
