"""Pre-training step throughput and peak memory: run_pretraining's loop vs Model Garden and PyTorch.

Usage, from the repository root:
  .venv/bin/python benchmarks/pretraining_step_benchmark.py [--shape=default|table2b_small]
      [--torch_python=/path/to/python] [--quick]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Pre-training step".
"""

import functools
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app, flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from official.nlp import optimization as garden_optimization  # noqa: E402
from official.nlp.modeling import layers  # noqa: E402

from modeling import pretraining  # noqa: E402
from modeling.family import FAMILY  # noqa: E402
from studies.bert_tables import experiments, scales  # noqa: E402
from training import distribution  # noqa: E402
from training.training_options import Schedule, TrainingOptions  # noqa: E402

FLAGS = flags.FLAGS
OURS, OURS_XLA, BASELINE, PYTORCH = "ours", "ours-xla", "baseline", harness.PYTORCH

harness.define_bert_shape_flags()
harness.define_torch_python_flag()
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per sequence.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("steps_per_round", 2, "Training steps per timed loop call (--iterations_per_loop; 2: the "
                     "default run takes ~8 min on 2 cores); --shape=table2b_small sets 10 unless given.", lower_bound=1)
flags.DEFINE_enum("shape", "default", ["default", "table2b_small"], "default: the shape flags as given; table2b_small: "
                  "Table 2B's standard-head-size row at --scale=small (shape flags given on the command line win).")
flags.DEFINE_integer("warmup_rounds", 2, "Untimed rounds per contender (the first traces the loop).", lower_bound=1)
flags.DEFINE_integer("timed_rounds", 9, "Timed rounds per contender.", lower_bound=1)
# float16 would need loss scaling in the baseline.
harness.define_list_flag("train_dtypes", harness.DTYPES, "--dtype values of run_pretraining.")

_FLAGS = ("max_predictions_per_seq", "train_batch_size", "steps_per_round", "warmup_rounds", "timed_rounds")
_QUICK = dict(max_predictions_per_seq=4, train_batch_size=4, steps_per_round=2, warmup_rounds=1, timed_rounds=1)
_LEARNING_RATE, _NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS = 1e-4, 100000, 10000


def table2b_small_shape():
    """The shape flags of --shape=table2b_small: the standard-head-size row (d_p = d/h, as Hugging Face's BERT)."""
    scale = scales.SMALL
    row = next(row for row in experiments.TABLE2B.rows if row.head_size * row.num_heads == row.hidden_size)
    config, stage = scale.config(row, vocab_size=30522), scale.stages[0]
    assert config.attention_head_size * config.num_attention_heads == config.hidden_size, config
    return dict(num_layers=config.num_hidden_layers, hidden_size=config.hidden_size,
                num_heads=config.num_attention_heads, intermediate_size=config.intermediate_size,
                vocab_size=config.vocab_size, seq_length=stage.max_seq_length,
                max_predictions_per_seq=stage.max_predictions_per_seq, train_batch_size=scale.train_batch_size,
                steps_per_round=10)


def _settings():
    """The flag values in effect (with --shape and --quick applied) as a dict: the children's spec."""
    shape = table2b_small_shape() if FLAGS.shape == "table2b_small" else {}
    given = {name: value for name, value in shape.items() if not FLAGS[name].present}  # the command line's win
    return harness.bert_settings(_FLAGS, _QUICK, **given)


def make_dataset(s):
    """An endless tf.data.Dataset of the random batches (child.pretraining_batches)."""
    return tf.data.Dataset.from_tensor_slices(child.pretraining_batches(
        s["model_seed"], s["train_batch_size"], s["seq_length"], s["max_predictions_per_seq"],
        s["vocab_size"])).repeat().prefetch(1)


def build_ours(s, dtype, jit_compile):
    """run_pretraining's step (jit_compile: --jit_compile) on an in-memory dataset: (run one round, parameters)."""
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=s["train_batch_size"], learning_rate=_LEARNING_RATE,
            save_checkpoints_steps=_NUM_TRAIN_STEPS, iterations_per_loop=s["steps_per_round"],
            random_seed=s["model_seed"], dtype=dtype, jit_compile=jit_compile)
        return harness.trainer_round(options, Schedule(_NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS),
                                     distribution.get_strategy(options), pretraining.pretraining_task(None, config, []),
                                     FAMILY.freezer(options, config), make_dataset(s))


