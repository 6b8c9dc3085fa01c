"""Creates masked-LM / next-sentence pre-training data: the original command line.

  python create_pretraining_data.py \
    --input_file=corpus/*.txt --output_file=/tmp/tf_examples.tfrecord \
    --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=True \
    --max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 \
    --random_seed=12345 --dupe_factor=10 --num_workers=2

Input: one sentence per line, a blank line between documents. Output: the
original's tf.train.Example schema, readable by run_pretraining.py here and
by the original. The output files appear only when complete. The logic is in
pretraining_data/ (see pipeline.py).
"""

import sys

from absl import app

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from pretraining_data.instances import CreatePretrainingDataOptions

options.define_flags(CreatePretrainingDataOptions)

_PROGRAM = "create_pretraining_data.py"


def main(_):
    # Imported here, not at the top: workers, when spawned, re-import this
    # script and need only what pretraining_data.shard_worker imports.
    from pretraining_data import pipeline

    try:
        options.run_or_exit(_PROGRAM, pipeline.run,
                            options.from_flags(CreatePretrainingDataOptions))
    except pipeline.WorkerDiedError as error:
        # The message says what to try; a traceback would bury it.
        sys.exit("%s: error: %s" % (_PROGRAM, error))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, CreatePretrainingDataOptions))
