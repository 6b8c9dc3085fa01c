"""Extract pre-computed feature vectors from BERT.

Writes, for every line of --input_file (`text_a` or `text_a ||| text_b`), one
JSON line with the activations of the --layers encoder layers for every
token. The logic is in feature_extraction/feature_extractor.py.

Example:
  python extract_features.py \
    --input_file=input.txt --output_file=output.jsonl \
    --vocab_file=$BERT_DIR/vocab.txt \
    --bert_config_file=$BERT_DIR/bert_config.json \
    --init_checkpoint=$BERT_DIR/bert_model.ckpt \
    --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=8
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from feature_extraction.feature_extractor import ExtractFeaturesOptions, run_from_options

_PROGRAM = "extract_features.py"

options.define_flags(ExtractFeaturesOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run_from_options, options.from_flags(ExtractFeaturesOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, ExtractFeaturesOptions))
