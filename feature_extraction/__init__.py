"""Fixed BERT features: the library behind `extract_features.py`.

Reads one example per line (`text_a` or `text_a ||| text_b`), runs a
pre-trained `modeling.BertModel` in inference mode and writes the chosen
encoder layers' activations of every real token as JSON lines.
"""

from feature_extraction.feature_extractor import ExtractFeaturesOptions
from feature_extraction.feature_extractor import FeatureExtractor
from feature_extraction.feature_extractor import InputExample
from feature_extraction.feature_extractor import InputFeatures
from feature_extraction.feature_extractor import check_layer_indexes
from feature_extraction.feature_extractor import check_max_seq_length
from feature_extraction.feature_extractor import convert_examples_to_features
from feature_extraction.feature_extractor import feature_to_json
from feature_extraction.feature_extractor import load_encoder
from feature_extraction.feature_extractor import parse_layers
from feature_extraction.feature_extractor import read_examples
from feature_extraction.feature_extractor import run
from feature_extraction.feature_extractor import run_from_options
from feature_extraction.feature_extractor import truncate_seq_pair
from feature_extraction.feature_extractor import write_features

__all__ = [
    "ExtractFeaturesOptions",
    "FeatureExtractor",
    "InputExample",
    "InputFeatures",
    "check_layer_indexes",
    "check_max_seq_length",
    "convert_examples_to_features",
    "feature_to_json",
    "load_encoder",
    "parse_layers",
    "read_examples",
    "run",
    "run_from_options",
    "truncate_seq_pair",
    "write_features",
]
