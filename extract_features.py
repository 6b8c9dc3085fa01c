"""Extract pre-computed feature vectors from BERT.

Writes, for every line of --input_file (`text_a` or `text_a ||| text_b`), one
JSON line with the activations of the --layers encoder layers for every
token. The logic is in feature_extraction/feature_extractor.py.

Example:
  python extract_features.py \
    --input_file=input.txt --output_file=output.jsonl \
    --vocab_file=$BERT_DIR/vocab.txt \
    --bert_config_file=$BERT_DIR/bert_config.json \
    --init_checkpoint=$BERT_DIR/bert_model.ckpt \
    --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=8
"""

from absl import app
from absl import flags
from absl import logging

import modeling
import tokenization
from feature_extraction import feature_extractor

FLAGS = flags.FLAGS

# The original's flags, names, defaults and order unchanged.
flags.DEFINE_string("input_file", None, "Text file, one example per line; `a ||| b` for a pair.")
flags.DEFINE_string("output_file", None, "JSON-lines file to write, one line per example.")
flags.DEFINE_string(
    "layers", "-1,-2,-3,-4", "Comma-separated encoder layer indexes; -1 is the last layer."
)
flags.DEFINE_string(
    "bert_config_file", None, "bert_config.json of the pre-trained model (the architecture)."
)
flags.DEFINE_integer(
    "max_seq_length", 128, "Maximum tokens per example after WordPiece; longer is truncated."
)
flags.DEFINE_string(
    "init_checkpoint", None, "Pre-trained checkpoint (prefix or directory), original layout."
)
flags.DEFINE_string("vocab_file", None, "Vocabulary file the model was trained with.")
flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case the input: True for uncased models, False for cased."
)
flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
flags.DEFINE_bool("use_tpu", False, "Not supported yet; kept for command-line compatibility.")
flags.DEFINE_string("master", None, "No-op; kept for command-line compatibility.")
flags.DEFINE_integer("num_tpu_cores", 8, "No-op; kept for command-line compatibility.")
flags.DEFINE_bool(
    "use_one_hot_embeddings",
    False,
    "No-op (a TPU option of the original); kept for command-line compatibility.",
)

# New flags.
flags.DEFINE_integer(
    "head_size",
    None,
    "Attention head size; overrides bert_config's head_size (default: the config's).",
)

flags.register_validator("batch_size", lambda value: value >= 1, "must be positive.")
for _name in ("input_file", "output_file", "bert_config_file", "init_checkpoint", "vocab_file"):
    flags.mark_flag_as_required(_name)


def main(_):
    logging.set_verbosity(logging.INFO)
    if FLAGS.use_tpu:
        raise app.UsageError(
            "--use_tpu is not supported by this TF2 port yet; TPUs will be selected "
            "with --distribution_strategy=tpu in a later version."
        )
    # Errors in the flags (each message names the flag or file) are usage
    # errors: a message, not a traceback.
    try:
        tokenization.validate_case_matches_checkpoint(
            FLAGS.do_lower_case, FLAGS.init_checkpoint
        )
        bert_config = modeling.BertConfig.from_json_file(FLAGS.bert_config_file)
        if FLAGS.head_size is not None:
            bert_config = bert_config.replace(head_size=FLAGS.head_size)
        layer_indexes = feature_extractor.parse_layers(
            FLAGS.layers, bert_config.num_hidden_layers
        )
        feature_extractor.check_max_seq_length(FLAGS.max_seq_length, bert_config)
        tokenizer = tokenization.FullTokenizer(
            vocab_file=FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case
        )
    except (ValueError, FileNotFoundError) as error:
        raise app.UsageError(str(error)) from None

    try:
        feature_extractor.run(
            input_file=FLAGS.input_file,
            output_file=FLAGS.output_file,
            bert_config=bert_config,
            init_checkpoint=FLAGS.init_checkpoint,
            tokenizer=tokenizer,
            layer_indexes=layer_indexes,
            max_seq_length=FLAGS.max_seq_length,
            batch_size=FLAGS.batch_size,
        )
    except FileNotFoundError as error:  # A missing --input_file.
        raise app.UsageError(str(error)) from None


if __name__ == "__main__":
    app.run(main)
