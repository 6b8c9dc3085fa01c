"""Per-window start/end logits -> answer texts and the prediction JSON files.

For each example (the original run_squad's `write_predictions`):
  1. in every window, pair the `n_best_size` best start and end positions;
     drop spans outside the doc tokens, spans ending before they start,
     spans longer than `max_answer_length` tokens and spans whose start is
     not in its max-context window;
  2. sort by start_logit + end_logit; keep the best `n_best_size` distinct
     texts, each de-WordPieced and aligned back to the original words
     (`squad_lib.get_final_text`: "Steve Smith's" -> "Steve Smith");
  3. probabilities are a softmax over the kept candidates' scores;
  4. SQuAD 2.0: the null score is min over windows of start[0] + end[0]
     (at [CLS]); the answer is "" iff null - best non-null score >
     `null_score_diff_threshold`, and that difference goes to null_odds.

This is Model Garden's `squad_lib.postprocess_output`, which also fixes the
original's crash when every n-best entry is empty: with no non-null
candidate the answer is "" and null_odds holds the null score itself; with
no candidate at all (SQuAD 1.1) the answer is "empty".
"""

import collections
import json
import os

from absl import logging
from official.nlp.data import squad_lib

import outputs

PREDICTIONS_FILE = "predictions.json"
NBEST_FILE = "nbest_predictions.json"
NULL_ODDS_FILE = "null_odds.json"


class RawResult(collections.namedtuple("RawResult", ["unique_id", "start_logits", "end_logits"])):
    """The model's output for one feature.

    Fields:
      unique_id: int, the feature's unique_id.
      start_logits, end_logits: list of float [max_seq_length].
    """


class SquadPredictions(collections.namedtuple("SquadPredictions",
                                              ["predictions", "nbest", "null_odds"])):
    """Post-processed predictions, keyed by question id in example order.

    Fields:
      predictions: OrderedDict {id: answer text} ("" = no answer).
      nbest: OrderedDict {id: [OrderedDict(text, probability, start_logit,
        end_logit)]}, best first.
      null_odds: OrderedDict {id: null score - best non-null score} for
        SQuAD 2.0, None for SQuAD 1.1.
    """


def results_from_batch(unique_ids, start_logits, end_logits):
    """Splits one batch of model outputs into `RawResult`s.

    Args:
      unique_ids: int array-like [batch].
      start_logits, end_logits: float array-likes [batch, max_seq_length]
        (NumPy arrays or eager Tensors).

    Returns:
      list of `RawResult` with Python ints and floats (JSON-serialisable).
    """
    # .tolist() turns float32 into Python floats: json cannot write float32.
    unique_ids = _to_list(unique_ids)
    start_logits = _to_list(start_logits)
    end_logits = _to_list(end_logits)
    return [RawResult(int(u), [float(x) for x in s], [float(x) for x in e])
            for u, s, e in zip(unique_ids, start_logits, end_logits)]


def _to_list(values):
    if hasattr(values, "numpy"):
        values = values.numpy()
    if hasattr(values, "tolist"):
        values = values.tolist()
    return list(values)


def postprocess_predictions(examples, features, results, n_best_size, max_answer_length,
                            do_lower_case, version_2_with_negative=False,
                            null_score_diff_threshold=0.0, verbose_logging=False):
    """Turns per-feature logits into answers (see the module docstring).

    Args:
      examples: list of `SquadExample`, as given to the feature conversion.
      features: list of `InputFeatures` of those examples (prediction mode).
      results: iterable of `RawResult` (or objects with unique_id,
        start_logits, end_logits), one per feature; results for unknown ids
        are ignored.
      n_best_size: int, candidates kept per example and positions tried.
      max_answer_length: int, longest answer in WordPiece tokens.
      do_lower_case: bool, as the tokenizer, for aligning text back.
      version_2_with_negative: bool, SQuAD 2.0 (null answers allowed).
      null_score_diff_threshold: float, see the module docstring.
      verbose_logging: bool, log alignment failures of get_final_text.

    Returns:
      `SquadPredictions`.
    """
    results = [RawResult(int(r.unique_id), [float(x) for x in r.start_logits],
                         [float(x) for x in r.end_logits]) for r in results]
    known_ids = set(r.unique_id for r in results)
    missing = sum(1 for f in features if f.unique_id not in known_ids)
    if missing:
        # Such windows simply do not compete; say so, it is usually a
        # dropped last batch (drop_remainder=True at prediction).
        logging.warning("%d of %d features have no model result and are ignored.",
                        missing, len(features))

    predictions, nbest, null_odds = squad_lib.postprocess_output(
        all_examples=examples,
        all_features=features,
        all_results=results,
        n_best_size=n_best_size,
        max_answer_length=max_answer_length,
        do_lower_case=do_lower_case,
        version_2_with_negative=version_2_with_negative,
        null_score_diff_threshold=null_score_diff_threshold,
        verbose=verbose_logging)
    return SquadPredictions(predictions, nbest, null_odds if version_2_with_negative else None)


def write_prediction_files(output_dir, predictions):
    """Writes predictions.json, nbest_predictions.json and (v2) null_odds.json.

    JSON with indent 4 and a final newline, as the original. Each file
    appears only once complete (outputs.write_text).

    Args:
      output_dir: str, an existing directory (any tf.io.gfile path).
      predictions: `SquadPredictions`.

    Returns:
      dict {"predictions", "nbest", "null_odds" (v2 only): path written}.
    """
    paths = {
        "predictions": os.path.join(output_dir, PREDICTIONS_FILE),
        "nbest": os.path.join(output_dir, NBEST_FILE),
    }
    if predictions.null_odds is not None:
        paths["null_odds"] = os.path.join(output_dir, NULL_ODDS_FILE)
    for key, path in paths.items():
        logging.info("Writing %s", path)
        # squad_lib.write_to_json_files' format, published whole.
        outputs.write_text(path, json.dumps(getattr(predictions, key), indent=4) + "\n")
    return paths
