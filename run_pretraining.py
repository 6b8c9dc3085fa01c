"""Pre-trains BERT (masked LM + next sentence): the original command line, in TF2.

  python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
    --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
    --bert_config_file=bert_config.json --train_batch_size=32 \
    --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=20 \
    --num_warmup_steps=10 --learning_rate=2e-5

Re-running the same command resumes from the newest checkpoint in output_dir.
"""

from absl import app

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from modeling.pretraining import PretrainingOptions, run

options.define_flags(PretrainingOptions)


def main(_):
    options.run_or_exit("run_pretraining.py", run, options.from_flags(PretrainingOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("run_pretraining.py", PretrainingOptions))
