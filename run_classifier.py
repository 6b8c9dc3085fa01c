"""BERT fine-tuning for sentence(-pair) classification: the original command line, in TF2.

  python run_classifier.py --task_name=MNLI --do_train --do_eval --do_predict \
    --data_dir=$GLUE_DIR/MNLI --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json \
    --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
    --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
    --output_dir=/tmp/mnli_output/

Tasks: cola, mnli, mrpc, xnli (as the original), sst-2, qqp, qnli, rte, wnli, sts-b.
"""

import sys

from absl import app, flags

from training import distribution, precision
from training.classification import ClassifierOptions, run
from training.freezing import SAVE_FROZEN

FLAGS = flags.FLAGS

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
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (same as --distribution_strategy=tpu).")
flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use for training.")
flags.DEFINE_string("tpu_zone", None, "GCE zone where the Cloud TPU is located in.")
flags.DEFINE_string("gcp_project", None, "Project name for the Cloud TPU-enabled project.")
flags.DEFINE_string("master", None, "TensorFlow master URL (used when --tpu_name is unset).")
flags.DEFINE_integer("num_tpu_cores", 8, "Kept for compatibility: TPUStrategy uses every core it finds.")
# New flags.
flags.DEFINE_integer("head_size", None, "Attention head size; overrides the config's head_size.")
flags.DEFINE_integer("random_seed", 12345, "Seed for initialisation, data order and dropout.")
flags.DEFINE_enum("dtype", "float32", list(precision.DTYPES), "Compute dtype (mixed precision for 16-bit types).")
flags.DEFINE_enum("distribution_strategy", "one_device", list(distribution.STRATEGIES), "tf.distribute strategy.")
flags.DEFINE_string("freeze", "", "Parameter groups kept at their initial values (see README).")
flags.DEFINE_string("reinit", "", "Parameter groups re-drawn from the seeded initializer after --init_checkpoint.")
flags.DEFINE_enum("save_frozen", "values", list(SAVE_FROZEN), "'seed' leaves frozen random variables out of checkpoints.")

for _name in ("data_dir", "task_name", "vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main(_):
    options = ClassifierOptions(
        **{field: FLAGS[field].value for field in ClassifierOptions.__dataclass_fields__}
    )
    try:
        run(options)
    except (ValueError, FileNotFoundError, FloatingPointError) as error:
        # Bad input or a diverged run: the message says what to do, no traceback.
        sys.exit("run_classifier.py: error: %s" % error)


if __name__ == "__main__":
    app.run(main)
