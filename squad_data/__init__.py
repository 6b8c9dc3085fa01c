"""SQuAD data for `run_squad.py`: reading, features, post-processing, metrics.

  read_squad_examples      JSON file -> SquadExample list (+ skipped ids)
  convert_examples_to_features / write_features
                           examples -> windowed InputFeatures / TFRecord
  make_dataset / features_to_dataset
                           TFRecord or in-memory features -> tf.data batches
  postprocess_predictions  per-window logits -> answers, n-best, null odds
  write_prediction_files   predictions.json, nbest_predictions.json,
                           null_odds.json
  evaluate / write_eval_results
                           official SQuAD 1.1 / 2.0 metrics, eval_results.json

The algorithms are Model Garden's `official.nlp.data.squad_lib` and
`official.nlp.tools.squad_evaluate_v*` (the original's, with its known
crash fixed); this package adds the checks, counts and file formats.
"""

from squad_data.evaluation import EVAL_RESULTS_FILE
from squad_data.evaluation import evaluate
from squad_data.evaluation import evaluate_v1_1
from squad_data.evaluation import evaluate_v2_0
from squad_data.evaluation import has_answers
from squad_data.evaluation import write_eval_results
from squad_data.examples import SquadExample
from squad_data.examples import SquadReadResult
from squad_data.examples import examples_from_data
from squad_data.examples import load_squad_data
from squad_data.examples import read_squad_examples
from squad_data.examples import split_context
from squad_data.features import FeatureWriter
from squad_data.features import InputFeatures
from squad_data.features import check_lengths
from squad_data.features import convert_examples_to_features
from squad_data.features import feature_spec
from squad_data.features import feature_to_example
from squad_data.features import features_to_dataset
from squad_data.features import make_dataset
from squad_data.features import write_features
from squad_data.postprocess import NBEST_FILE
from squad_data.postprocess import NULL_ODDS_FILE
from squad_data.postprocess import PREDICTIONS_FILE
from squad_data.postprocess import RawResult
from squad_data.postprocess import SquadPredictions
from squad_data.postprocess import postprocess_predictions
from squad_data.postprocess import results_from_batch
from squad_data.postprocess import write_prediction_files

__all__ = [
    "EVAL_RESULTS_FILE",
    "FeatureWriter",
    "InputFeatures",
    "NBEST_FILE",
    "NULL_ODDS_FILE",
    "PREDICTIONS_FILE",
    "RawResult",
    "SquadExample",
    "SquadPredictions",
    "SquadReadResult",
    "check_lengths",
    "convert_examples_to_features",
    "evaluate",
    "evaluate_v1_1",
    "evaluate_v2_0",
    "examples_from_data",
    "feature_spec",
    "feature_to_example",
    "features_to_dataset",
    "has_answers",
    "load_squad_data",
    "make_dataset",
    "postprocess_predictions",
    "read_squad_examples",
    "results_from_batch",
    "split_context",
    "write_eval_results",
    "write_features",
    "write_prediction_files",
]