def build_baseline(s, dtype):
    """A plain Model Garden step at the same shapes: (run one round, parameters)."""
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = harness.garden_encoder(config, initializer)
        inputs = {name: tf_keras.Input([length], dtype=tf.int32) for name, length in (
            ("input_word_ids", s["seq_length"]), ("input_mask", s["seq_length"]), ("input_type_ids", s["seq_length"]),
            ("masked_lm_positions", s["max_predictions_per_seq"]))}
        # The call builds the encoder: the MaskedLM needs its embedding table.
        encoded = encoder({name: inputs[name] for name in ("input_word_ids", "input_mask", "input_type_ids")})
        masked_lm = layers.MaskedLM(embedding_table=encoder.get_embedding_table(),
                                    activation=lambda x: tf_keras.activations.gelu(x, approximate=True),
                                    initializer=initializer, output="logits")
        model = tf_keras.Model(inputs=inputs, outputs=dict(
            masked_lm_logits=masked_lm(encoded["sequence_output"], masked_positions=inputs["masked_lm_positions"]),
            next_sentence_logits=tf_keras.layers.Dense(2, kernel_initializer=initializer)(encoded["pooled_output"])))

    schedule = garden_optimization.WarmUp(
        initial_learning_rate=_LEARNING_RATE, warmup_steps=_NUM_WARMUP_STEPS,
        decay_schedule_fn=tf_keras.optimizers.schedules.PolynomialDecay(
            _LEARNING_RATE, _NUM_TRAIN_STEPS, end_learning_rate=0.0, power=1.0))
    optimizer = tf_keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.01, beta_1=0.9, beta_2=0.999,
                                          epsilon=1e-6, global_clipnorm=1.0)
    optimizer.exclude_from_weight_decay(var_names=["LayerNorm", "layer_norm", "bias"])

    def loss_of(batch):
        outputs = model(dict(input_word_ids=batch["input_ids"], input_mask=batch["input_mask"],
                             input_type_ids=batch["segment_ids"], masked_lm_positions=batch["masked_lm_positions"]),
                        training=True)
        weights = tf.reshape(batch["masked_lm_weights"], [-1])
        masked_lm = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(batch["masked_lm_ids"], [-1]),
            logits=tf.reshape(tf.cast(outputs["masked_lm_logits"], tf.float32), [-1, s["vocab_size"]]))
        return tf.reduce_sum(weights * masked_lm) / (tf.reduce_sum(weights) + 1e-5) + tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(batch["next_sentence_labels"], [-1]),
                                                           logits=tf.cast(outputs["next_sentence_logits"], tf.float32)))

    return (harness.training_round(loss_of, model.trainable_variables, optimizer, make_dataset(s),
                                   s["steps_per_round"]), model.count_params())


def build_contender(contender, dtype, s):
    """In a child process: (run one loop call -> its mean loss, parameters)."""
    if contender == BASELINE:
        return build_baseline(s, dtype)
    return build_ours(s, dtype, jit_compile=contender == OURS_XLA)


def contenders(torch_python):
    """ours, ours-xla and the baseline, and the PyTorch peer given its interpreter."""
    return (OURS, OURS_XLA, BASELINE) + ((PYTORCH,) if torch_python else ())


def commands(s, dtype, torch_python=None):
    """{name: the command line of its child process} of the contenders (the PyTorch peer given its interpreter)."""
    return harness.contender_commands(__file__, contenders(None), dtype, s, torch_python, "pretraining_step")


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in turns, each in its own process: {name: results} (harness.take_turns)."""
    return harness.take_turns(commands(s, dtype, torch_python), s["warmup_rounds"], s["timed_rounds"])


def run(s, torch_python):
    """Measures and prints the rows, one per dtype, and the table; returns the line of the ratios to print last."""
    names, rows, ratios = contenders(torch_python), [], []
    for dtype in FLAGS.train_dtypes:
        results = harness.run_row(dtype, measure, s, dtype, torch_python, agree=names[:3],
                                  warning="WARNING: ours, ours-xla and the baseline have different parameter counts.")
        rows.append((dtype, results, names, s["train_batch_size"] * s["steps_per_round"]))
        ours = harness.fastest(results, (OURS, OURS_XLA))
        ratio, peer = min((harness.paired_ratio(results[peer]["seconds"], results[ours]["seconds"]), peer)
                          for peer in names[2:])
        ratios.append("%s: %s/%s %.3f" % (dtype, ours, peer, ratio))
    harness.throughput_table("dtype", rows, OURS)
    return ["the better of ours and ours-xla against the best peer measured (%s): %s" % (
        ", ".join(names[2:]), "; ".join(ratios))]


def main(argv):
    del argv  # Unused.
    s = _settings()
    return harness.main_of(
        build_contender, "Pre-training step benchmark: run_pretraining's loop (%s, and %s with --jit_compile) vs "
        "Model Garden BertEncoderV2 + MaskedLM + NSP head (%s)" % (OURS, OURS_XLA, BASELINE),
        ["shape %s%s: " % (FLAGS.shape, " [--quick: tiny]" if FLAGS.quick else "") + harness.bert_shape_text(s)
         + " max_predictions=%(max_predictions_per_seq)d batch=%(train_batch_size)d" % s,
         "timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
         "rounds of %(steps_per_round)d steps (one loop call) each, taking turns" % s + harness.quick_note()],
        "Hugging Face BertForPreTraining + torch.compile", functools.partial(run, s))


if __name__ == "__main__":
    app.run(main)
