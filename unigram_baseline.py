"""The unigram baseline of masked-LM records: the plateau a pre-training run must leave.

Predicts every masked token of --eval_input_file from how often each token is
masked in --input_file, whatever its context, and writes the accuracy (always
the most frequent token) and the loss (add-one smoothed frequencies) to
--output_file as JSON. A model near these figures has learned word
frequencies, not context. The logic is in analysis/unigram_baseline.py.

Example:
  python unigram_baseline.py \
    --input_file=train.tfrecord --eval_input_file=heldout.tfrecord \
    --vocab_file=vocab.txt --output_file=unigram.json \
    --max_seq_length=128 --max_predictions_per_seq=20
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from analysis.unigram_baseline import UnigramBaselineOptions, run

_PROGRAM = "unigram_baseline.py"

options.define_flags(UnigramBaselineOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run, options.from_flags(UnigramBaselineOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, UnigramBaselineOptions))
