"""`make demo-papers`: pre-training from scratch and Table 2B at tiny scale, offline, on the sample data.

It proves that the research pipeline runs end to end on any machine, in
minutes (docs/demo.md says how long); it does not show the papers' findings (tiny models
trained for minutes on 0.4 MB of text learn word frequencies, not language):
docs/results/ has the evidence at small scale on real text.

1. sample data (reproduction/sample_data.py): the docstring corpus split into
   training and held-out documents, a WordPiece vocabulary learned from it,
   and the MNLI- and SQuAD-format tasks;
2. create_pretraining_data.py on both splits;
3. run_pretraining.py: a small BERT with a fixed head size (4 heads of 64 on
   hidden 128, so heads x head_size != hidden), and the same with a freezing
   preset (--freeze=ffn --save_frozen=seed); run_pretraining.py --do_eval on
   the held-out split at the seeded initialisation, each checkpoint and the
   frozen model, beside the share of the most frequent masked token;
4. extract_features.py with the pre-trained checkpoint;
5. reproduce_paper_tables.py --experiment=table2b --scale=tiny: the low-rank
   paper's Table 2B shrunk to 2 layers, with the head-rank probe of every row.
"""

import collections
import json
import os
import sys

import tensorflow as tf
from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # `python demo/papers_demo.py` from anywhere.

# pylint: disable=wrong-import-position
from demo import commands, report  # noqa: E402
from reproduction import sample_data  # noqa: E402
from training import compute_dtype  # noqa: E402
# pylint: enable=wrong-import-position

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", os.path.join(ROOT, "demo_output", "papers"), "Where everything goes.")
flags.DEFINE_integer("num_train_steps", 600, "Pre-training steps.")
flags.DEFINE_integer("checkpoints", 3, "Checkpoints saved (and evaluated) during training.")
flags.DEFINE_integer("dupe_factor", 5, "create_pretraining_data.py --dupe_factor.")
flags.DEFINE_integer("max_eval_steps", 50, "Held-out batches per evaluation.")
flags.DEFINE_string("dtype", None, "--dtype of the training runs. Default: bfloat16 where the CPU "
                    "has native bfloat16 (AVX512-BF16 or AMX), else float32 (training/compute_dtype.py).")
flags.DEFINE_integer("num_workers", 2, "create_pretraining_data.py --num_workers.")
flags.DEFINE_string("freeze_preset", "ffn", "The --freeze preset pre-trained next to the unfrozen model.")
flags.DEFINE_bool("reproduce_table", True, "Also run reproduce_paper_tables.py --experiment=table2b --scale=tiny.")

# Small enough for 2 CPU cores, with the paper's fixed head size: 4 heads x 64 = 256 != hidden 128.
DEMO_CONFIG = dict(
    hidden_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    head_size=64,
    intermediate_size=512,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=128,
    type_vocab_size=2,
    initializer_range=0.02,
)
# Docstring sentences are short; 64 tokens keep the demo within minutes on 2 cores.
MAX_SEQ_LENGTH = 64
MAX_PREDICTIONS = 10
HELD_OUT_FRACTION = 0.1


def make_data(data_dir):
    """The sample data, the corpus split into train / held-out documents, and the vocabulary."""
    data = sample_data.build_demo_data(data_dir)
    vocab = os.path.join(data_dir, "vocab.txt")
    if not os.path.exists(vocab):
        print("  vocabulary of %d WordPieces: %s" % (sample_data.build_vocab(data["corpus"], vocab), vocab))
    with open(data["corpus"], encoding="utf-8") as f:
        documents = f.read().strip().split("\n\n")
    held_out = max(1, int(len(documents) * HELD_OUT_FRACTION))
    for name, part in (("train", documents[:-held_out]), ("eval", documents[-held_out:])):
        data["corpus_" + name] = os.path.join(data_dir, "corpus_%s.txt" % name)
        with open(data["corpus_" + name], "w", encoding="utf-8") as f:
            f.write("\n\n".join(part) + "\n")
    data["vocab"] = vocab
    return data


