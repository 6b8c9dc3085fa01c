"""BERT fine-tuning for sentence(-pair) classification: the original command line, in TF2.

  python run_classifier.py --task_name=MNLI --do_train --do_eval --do_predict \
    --data_dir=$GLUE_DIR/MNLI --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
    --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
    --output_dir=/tmp/mnli_output/

Tasks: cola, mnli, mrpc, xnli (as the original), sst-2, qqp, qnli, rte, wnli, sts-b.
"""

from absl import app

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from modeling.classification import ClassifierOptions, run

options.define_flags(ClassifierOptions)


def main(_):
    run_options = options.from_flags(ClassifierOptions)
    onednn.assume_frozen_weights(run_options.dtype, trains=run_options.do_train)  # see training/onednn.py
    options.run_or_exit("run_classifier.py", run, run_options)


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("run_classifier.py", ClassifierOptions))
