"""Pre-trains BERT (masked LM + next sentence): the original command line, in TF2.

  python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
    --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
    --bert_config_file=bert_config.json --train_batch_size=32 \
    --max_seq_length=128 --max_predictions_per_seq=20 --num_train_steps=20 \
    --num_warmup_steps=10 --learning_rate=2e-5

Re-running the same command resumes from the newest checkpoint in output_dir.
"""

import sys

from absl import app, flags

from training import distribution, precision
from training.freezing import SAVE_FROZEN
from training.optimization import OPTIMIZERS
from training.pretraining import PretrainingOptions, run

FLAGS = flags.FLAGS

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
flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "adamw (the original) or lamb.")
flags.DEFINE_string(
    "freeze", "", "Parameter groups kept at their initial values, e.g. 'embeddings,attention:0-5' "
    "(groups: embeddings, attention, ffn, pooler, heads; 're:<regex>' over variable names, last).")
flags.DEFINE_string(
    "reinit", "", "Parameter groups re-drawn from the seeded initializer after --init_checkpoint.")
flags.DEFINE_enum(
    "save_frozen", "values", list(SAVE_FROZEN),
    "'seed' leaves frozen random variables out of checkpoints; loaders regenerate them.")

for _name in ("bert_config_file", "input_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main(_):
    options = PretrainingOptions(
        **{field: FLAGS[field].value for field in PretrainingOptions.__dataclass_fields__}
    )
    try:
        run(options)
    except (ValueError, FloatingPointError) as error:
        # Bad input or a diverged run: the message says what to do, no traceback.
        sys.exit("run_pretraining.py: error: %s" % error)


if __name__ == "__main__":
    app.run(main)
