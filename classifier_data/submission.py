"""Writes test-set predictions: the original's test_results.tsv and GLUE files.

`test_results.tsv` (as the original): one line per test example, the class
probabilities tab-separated in `get_labels()` order; for regression the
single predicted value.

GLUE leaderboard files (`<submission name>.tsv`, e.g. `MNLI-m.tsv`): the
header `index<TAB>prediction`, then one row per test example in file order
with index 0..n-1 and the prediction as GLUE expects it: the label string
for MNLI-m, MNLI-mm, AX, QNLI and RTE; 0/1 for CoLA, SST-2, MRPC, QQP and
WNLI (their label strings are "0"/"1"); a score for STS-B.

There must be exactly one prediction per test example. Each file appears
only once complete (outputs.writing): an interrupted run leaves none.
"""

import os

import numpy as np
import tensorflow as tf

import outputs

# The label set each GLUE file uses; None for the regression task.
GLUE_LABELS = {
    "CoLA": ("0", "1"),
    "SST-2": ("0", "1"),
    "MRPC": ("0", "1"),
    "QQP": ("0", "1"),
    "WNLI": ("0", "1"),
    "MNLI-m": ("contradiction", "entailment", "neutral"),
    "MNLI-mm": ("contradiction", "entailment", "neutral"),
    "AX": ("contradiction", "entailment", "neutral"),
    "QNLI": ("entailment", "not_entailment"),
    "RTE": ("entailment", "not_entailment"),
    "STS-B": None,
}

# STS-B gold scores lie in [0, 5]; a regression head can overshoot, and
# clipping into the range never moves a prediction away from any gold score.
_STSB_MIN, _STSB_MAX = 0.0, 5.0


def check_count(predictions, num_examples):
    """The predictions as an array, checked against the test set size.

    Args:
      predictions: array-like [n, ...].
      num_examples: int, the number of test examples.

    Returns:
      np.ndarray [num_examples, ...].

    Raises:
      ValueError: the rows are not exactly num_examples.
    """
    predictions = np.asarray(predictions)
    if len(predictions) != num_examples:
        raise ValueError("Got %d predictions for %d test examples: every test "
                         "example needs exactly one row." % (len(predictions), num_examples))
    return predictions


def write_test_results(output_file, predictions, num_examples):
    """Writes the original's test_results.tsv.

    Args:
      output_file: str.
      predictions: float [n, num_labels] probabilities, or [n] / [n, 1]
        regression outputs.
      num_examples: int, the number of test examples.
    """
    predictions = check_count(predictions, num_examples).astype(np.float32)
    predictions = predictions.reshape(num_examples, -1)
    with outputs.writing(output_file) as temporary, tf.io.gfile.GFile(temporary, "w") as writer:
        for row in predictions:
            # str(np.float32) as the original prints, e.g. "0.9183".
            writer.write("\t".join(str(value) for value in row) + "\n")


def glue_predictions(submission_name, predictions, label_list):
    """The prediction column of a GLUE file, one str per example.

    Args:
      submission_name: str, a GLUE_LABELS key.
      predictions: classification: int ids [n] or scores [n, num_labels];
        STS-B: floats [n] or [n, 1].
      label_list: list of str, the processor's get_labels() (ids index it).

    Returns:
      list of str.
    """
    if submission_name not in GLUE_LABELS:
        raise ValueError("Unknown GLUE submission %r; known: %s"
                         % (submission_name, ", ".join(sorted(GLUE_LABELS))))
    expected_labels = GLUE_LABELS[submission_name]
    predictions = np.asarray(predictions)
    if expected_labels is None:
        scores = np.clip(predictions.reshape(len(predictions)).astype(np.float64),
                         _STSB_MIN, _STSB_MAX)
        # Three decimals, as the STS-B gold scores are written.
        return ["%.3f" % score for score in scores]

    if sorted(label_list) != sorted(expected_labels):
        raise ValueError("%s predictions need the labels %s, got %s"
                         % (submission_name, list(expected_labels), list(label_list)))
    if predictions.size == 0:
        return []
    ids = np.argmax(predictions, axis=-1) if predictions.ndim == 2 else predictions
    in_range = ids.min() >= 0 and ids.max() < len(label_list)
    if not (np.issubdtype(ids.dtype, np.integer) and in_range):
        raise ValueError("%s predictions must be class ids in [0, %d) or [n, %d] scores"
                         % (submission_name, len(label_list), len(label_list)))
    return [label_list[i] for i in ids]


def write_glue_submission(output_dir, submission_name, predictions, label_list, num_examples):
    """Writes `<output_dir>/<submission_name>.tsv` for the GLUE leaderboard.

    Args:
      output_dir: str.
      submission_name: str, e.g. processor.submission_name ("MNLI-m").
      predictions: see `glue_predictions`, one row per test example.
      label_list: list of str ([] or None for STS-B).
      num_examples: int, the number of test examples.

    Returns:
      str, the path written.
    """
    predictions = check_count(predictions, num_examples)
    column = glue_predictions(submission_name, predictions, label_list)
    path = os.path.join(output_dir, "%s.tsv" % submission_name)
    with outputs.writing(path) as temporary, tf.io.gfile.GFile(temporary, "w") as writer:
        writer.write("index\tprediction\n")
        for index, prediction in enumerate(column):
            writer.write("%d\t%s\n" % (index, prediction))
    return path
