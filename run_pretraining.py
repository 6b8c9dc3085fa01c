"""Pre-trains BERT (masked LM + next sentence): the original command line, in TF2.

  python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
    --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
    --bert_config_file=bert_config.json --train_batch_size=32 \
    --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=20 \
    --num_warmup_steps=10 --learning_rate=2e-5

Re-running the same command resumes from the newest checkpoint in output_dir.
"""

from absl import app, flags

from training import common_flags
from training.optimization import OPTIMIZERS
from training.pretraining import PretrainingOptions, run

# The original flags, names and defaults.
flags.DEFINE_string("bert_config_file", None, "The config json file of the pre-trained BERT model.")
flags.DEFINE_string("input_file", None, "Input TF example files (a glob or comma-separated globs).")
flags.DEFINE_string("output_dir", None, "The output directory for checkpoints and results.")
flags.DEFINE_string("init_checkpoint", None, "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_integer("max_seq_length", 128, "Maximum total sequence length; must match the data.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Maximum masked LM predictions per sequence; must match the data.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for the optimizer.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warm-up steps.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save the model checkpoint.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps run in one compiled loop (and between log lines).")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
common_flags.define_tpu_flags()
# New flags.
common_flags.define_training_flags()
flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "adamw (the original) or lamb.")

for _name in ("bert_config_file", "input_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main(_):
    common_flags.run_or_exit("run_pretraining.py", run, common_flags.options_from_flags(PretrainingOptions))


if __name__ == "__main__":
    app.run(main)
