"""BERT fine-tuning for sentence(-pair) classification: the original command line, in TF2.

  python run_classifier.py --task_name=MNLI --do_train --do_eval --do_predict \
    --data_dir=$GLUE_DIR/MNLI --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
    --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
    --output_dir=/tmp/mnli_output/

Tasks: cola, mnli, mrpc, xnli (as the original), sst-2, qqp, qnli, rte, wnli, sts-b.
"""

from absl import app, flags

from training import common_flags
from training.classification import ClassifierOptions, run

# The original flags, names and defaults.
flags.DEFINE_string("data_dir", None, "The input data dir: the task's .tsv files.")
flags.DEFINE_string("bert_config_file", None, "The config json file of the pre-trained BERT model.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string("output_dir", None, "The output directory for checkpoints, records and results.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_bool("do_lower_case", True, "Lower case the input; True for uncased models.")
flags.DEFINE_integer("max_seq_length", 128, "Maximum total input length after WordPiece; longer is truncated.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool("do_predict", False, "Whether to run the model on the test set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs.")
flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training with linear learning rate warm-up.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps run in one compiled loop (and between log lines).")
common_flags.define_tpu_flags()
# New flags.
common_flags.define_training_flags()

for _name in ("data_dir", "task_name", "vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main(_):
    common_flags.run_or_exit("run_classifier.py", run, common_flags.options_from_flags(ClassifierOptions))


if __name__ == "__main__":
    app.run(main)
