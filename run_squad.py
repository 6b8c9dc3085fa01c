"""BERT fine-tuning on SQuAD 1.1 and 2.0: the original command line, in TF2.

  python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_train --do_predict \
    --train_file=$SQUAD_DIR/train-v2.0.json --predict_file=$SQUAD_DIR/dev-v2.0.json \
    --train_batch_size=24 --learning_rate=3e-5 --num_train_epochs=2.0 \
    --max_seq_length=384 --doc_stride=128 --version_2_with_negative \
    --output_dir=/tmp/squad_output/
"""

from absl import app

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from modeling.squad import SquadOptions, run

options.define_flags(SquadOptions)


def main(_):
    run_options = options.from_flags(SquadOptions)
    onednn.assume_frozen_weights(run_options.dtype, trains=run_options.do_train)  # see training/onednn.py
    options.run_or_exit("run_squad.py", run, run_options)


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("run_squad.py", SquadOptions))
