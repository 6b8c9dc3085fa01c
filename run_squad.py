"""BERT fine-tuning on SQuAD 1.1 and 2.0: the original command line, in TF2.

  python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_train --do_predict \
    --train_file=$SQUAD_DIR/train-v2.0.json --predict_file=$SQUAD_DIR/dev-v2.0.json \
    --train_batch_size=24 --learning_rate=3e-5 --num_train_epochs=2.0 \
    --max_seq_length=384 --doc_stride=128 --version_2_with_negative \
    --output_dir=/tmp/squad_output/
"""

from absl import app, flags

from training import common_flags
from training.squad import SquadOptions, run

# The original flags, names and defaults.
flags.DEFINE_string("bert_config_file", None, "The config json file of the pre-trained BERT model.")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string("output_dir", None, "The output directory for checkpoints and predictions.")
flags.DEFINE_string("train_file", None, "SQuAD json for training, e.g. train-v1.1.json.")
flags.DEFINE_string("predict_file", None, "SQuAD json for predictions, e.g. dev-v1.1.json.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_bool("do_lower_case", True, "Lower case the input; True for uncased models.")
flags.DEFINE_integer("max_seq_length", 384, "Maximum total input length after WordPiece.")
flags.DEFINE_integer("doc_stride", 128, "Stride between the windows of a long document.")
flags.DEFINE_integer("max_query_length", 64, "Maximum question length in tokens; longer is truncated.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_predict", False, "Whether to run prediction on the predict_file.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predictions.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs.")
flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training with linear learning rate warm-up.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps run in one compiled loop (and between log lines).")
flags.DEFINE_integer("n_best_size", 20, "Total n-best predictions in nbest_predictions.json.")
flags.DEFINE_integer("max_answer_length", 30, "Maximum answer length in tokens.")
common_flags.define_tpu_flags()
flags.DEFINE_bool("verbose_logging", False, "Log the alignment of predicted and original text.")
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: some questions have no answer.")
flags.DEFINE_float("null_score_diff_threshold", 0.0, "Predict null when null - best non-null > this.")
# New flags.
common_flags.define_training_flags()

for _name in ("vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main(_):
    common_flags.run_or_exit("run_squad.py", run, common_flags.options_from_flags(SquadOptions))


if __name__ == "__main__":
    app.run(main)
