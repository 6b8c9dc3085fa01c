"""Pre-training step throughput and peak memory: run_pretraining vs Model Garden and PyTorch.

Contenders, each (contender, dtype) in its own child process, taking turns (harness.py):
  ours      the step run_pretraining.py runs: the Task of `modeling.pretraining.pretraining_task`
            (BertPretrainingModel, the original losses) with an in-memory dataset, built by
            `training.trainer.Trainer` under a OneDeviceStrategy, optimizer and freezing plan as in
            `trainer.train`, and the loop of `Trainer.make_loop()`: `loop(iterator, tf.constant(n))`
            runs n steps in one tf.function call, as with --iterations_per_loop=n;
  ours-xla  the same with TrainingOptions(jit_compile=True) (--jit_compile): each step one XLA program;
  baseline  a plain Model Garden step at the same shapes: `networks.BertEncoderV2` + `layers.MaskedLM`
            (tied to the word embeddings) + a Dense(2) next-sentence head on the pooled output, the
            same losses, tf_keras AdamW (weight decay 0.01 without LayerNorm/bias, epsilon 1e-6, global
            clipnorm 1.0, warm-up + linear decay) and n steps per call of a tf.function over tf.range;
  pytorch   Hugging Face's BertForPreTraining with torch.compile (torch_peers.pretraining_step), given
            an interpreter with torch and transformers (--torch_python); skipped with a note otherwise.

Shapes (--shape):
  default        4 layers, hidden 512, 8 heads, intermediate 2048, vocab 30522, sequence 128, 20
                 predictions, batch 32, 2 steps per round (the shape flags' defaults);
  table2b_small  Table 2B's standard-head-size row (dp64: d_p = d/h) at reproduce_paper_tables.py
                 --scale=small (studies/bert_tables/scales.py): 2 layers, hidden 128, 8 heads (d/h =
                 16; Hugging Face's BertForPreTraining takes no other head size), intermediate 1024,
                 vocab 30522, sequence 32, 5 predictions, batch 64; 10 steps per round.
Shape flags given on the command line win in both.

All read the same random batches (child.pretraining_batches). One round is one loop call;
--warmup_rounds untimed rounds, then --timed_rounds timed ones. The figure is sequences/s of the
median round; ours/X is the paired ratio. The last line takes the faster (median) of ours and
ours-xla, named, against the peer measured (baseline, pytorch) it is slowest against in each dtype,
by the paired ratio.

Usage, from the repository root:
  .venv/bin/python benchmarks/pretraining_step_benchmark.py [--shape=default|table2b_small]
      [--torch_python=/path/to/python] [--quick]
"""

import dataclasses
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402

FLAGS = flags.FLAGS
harness.define_bert_shape_flags()
harness.define_torch_python_flag()
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per sequence.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("steps_per_round", 2, "Training steps per timed loop call (--iterations_per_loop). 2 keeps "
                     "the default run near ~8 min on 2 cores (a float32 step takes ~3-5 s there); "
                     "--shape=table2b_small sets 10 unless given.")
flags.DEFINE_enum("shape", "default", ["default", "table2b_small"],
                  "default: the shape flags as given (4 layers, hidden 512 by default); table2b_small: Table 2B's "
                  "standard-head-size row at --scale=small (2 layers, hidden 128, 8 heads, intermediate 1024, "
                  "sequence 32, 5 predictions, batch 64); shape flags given on the command line win.")
flags.DEFINE_integer("warmup_rounds", 2, "Untimed rounds per contender (>= 1; the first one traces the loop).")
flags.DEFINE_integer("timed_rounds", 9, "Timed rounds per contender (enough for a median on a shared host).")
flags.DEFINE_list("train_dtypes", ["float32", "bfloat16"], "--dtype values of run_pretraining.")

OURS, OURS_XLA, BASELINE, PYTORCH = "ours", "ours-xla", "baseline", "pytorch"
CONTENDERS = (OURS, OURS_XLA, BASELINE)
_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length",
                "max_predictions_per_seq", "train_batch_size", "steps_per_round", "model_seed")
_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000, seq_length=16,
              max_predictions_per_seq=4, train_batch_size=4, steps_per_round=2, warmup_rounds=1, timed_rounds=1)
_LEARNING_RATE, _NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS = 1e-4, 100000, 10000