def most_frequent_masked_token(record_file, max_predictions):
    """(token id, its share of the masked positions) in create_pretraining_data.py records."""
    spec = {"masked_lm_ids": tf.io.FixedLenFeature([max_predictions], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([max_predictions], tf.float32)}
    counts = collections.Counter()
    for record in tf.data.TFRecordDataset(record_file):
        example = tf.io.parse_single_example(record, spec)
        weights = example["masked_lm_weights"].numpy() > 0
        counts.update(example["masked_lm_ids"].numpy()[weights].tolist())
    token, count = counts.most_common(1)[0]
    return token, count / sum(counts.values())


def pretrain(out, data, dtype):
    """Steps 2-4 of the module docstring; returns the held-out curve and what it is compared with."""
    with open(data["vocab"], encoding="utf-8") as f:
        vocab = f.read().splitlines()
    config_path = os.path.join(out, "bert_config.json")
    with open(config_path, "w", encoding="utf-8") as f:
        json.dump(dict(DEMO_CONFIG, vocab_size=len(vocab)), f, indent=2, sort_keys=True)
    records = {}
    for split in ("train", "eval"):
        records[split] = os.path.join(out, "%s.tfrecord" % split)
        commands.run(commands.python(
            "create_pretraining_data.py", input_file=data["corpus_" + split], output_file=records[split],
            vocab_file=data["vocab"], do_lower_case=True, max_seq_length=MAX_SEQ_LENGTH,
            max_predictions_per_seq=MAX_PREDICTIONS, random_seed=12345, dupe_factor=FLAGS.dupe_factor,
            num_workers=FLAGS.num_workers), os.path.join(out, "create_pretraining_data_%s.log" % split))

    model_dir = os.path.join(out, "pretraining")
    frozen_dir = os.path.join(out, "pretraining_freeze_%s" % FLAGS.freeze_preset.replace(",", "_"))
    every = max(1, FLAGS.num_train_steps // FLAGS.checkpoints)
    common = dict(bert_config_file=config_path, max_seq_length=MAX_SEQ_LENGTH,
                  max_predictions_per_seq=MAX_PREDICTIONS, dtype=dtype)
    training = dict(input_file=records["train"], do_train=True, train_batch_size=32, learning_rate=1e-3,
                    num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_train_steps // 10,
                    iterations_per_loop=min(100, every), random_seed=12345, **common)
    commands.run_together([
        (commands.python("run_pretraining.py", output_dir=model_dir, save_checkpoints_steps=every, **training),
         os.path.join(out, "run_pretraining.log")),
        (commands.python("run_pretraining.py", output_dir=frozen_dir, save_checkpoints_steps=FLAGS.num_train_steps,
                         freeze=FLAGS.freeze_preset, save_frozen="seed", **training),
         os.path.join(out, "run_pretraining_freeze.log")),
    ])

    # Held-out masked-LM accuracy: the seeded initialisation, every checkpoint, the frozen model.
    points = [("unfrozen", 0, None)]
    points += [("unfrozen", step, os.path.join(model_dir, "model.ckpt-%d" % step))
               for step in range(every, FLAGS.num_train_steps + 1, every)]
    points.append(("freeze=" + FLAGS.freeze_preset, FLAGS.num_train_steps,
                   os.path.join(frozen_dir, "model.ckpt-%d" % FLAGS.num_train_steps)))
    curve = []
    for label, step, checkpoint in points:
        eval_dir = os.path.join(out, "held_out_eval", "%s_step_%d" % (label.replace("=", "_"), step))
        flags_for_step = dict(common, input_file=records["eval"], output_dir=eval_dir, do_eval=True,
                              eval_batch_size=32, max_eval_steps=FLAGS.max_eval_steps)
        if checkpoint:
            flags_for_step["init_checkpoint"] = checkpoint
        else:
            # Step 0 is the seeded initialisation: one step at learning rate 0 leaves it unchanged and saves it.
            flags_for_step.update(do_train=True, num_train_steps=1, learning_rate=0.0, num_warmup_steps=0,
                                  save_checkpoints_steps=1, random_seed=12345)
        commands.run(commands.python("run_pretraining.py", **flags_for_step), eval_dir + ".log")
        with open(os.path.join(eval_dir, "eval_results.txt"), encoding="utf-8") as f:
            results = dict(line.strip().split(" = ") for line in f if " = " in line)
        curve.append((label, step, float(results["masked_lm_accuracy"]), float(results["masked_lm_loss"])))

    sample = os.path.join(out, "extract_features_input.txt")
    with open(sample, "w", encoding="utf-8") as f:
        f.write("Return the number of items in a container.\n")
        f.write("Open the file and read its lines. ||| The file is closed at exit.\n")
    commands.run(commands.python(
        "extract_features.py", input_file=sample, output_file=os.path.join(out, "features.jsonl"),
        vocab_file=data["vocab"], bert_config_file=os.path.join(model_dir, "bert_config.json"),
        init_checkpoint=os.path.join(model_dir, "model.ckpt-%d" % FLAGS.num_train_steps),
        layers="-1,-2", max_seq_length=32, batch_size=8), os.path.join(out, "extract_features.log"))
    token, share = most_frequent_masked_token(records["eval"], MAX_PREDICTIONS)
    with open(os.path.join(frozen_dir, "parameters.json"), encoding="utf-8") as f:
        trainable_share = json.load(f)["trainable_share"]
    return dict(curve=curve, chance=1 / len(vocab), most_frequent=(vocab[token], share),
                trainable_share=trainable_share, model_dir=model_dir, frozen_dir=frozen_dir)


def print_pretraining(result):
    word, share = result["most_frequent"]
    print("\n=== Pre-training from scratch: held-out masked-LM accuracy ===")
    print("  %-14s %8s  %10s  %14s" % ("model", "step", "accuracy", "masked_lm_loss"))
    for label, step, accuracy, loss in result["curve"]:
        print("  %-14s %8d  %10.4f  %14.4f" % (label, step, accuracy, loss))
    print("  %-14s %8s  %10.4f   (1 / vocabulary size)" % ("chance", "", result["chance"]))
    print("  %-14s %8s  %10.4f   (always %r, the most frequent masked token)" % ("unigram", "", share, word))
    verdicts = report.against_unigram(result["curve"], share)
    print("  What it proves: pre-training, evaluation, freezing (freeze=%s trains %.0f%% of the parameters; its "
          "checkpoint stores the frozen ones as a seed) and feature extraction run end to end. After %d steps: %s. "
          "One seed of a 2-layer model on 0.4 MB of text; the findings are in docs/results/." % (
              FLAGS.freeze_preset, 100 * result["trainable_share"], FLAGS.num_train_steps, "; ".join(verdicts)))


def main(_):
    stages = commands.Stages()
    dtype = FLAGS.dtype or compute_dtype.preferred_dtype()
    print("Training dtype: %s%s" % (dtype, "" if FLAGS.dtype else " (this CPU's faster one)"))
    out = FLAGS.output_dir
    data_dir = os.path.join(out, "data")
    commands.fresh_output_dir(out, keep=("data",))
    with stages.stage("sample data and vocabulary"):
        data = make_data(data_dir)
    with stages.stage("pre-training from scratch"):
        result = pretrain(out, data, dtype)
    table_dir = os.path.join(out, "table2b")
    if FLAGS.reproduce_table:
        with stages.stage("reproduce_paper_tables.py --experiment=table2b --scale=tiny"):
            commands.run(commands.python(
                "reproduce_paper_tables.py", experiment="table2b", scale="tiny", output_dir=table_dir,
                corpus=data["corpus"], mnli_dir=data["mnli"], squad_dir=data["squad"], vocab_file=data["vocab"],
                dtype=dtype), os.path.join(out, "reproduce_paper_tables.log"))
    print_pretraining(result)
    if FLAGS.reproduce_table:
        with open(os.path.join(table_dir, "results.md"), encoding="utf-8") as f:
            print("\n=== reproduce_paper_tables.py --experiment=table2b --scale=tiny: results.md ===\n"
                  + f.read().rstrip())
        print("  What it proves: a paper table runs from plan to results.md and plot (%s) with the head-rank probe "
              "of every row; its rank column shows each head size's bound. The fine-tuning columns are not evidence: "
              "models trained for seconds predict about one class. The findings are in docs/results/README.md."
              % os.path.join(table_dir, "table2b.png"))
    times = stages.write(out)
    print("\nOutputs in %s (logs included); stage times in %s." % (out, times))
    print("Finished in %.0f s." % stages.total())


if __name__ == "__main__":
    app.run(main)
