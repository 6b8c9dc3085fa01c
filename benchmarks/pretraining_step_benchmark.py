"""Pre-training step throughput and peak memory: run_pretraining's loop vs Model Garden and PyTorch.

Usage, from the repository root:
  .venv/bin/python benchmarks/pretraining_step_benchmark.py [--shape=default|table2b_small]
      [--torch_python=/path/to/python] [--quick]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Pre-training step".
"""

import dataclasses
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from official.nlp import optimization as garden_optimization  # noqa: E402
from official.nlp.modeling import layers  # noqa: E402

from modeling import pretraining  # noqa: E402
from modeling.family import FAMILY  # noqa: E402
from studies.bert_tables import experiments, scales  # noqa: E402
from training import distribution  # noqa: E402
from training import trainer as trainer_lib  # noqa: E402
from training.training_options import Schedule, TrainingOptions  # noqa: E402

FLAGS = flags.FLAGS
OURS, OURS_XLA, BASELINE, PYTORCH = "ours", "ours-xla", "baseline", "pytorch"
DTYPES = ("float32", "bfloat16")  # float16 would need loss scaling in the baseline.

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
flags.DEFINE_list("train_dtypes", list(DTYPES), "--dtype values of run_pretraining.")
flags.register_validator("train_dtypes", lambda values: set(values) <= set(DTYPES),
                         "--train_dtypes must be among float32, bfloat16.")

_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length",
                "max_predictions_per_seq", "train_batch_size", "steps_per_round", "model_seed")
_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000, seq_length=16,
              max_predictions_per_seq=4, train_batch_size=4, steps_per_round=2, warmup_rounds=1, timed_rounds=1)
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
    s = {name: FLAGS[name].value for name in _SHAPE_FLAGS + ("warmup_rounds", "timed_rounds")}
    if FLAGS.shape == "table2b_small":
        s.update({name: value for name, value in table2b_small_shape().items() if not FLAGS[name].present})
    return dict(s, **_QUICK) if FLAGS.quick else s


def make_dataset(s):
    """An endless tf.data.Dataset of the random batches (child.pretraining_batches)."""
    return tf.data.Dataset.from_tensor_slices(child.pretraining_batches(
        s["model_seed"], s["train_batch_size"], s["seq_length"], s["max_predictions_per_seq"],
        s["vocab_size"])).repeat().prefetch(1)


def build_ours(s, dtype, jit_compile):
    """run_pretraining's step (jit_compile: --jit_compile) on an in-memory dataset: returns (loop, model)."""
    dataset = make_dataset(s)
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        task = dataclasses.replace(pretraining.pretraining_task(None, config, []),
                                   make_dataset=lambda batch_size, context: dataset)
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=s["train_batch_size"], learning_rate=_LEARNING_RATE,
            save_checkpoints_steps=_NUM_TRAIN_STEPS, iterations_per_loop=s["steps_per_round"],
            random_seed=s["model_seed"], dtype=dtype, jit_compile=jit_compile)
        trainer = trainer_lib.Trainer(options, Schedule(_NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS),
                                      distribution.get_strategy(options), task, FAMILY.freezer(options, config))
        loop = trainer.make_loop()
    return (lambda iterator, num_steps: loop(iterator, num_steps)[0]), trainer.model


def build_baseline(s, dtype):
    """A plain Model Garden step at the same shapes: returns (loop, model)."""
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
    variables = model.trainable_variables
    optimizer.build(variables)

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

    @tf.function
    def loop(iterator, num_steps):
        total = 0.0
        for _ in tf.range(num_steps):
            with tf.GradientTape() as tape:
                loss = loss_of(next(iterator))
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            total += loss
        return total / tf.cast(num_steps, tf.float32)

    return loop, model


def build_contender(contender, dtype, s):
    """In a child process: (run one loop call -> its mean loss, parameters)."""
    if contender == BASELINE:
        loop, model = build_baseline(s, dtype)
    else:
        loop, model = build_ours(s, dtype, jit_compile=contender == OURS_XLA)
    iterator, num_steps = iter(make_dataset(s)), tf.constant(s["steps_per_round"])
    return (lambda: float(loop(iterator, num_steps))), model.count_params()  # float() waits.


def child_command(s, contender, dtype, torch_python=None):
    """The command line of one contender's child process."""
    if contender == PYTORCH:
        return harness.peer_command(torch_python, "pretraining_step", dtype, s)
    return harness.child_command(__file__, contender, dtype, s)


def contenders(torch_python):
    """ours, ours-xla and the baseline, and the PyTorch peer given its interpreter."""
    return (OURS, OURS_XLA, BASELINE) + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in turns, each in its own process: {name: results} (harness.take_turns)."""
    commands = {name: child_command(s, name, dtype, torch_python) for name in contenders(torch_python)}
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"])


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.bench_child:
        return harness.serve_child(build_contender)
    torch_python, why_not = harness.torch_interpreter(FLAGS.torch_python)
    names = contenders(torch_python)
    harness.print_header(
        "Pre-training step benchmark: run_pretraining's loop (%s, and %s with --jit_compile) vs Model Garden "
        "BertEncoderV2 + MaskedLM + NSP head (%s)" % (OURS, OURS_XLA, BASELINE),
        "shape %s%s: " % (FLAGS.shape, " [--quick: tiny]" if FLAGS.quick else "")
        + "layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d intermediate=%(intermediate_size)d "
        "vocab=%(vocab_size)d seq=%(seq_length)d max_predictions=%(max_predictions_per_seq)d "
        "batch=%(train_batch_size)d" % s,
        "timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
        "rounds of %(steps_per_round)d steps (one loop call) each, taking turns" % s
        + (" [--quick: figures are meaningless]" if FLAGS.quick else ""),
        harness.torch_line(torch_python, why_not, "Hugging Face BertForPreTraining + torch.compile"))
    begin = time.perf_counter()
    rows, ratios = [], []
    for dtype in FLAGS.train_dtypes:
        start = time.perf_counter()
        results = measure(s, dtype, torch_python)
        print(harness.progress_line(dtype, time.perf_counter() - start, results), flush=True)
        if len({results[name]["params"] for name in names[:3]}) > 1:
            print("WARNING: ours, ours-xla and the baseline have different parameter counts.")
        rows.append((dtype, results, names, s["train_batch_size"] * s["steps_per_round"]))
        ours = harness.fastest(results, (OURS, OURS_XLA))
        ratio, peer = min((harness.paired_ratio(results[peer]["seconds"], results[ours]["seconds"]), peer)
                          for peer in names[2:])
        ratios.append("%s: %s/%s %.3f" % (dtype, ours, peer, ratio))
    harness.throughput_table("dtype", rows, OURS)
    print("\nthe better of ours and ours-xla against the best peer measured (%s): %s" % (
        ", ".join(names[2:]), "; ".join(ratios)))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