def table2b_small_shape():
    """The shape flags of --shape=table2b_small, from the small scale of reproduce_paper_tables.py."""
    from studies.bert_tables import experiments, scales

    scale = scales.SMALL
    # The standard-head-size row (d_p = d/h): Hugging Face's BERT takes no other.
    row = next(row for row in experiments.TABLE2B.rows if row.head_size * row.num_heads == row.hidden_size)
    config = scale.config(row, vocab_size=30522)
    assert config.attention_head_size * config.num_attention_heads == config.hidden_size, config
    stage = scale.stages[0]
    return dict(num_layers=config.num_hidden_layers, hidden_size=config.hidden_size,
                num_heads=config.num_attention_heads, intermediate_size=config.intermediate_size,
                vocab_size=config.vocab_size, seq_length=stage.max_seq_length,
                max_predictions_per_seq=stage.max_predictions_per_seq, train_batch_size=scale.train_batch_size,
                steps_per_round=10)


def _settings():
    """The flag values in effect (with --shape and --quick applied) as a dict: the children's spec."""
    settings = {name: FLAGS[name].value for name in _SHAPE_FLAGS + ("warmup_rounds", "timed_rounds")}
    if FLAGS.shape == "table2b_small":
        settings.update({name: value for name, value in table2b_small_shape().items() if not FLAGS[name].present})
    if FLAGS.quick:
        settings.update(_QUICK)
    return settings


def make_dataset(s):
    """An endless tf.data.Dataset of the random batches."""
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(child.pretraining_batches(
        s["model_seed"], s["train_batch_size"], s["seq_length"], s["max_predictions_per_seq"],
        s["vocab_size"])).repeat().prefetch(1)


def build_ours(s, dtype, jit_compile=False):
    """run_pretraining's step (with jit_compile: --jit_compile): returns (loop, model, dataset)."""
    from modeling import pretraining
    from modeling.family import FAMILY
    from training import distribution
    from training import trainer as trainer_lib
    from training.training_options import Schedule, TrainingOptions

    dataset = make_dataset(s)
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        # The real task, with an in-memory dataset instead of TFRecord files.
        task = dataclasses.replace(pretraining.pretraining_task(None, config, []),
                                   make_dataset=lambda batch_size, context: dataset)
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=s["train_batch_size"], learning_rate=_LEARNING_RATE,
            save_checkpoints_steps=_NUM_TRAIN_STEPS, iterations_per_loop=s["steps_per_round"],
            random_seed=s["model_seed"], dtype=dtype, jit_compile=jit_compile)
        trainer = trainer_lib.Trainer(options, Schedule(_NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS),
                                      distribution.get_strategy(options), task, FAMILY.freezer(options, config))
        loop = trainer.make_loop()
    return loop, trainer.model, task.make_dataset(s["train_batch_size"], None)


def build_baseline(s, dtype):
    """A plain Model Garden step at the same shapes: returns (loop, model, dataset)."""
    import tensorflow as tf
    import tf_keras
    from official.nlp import optimization as garden_optimization
    from official.nlp.modeling import layers

    dataset = make_dataset(s)
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = harness.garden_encoder(config, initializer)
        word_ids, mask, type_ids = (tf_keras.Input([s["seq_length"]], dtype=tf.int32) for _ in range(3))
        positions = tf_keras.Input([s["max_predictions_per_seq"]], dtype=tf.int32)
        # The call builds the encoder: the MaskedLM needs its embedding table.
        encoded = encoder(dict(input_word_ids=word_ids, input_mask=mask, input_type_ids=type_ids))
        masked_lm = layers.MaskedLM(embedding_table=encoder.get_embedding_table(),
                                    activation=lambda x: tf_keras.activations.gelu(x, approximate=True),
                                    initializer=initializer, output="logits")
        next_sentence = tf_keras.layers.Dense(2, kernel_initializer=initializer)
        model = tf_keras.Model(
            inputs=dict(input_word_ids=word_ids, input_mask=mask, input_type_ids=type_ids,
                        masked_lm_positions=positions),
            outputs=dict(masked_lm_logits=masked_lm(encoded["sequence_output"], masked_positions=positions),
                         next_sentence_logits=next_sentence(encoded["pooled_output"])))

    schedule = garden_optimization.WarmUp(
        initial_learning_rate=_LEARNING_RATE, warmup_steps=_NUM_WARMUP_STEPS,
        decay_schedule_fn=tf_keras.optimizers.schedules.PolynomialDecay(
            _LEARNING_RATE, _NUM_TRAIN_STEPS, end_learning_rate=0.0, power=1.0))
    optimizer = tf_keras.optimizers.AdamW(learning_rate=schedule, weight_decay=0.01, beta_1=0.9, beta_2=0.999,
                                          epsilon=1e-6, global_clipnorm=1.0)
    optimizer.exclude_from_weight_decay(var_names=["LayerNorm", "layer_norm", "bias"])
    variables = model.trainable_variables
    optimizer.build(variables)

    def losses_of(outputs, batch):
        weights = tf.reshape(batch["masked_lm_weights"], [-1])
        mlm = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(batch["masked_lm_ids"], [-1]),
            logits=tf.reshape(tf.cast(outputs["masked_lm_logits"], tf.float32), [-1, s["vocab_size"]]))
        mlm_loss = tf.reduce_sum(weights * mlm) / (tf.reduce_sum(weights) + 1e-5)
        nsp_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(batch["next_sentence_labels"], [-1]),
            logits=tf.cast(outputs["next_sentence_logits"], tf.float32)))
        return tf.stack([mlm_loss + nsp_loss, mlm_loss, nsp_loss])

    @tf.function
    def loop(iterator, num_steps):
        total = tf.zeros([3])
        for _ in tf.range(num_steps):
            batch = next(iterator)
            inputs = dict(input_word_ids=batch["input_ids"], input_mask=batch["input_mask"],
                          input_type_ids=batch["segment_ids"], masked_lm_positions=batch["masked_lm_positions"])
            with tf.GradientTape() as tape:
                losses = losses_of(model(inputs, training=True), batch)
                loss = losses[0]
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            total += losses
        return total / tf.cast(num_steps, tf.float32)

    return loop, model, dataset


