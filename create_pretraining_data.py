"""Creates masked-LM / next-sentence pre-training data: the original command line.

  python create_pretraining_data.py \
    --input_file=corpus/*.txt --output_file=/tmp/tf_examples.tfrecord \
    --vocab_file=$BERT_DIR/vocab.txt --do_lower_case=True \
    --max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 \
    --random_seed=12345 --dupe_factor=10 --num_workers=2

Input: one sentence per line, a blank line between documents. Output: the
original's tf.train.Example schema, readable by run_pretraining.py here and
by the original. The logic is in pretraining_data/ (see pipeline.py).
"""

import sys

from absl import app
from absl import flags

FLAGS = flags.FLAGS

# The original's flags: names, defaults and order unchanged.
flags.DEFINE_string("input_file", None,
                    "Text input: one sentence per line, a blank line between documents. A "
                    "file, a glob, or a comma-separated list of them.")
flags.DEFINE_string("output_file", None,
                    "TFRecord file(s) to write; with a comma-separated list, instances go to "
                    "the files in turn.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab of the model, one token per line.")
flags.DEFINE_bool("do_lower_case", True,
                  "Lower-case and strip accents: True for uncased models, False for cased.")
flags.DEFINE_bool("do_whole_word_mask", False,
                  "Mask all the WordPieces of a word together instead of each on its own.")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per instance, [CLS] and [SEP]s included.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Most masked positions per instance.")
flags.DEFINE_integer("random_seed", 12345, "Seed of every random choice.")
flags.DEFINE_integer("dupe_factor", 10,
                     "Passes over the input, each with its own masks and segment pairs.")
flags.DEFINE_float("masked_lm_prob", 0.15, "Fraction of the tokens to mask.")
flags.DEFINE_float("short_seq_prob", 0.1,
                   "Probability that a document's instances aim at a random length shorter "
                   "than max_seq_length.")
# New flags.
flags.DEFINE_integer("num_workers", 1,
                     "Worker processes creating instances, a shard each at a time (0: in the "
                     "main process). The output is the same for any value.")
flags.DEFINE_integer("documents_per_shard", 10000,
                     "Documents per shard: each shard is shuffled, duplicated and masked on "
                     "its own, and draws its random next segments from itself. Memory grows "
                     "with it: ~250 bytes per token of a shard, num_workers + 1 shards at a "
                     "time. Lower it for book-length documents.")

for _name in ("input_file", "output_file", "vocab_file"):
    flags.mark_flag_as_required(_name)


def main(_):
    # Imported here, not at the top: spawned workers re-import this script,
    # and must not pay for TensorFlow, which the pipeline's main side needs.
    from pretraining_data import instances
    from pretraining_data import pipeline

    options = pipeline.PipelineOptions(
        input_file=FLAGS.input_file,
        output_file=FLAGS.output_file,
        vocab_file=FLAGS.vocab_file,
        do_lower_case=FLAGS.do_lower_case,
        instance_options=instances.InstanceOptions(
            max_seq_length=FLAGS.max_seq_length,
            max_predictions_per_seq=FLAGS.max_predictions_per_seq,
            dupe_factor=FLAGS.dupe_factor,
            masked_lm_prob=FLAGS.masked_lm_prob,
            short_seq_prob=FLAGS.short_seq_prob,
            do_whole_word_mask=FLAGS.do_whole_word_mask),
        random_seed=FLAGS.random_seed,
        num_workers=FLAGS.num_workers,
        documents_per_shard=FLAGS.documents_per_shard)
    try:
        pipeline.run(options)
    except (ValueError, RuntimeError) as error:
        # Bad input: the message says what to fix; a traceback would bury it.
        sys.exit("create_pretraining_data.py: error: %s" % error)


if __name__ == "__main__":
    app.run(main)
