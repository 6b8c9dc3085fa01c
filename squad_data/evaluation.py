"""The official SQuAD metrics, through Model Garden's copies of the scripts.

SQuAD 1.1 (evaluate-v1.1.py): {"exact_match", "f1"}, in percent. Model
Garden's `squad_evaluate_v1_1` returns fractions under "exact_match" and
"final_f1"; they are scaled and renamed here.

SQuAD 2.0 (evaluate-v2.0.py run with --na-prob-file null_odds.json):
exact, f1, total, HasAns_exact, HasAns_f1, HasAns_total, NoAns_exact,
NoAns_f1, NoAns_total (HasAns_* / NoAns_* only when such questions exist),
best_exact, best_exact_thresh, best_f1, best_f1_thresh (only with null
odds). As in the official script, a question whose null odds exceed 1.0
counts as answered "" in exact/f1. Model Garden names the best_* keys
final_* and adds precision-recall keys (pr_*), which the official script
only computes for its plots; they are renamed / dropped here.
"""

import collections
import json
import os

import tensorflow as tf
from official.nlp.tools import squad_evaluate_v1_1
from official.nlp.tools import squad_evaluate_v2_0


EVAL_RESULTS_FILE = "eval_results.json"

_V2_BEST_KEYS = (
    ("final_exact", "best_exact"),
    ("final_exact_thresh", "best_exact_thresh"),
    ("final_f1", "best_f1"),
    ("final_f1_thresh", "best_f1_thresh"),
)


def _questions(dataset):
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield qa


def has_answers(dataset, version_2_with_negative):
    """Whether every question carries gold answers, so metrics make sense.

    SQuAD 1.1 needs a non-empty "answers" list on every question. SQuAD 2.0
    needs an "answers" list everywhere, empty only where "is_impossible" is
    true (test-style files with `"answers": []` throughout do not count).

    Args:
      dataset: the "data" list of a SQuAD file (`load_squad_data`).
      version_2_with_negative: bool.

    Returns:
      bool; False for a file without questions.
    """
    found = False
    for qa in _questions(dataset):
        answers = qa.get("answers")
        if not isinstance(answers, list):
            return False
        if not answers and not (version_2_with_negative and qa.get("is_impossible", False)):
            return False
        found = True
    return found


def evaluate_v1_1(dataset, predictions):
    """The official SQuAD 1.1 metrics.

    Args:
      dataset: the "data" list of the predict file.
      predictions: {question id: answer text}; a missing id scores 0.

    Returns:
      OrderedDict {"exact_match": float, "f1": float}, percent (0-100).
    """
    fractions = squad_evaluate_v1_1.evaluate(dataset, predictions)
    return collections.OrderedDict([
        ("exact_match", 100.0 * fractions["exact_match"]),
        ("f1", 100.0 * fractions["final_f1"]),
    ])


def evaluate_v2_0(dataset, predictions, null_odds=None):
    """The official SQuAD 2.0 metrics (see the module docstring for keys).

    Args:
      dataset: the "data" list of the predict file.
      predictions: {question id: answer text}, "" for no answer. Questions
        without a prediction are left out (Model Garden's behaviour; the
        official script fails on them); other ids are ignored.
      null_odds: {question id: float} from null_odds.json, or None.

    Returns:
      OrderedDict of float metrics (percent) and int totals.
    """
    # Ids outside the dataset are ignored, as by the official script (Model
    # Garden's precision-recall pass would fail on them).
    ids = set(qa["id"] for qa in _questions(dataset))
    predictions = {k: v for k, v in predictions.items() if k in ids}
    if null_odds is not None:
        null_odds = {k: v for k, v in null_odds.items() if k in ids}
    raw = squad_evaluate_v2_0.evaluate(dataset, predictions, na_probs=null_odds)
    metrics = collections.OrderedDict(
        (key, value) for key, value in raw.items()
        if not key.startswith("pr_") and not key.startswith("final_"))
    if null_odds is not None:
        for model_garden_key, official_key in _V2_BEST_KEYS:
            metrics[official_key] = raw[model_garden_key]
    return metrics


def evaluate(dataset, predictions, version_2_with_negative, null_odds=None):
    """`evaluate_v2_0` (with null_odds) or `evaluate_v1_1`."""
    if version_2_with_negative:
        return evaluate_v2_0(dataset, predictions, null_odds)
    return evaluate_v1_1(dataset, predictions)


def write_eval_results(path, metrics):
    """Writes the metrics as JSON (indent 4, official key order).

    Args:
      path: str, an existing directory (the file is then
        `<path>/eval_results.json`) or the file path itself.
      metrics: dict from `evaluate`.

    Returns:
      str, the path written.
    """
    if tf.io.gfile.isdir(path):
        path = os.path.join(path, EVAL_RESULTS_FILE)
    with tf.io.gfile.GFile(path, "w") as writer:
        writer.write(json.dumps(metrics, indent=4) + "\n")
    return path