def build_contender(contender, dtype, s):
    """In a child process: (run one loop call -> its mean loss, parameters)."""
    import tensorflow as tf

    if contender == BASELINE:
        loop, model, dataset = build_baseline(s, dtype)
    else:
        loop, model, dataset = build_ours(s, dtype, jit_compile=contender == OURS_XLA)
    iterator, num_steps = iter(dataset), tf.constant(s["steps_per_round"])
    return (lambda: loop(iterator, num_steps).numpy()[0]), model.count_params()  # .numpy() waits.


def child_command(s, contender, dtype, torch_python=None):
    """The command line of one contender's child process."""
    if contender == PYTORCH:
        return harness.peer_command(torch_python, "pretraining_step", dtype, s)
    return harness.child_command(__file__, contender, dtype, s)


def contenders(torch_python):
    """The contenders' names: ours, ours-xla and the baseline, and the PyTorch peer given its interpreter."""
    return CONTENDERS + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in turns: {name: results} (harness.take_turns)."""
    commands = {name: child_command(s, name, dtype, torch_python) for name in contenders(torch_python)}
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"])


def best_ours_ratio(results, names):
    """(the faster of ours and ours-xla, the peer it is slowest against, its paired ratio to that peer)."""
    ours = harness.fastest(results, (OURS, OURS_XLA))
    ratios = {name: harness.paired_ratio(results[name]["seconds"], results[ours]["seconds"])
              for name in names if name not in (OURS, OURS_XLA)}
    peer = min(ratios, key=ratios.get)
    return ours, peer, ratios[peer]


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.bench_child:
        return harness.serve_child(build_contender)
    harness.check_rounds(warmup_rounds=s["warmup_rounds"], timed_rounds=s["timed_rounds"],
                         steps_per_round=s["steps_per_round"])
    harness.check_among("train_dtypes", FLAGS.train_dtypes, ("float32", "bfloat16"))  # float16: loss scaling
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
    rows, ratios = [], {}
    for dtype in FLAGS.train_dtypes:
        start = time.perf_counter()
        results = measure(s, dtype, torch_python)
        print(harness.progress_line(dtype, time.perf_counter() - start, results), flush=True)
        if len({results[name]["params"] for name in CONTENDERS}) > 1:
            print("WARNING: ours, ours-xla and the baseline have different parameter counts.")
        rows.append((dtype, results, names, s["train_batch_size"] * s["steps_per_round"]))
        ratios[dtype] = best_ours_ratio(results, names)
    harness.throughput_table("dtype", rows, OURS)
    print()
    print("the better of ours and ours-xla against the best peer measured (%s): %s" % (
        ", ".join(names[2:]), "; ".join("%s: %s/%s %.3f" % ((dtype,) + found) for dtype, found in ratios.items())))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
