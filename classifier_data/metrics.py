"""GLUE metrics from predictions and gold labels, as GLUE reports them.

  CoLA: Matthews correlation (plus accuracy).
  MRPC, QQP: accuracy and F1 of the positive class (label "1", id 1).
  STS-B: Pearson and Spearman correlation, and their mean.
  Every other classification task (MNLI, SST-2, QNLI, RTE, WNLI, XNLI):
  accuracy.

Values are fractions in [0, 1] (correlations in [-1, 1]), not percentages.
"""

import numpy as np
from scipy import stats

from classifier_data import processors


def accuracy(predictions, labels):
    """float, the fraction of predictions equal to the labels (int arrays [n])."""
    predictions, labels = _check_pair(predictions, labels)
    return float(np.mean(predictions == labels))


def _binary_counts(predictions, labels, positive):
    """(tp, fp, fn, tn) as floats; float so that products cannot overflow."""
    predicted = predictions == positive
    actual = labels == positive
    tp = float(np.sum(predicted & actual))
    fp = float(np.sum(predicted & ~actual))
    fn = float(np.sum(~predicted & actual))
    tn = float(np.sum(~predicted & ~actual))
    return tp, fp, fn, tn


def f1_score(predictions, labels, positive=1):
    """F1 of class `positive`: 2 tp / (2 tp + fp + fn); 0.0 with no positives at all."""
    predictions, labels = _check_pair(predictions, labels)
    tp, fp, fn, _ = _binary_counts(predictions, labels, positive)
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


def matthews_corrcoef(predictions, labels, positive=1):
    """Binary Matthews correlation, (tp tn - fp fn) / sqrt of the four margins.

    When a margin is zero (e.g. every prediction is the same class) the
    formula is 0/0; GLUE (via scikit-learn) reports 0.0 then.
    """
    predictions, labels = _check_pair(predictions, labels)
    tp, fp, fn, tn = _binary_counts(predictions, labels, positive)
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def pearson_and_spearman(predictions, labels):
    """(pearson, spearman) floats for regression outputs (float arrays [n]).

    NaN when either side is constant (the correlation is undefined).
    """
    predictions, labels = _check_pair(predictions, labels, dtype=np.float64)
    if np.all(predictions == predictions[0]) or np.all(labels == labels[0]):
        return float("nan"), float("nan")
    pearson = stats.pearsonr(predictions, labels)[0]
    spearman = stats.spearmanr(predictions, labels)[0]
    return float(pearson), float(spearman)


def _check_pair(predictions, labels, dtype=None):
    predictions = np.asarray(predictions, dtype=dtype)
    labels = np.asarray(labels, dtype=dtype)
    if predictions.shape != labels.shape or predictions.ndim != 1:
        raise ValueError("predictions and labels must be 1-D of equal length, got shapes %s and %s"
                         % (predictions.shape, labels.shape))
    if predictions.size == 0:
        raise ValueError("No examples to compute metrics on.")
    return predictions, labels


def task_metrics(task_name, predictions, labels):
    """The GLUE metrics of one task.

    Args:
      task_name: str, a `processors.PROCESSORS` key or alias ("cola", "sts-b").
      predictions: classification: int class ids [n], or scores [n, num_labels]
        (logits or probabilities; the argmax is taken). Regression: floats [n]
        or [n, 1].
      labels: int class ids [n] (float scores for regression).

    Returns:
      dict str -> float, with keys
        cola: eval_accuracy, eval_mcc
        mrpc, qqp: eval_accuracy, eval_f1
        sts-b: eval_pearson, eval_spearman, eval_corr (their mean)
        others: eval_accuracy

    Raises:
      ValueError: unknown task, or shapes that do not match.
    """
    name = processors.canonical_task_name(task_name)
    is_regression = processors.PROCESSORS[name].is_regression
    predictions = np.asarray(predictions)
    labels = np.asarray(labels)
    if predictions.ndim == 2 and not is_regression:
        predictions = np.argmax(predictions, axis=-1)  # Scores [n, num_labels].
    elif predictions.ndim == 2 and predictions.shape[1] == 1:
        predictions = predictions[:, 0]  # A regression head's [n, 1].
    if is_regression:
        pearson, spearman = pearson_and_spearman(predictions, labels)
        return {
            "eval_pearson": pearson,
            "eval_spearman": spearman,
            "eval_corr": (pearson + spearman) / 2,
        }
    result = {"eval_accuracy": accuracy(predictions, labels)}
    if name == "cola":
        result["eval_mcc"] = matthews_corrcoef(predictions, labels)
    if name in ("mrpc", "qqp"):
        result["eval_f1"] = f1_score(predictions, labels)
    return result
