"""When a run that evaluates at regular steps has stopped improving: patience that noise cannot fool.

The patience rule alone (stop after `patience` evaluations without a better
score) cannot tell "flat" from "slow and noisy": a run still rising by a few
per cent of its level per evaluation stops as soon as one evaluation lands
above the trend and the next `patience` ones, still rising, stay below it.
(Seen on a translation pair: a frozen-embeddings run stopped at a tenth of
its baseline's BLEU while climbing steadily.)

`should_stop` therefore asks for both:
  1. patience: none of the last `patience` scores beats the best before them;
  2. no trend: the least-squares slope of the last `2 * patience` scores is not
     above zero by more than `z` of its standard errors (two by default), so
     a rise the window's own scatter cannot explain keeps the run going.
A run that has truly flattened passes both soon after the patience rule
alone would stop it; a steady rise with a spike passes the first only.
Scores are "higher is better" (BLEU, accuracy); negate losses and perplexities.
"""

import math


def trend(scores):
    """(slope per evaluation, its standard error) of the least-squares line through `scores`.

    The error is the residuals' spread over the spread of the evaluation numbers; with fewer than three
    scores it is infinite (two points fit any line exactly).
    """
    n = len(scores)
    if n < 2:
        return 0.0, math.inf
    mean_x, mean_y = (n - 1) / 2.0, sum(scores) / n
    sxx = sum((x - mean_x) ** 2 for x in range(n))
    slope = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(scores)) / sxx
    if n < 3:
        return slope, math.inf
    residuals = sum((y - mean_y - slope * (x - mean_x)) ** 2 for x, y in enumerate(scores))
    return slope, math.sqrt(residuals / (n - 2) / sxx)


def patience_exhausted(scores, patience):
    """Whether none of the last `patience` scores beats the best of the ones before them."""
    if patience <= 0 or len(scores) <= patience:
        return False
    return max(scores[-patience:]) <= max(scores[:-patience])


def still_rising(scores, patience, z=2.0):
    """Whether the last `2 * patience` scores rise by more than `z` standard errors of their slope."""
    slope, error = trend(list(scores[-2 * patience:]))
    return slope > z * error


def should_stop(scores, patience, z=2.0):
    """Whether a run whose evaluations so far gave `scores` (in order, higher is better) should stop.

    Args:
      scores: one figure per evaluation, oldest first.
      patience: evaluations without a better score before the run may stop; 0: never stop.
      z: how many standard errors of the window's slope a rise must clear to keep the run going.
    """
    return patience_exhausted(scores, patience) and not still_rising(scores, patience, z)
