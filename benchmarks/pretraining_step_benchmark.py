"""Pre-training step throughput and peak memory: run_pretraining vs Model Garden and PyTorch.

"ours" is the step run_pretraining.py runs: the Task of
`modeling.pretraining.pretraining_task` (BertPretrainingModel, the original
losses) with an in-memory dataset, built by `training.trainer.Trainer` under a
OneDeviceStrategy, optimizer and freezing plan as in `trainer.train`, and the
loop of `Trainer.make_loop()`: `loop(iterator, tf.constant(n))` runs n steps in
one tf.function call, as with --iterations_per_loop=n. "ours-xla" is the same
with TrainingOptions(jit_compile=True) (--jit_compile): each step one XLA
program.

"baseline" is a plain Model Garden step at the same shapes:
`networks.BertEncoderV2` + `layers.MaskedLM` (tied to the word embeddings) +
a Dense(2) next-sentence head on the pooled output, the same losses (weighted
masked-LM cross entropy + next-sentence cross entropy), tf_keras AdamW
(weight decay 0.01 without LayerNorm/bias, epsilon 1e-6, global clipnorm 1.0,
warm-up + linear decay) and n steps per call of a tf.function over tf.range.

"pytorch", when an interpreter with torch and transformers is at hand
(`--torch_python`), is Hugging Face's BertForPreTraining with torch.compile
(benchmarks/torch_pretraining_step.py); skipped with a note otherwise.

Shapes (--shape):
  default        4 layers, hidden 512, 8 heads, intermediate 2048, vocab 30522,
                 sequence 128, 20 predictions, batch 32, 2 steps per round (the
                 shape flags' defaults; each flag given on the command line wins);
  table2b_small  Table 2B's standard-head-size row (dp64: d_p = d/h) at
                 reproduce_paper_tables.py --scale=small
                 (studies/bert_tables/scales.py): 2 layers, hidden 128, 8 heads
                 (d/h = 16; Hugging Face's BertForPreTraining takes no other head
                 size), intermediate 1024, vocab 30522, sequence 32, 5 predictions,
                 batch 64; 10 steps per round. Shape flags given on the command line
                 win here too.

All read the same random batches in the pre-training schema
(`pretraining_batches`). Each (contender, dtype) runs in its own child process
(`--contender=ours|ours-xla|baseline --contender_dtype=...`, or the PyTorch
script), so that its peak memory (VmHWM, the RSS high-water mark) is its own.
The children of a dtype are started together, then driven in turns, one round
(one loop call) each: ours, ours-xla, baseline, pytorch, ours, ..., so that
load drift on a shared machine affects all alike; a child waits on its stdin,
idle, while another runs. --warmup_rounds untimed rounds first, then
--timed_rounds timed ones. The figure is sequences/s of the median round; the
paired ratio ours/X is the median over rounds of X's seconds / ours' seconds.
The last line takes the faster (median) of ours and ours-xla, named, against
the best peer measured (baseline, pytorch) in each dtype, by the paired ratio.

Usage, from the repository root:
  .venv/bin/python benchmarks/pretraining_step_benchmark.py [--shape=default|table2b_small]
      [--torch_python=/path/to/python] [--quick]
"""

import os
import statistics
import sys
import tempfile
import time

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from training import onednn  # noqa: E402

onednn.enable()  # before TensorFlow loads, as the entry points do

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import benchmark_utils, child_processes, child_protocol, pretraining_batches  # noqa: E402

FLAGS = flags.FLAGS


benchmark_utils.define_bert_shape_flags()
benchmark_utils.define_torch_python_flag()
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per sequence.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("steps_per_round", 2, "Training steps per timed loop call "
                     "(--iterations_per_loop). 2 keeps the default run near ~8 min "
                     "on 2 cores (a float32 step takes ~3-5 s there); --shape=table2b_small "
                     "sets 10 unless given.")
flags.DEFINE_enum("shape", "default", ["default", "table2b_small"],
                  "default: the shape flags as given (4 layers, hidden 512 by default); "
                  "table2b_small: Table 2B's standard-head-size row at --scale=small (2 layers, "
                  "hidden 128, 8 heads, intermediate 1024, sequence 32, 5 predictions, batch 64); "
                  "shape flags given on the command line win.")
flags.DEFINE_integer("warmup_rounds", 2, "Untimed rounds per contender (>= 1; the "
                     "first one traces the loop).")
flags.DEFINE_integer("timed_rounds", 9, "Timed rounds per contender (enough for a median on a shared "
                     "host).")
flags.DEFINE_list("train_dtypes", ["float32", "bfloat16"], "--dtype values of run_pretraining.")
# Internal: the child process mode.
flags.DEFINE_enum("contender", None, ["ours", "ours-xla", "baseline"],
                  "Internal: run one contender as a child process driven on stdin.")
flags.DEFINE_string("contender_dtype", "float32", "Internal: the child's dtype.")

_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128,
              vocab_size=1000, seq_length=16, max_predictions_per_seq=4, train_batch_size=4,
              steps_per_round=2, warmup_rounds=1, timed_rounds=1)

OURS = "ours"
OURS_XLA = "ours-xla"
BASELINE = "baseline"
PYTORCH = "pytorch"
CONTENDERS = (OURS, OURS_XLA, BASELINE)
_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size",
                "seq_length", "max_predictions_per_seq", "train_batch_size", "steps_per_round", "model_seed")
_LEARNING_RATE = 1e-4
_NUM_TRAIN_STEPS = 100000
_NUM_WARMUP_STEPS = 10000


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
                max_predictions_per_seq=stage.max_predictions_per_seq,
                train_batch_size=scale.train_batch_size, steps_per_round=10)


def _settings():
    """The flag values in effect (with --shape and --quick applied) as a dict."""
    names = list(_SHAPE_FLAGS) + ["warmup_rounds", "timed_rounds"]
    settings = {name: FLAGS[name].value for name in names}
    if FLAGS.shape == "table2b_small":
        settings.update({name: value for name, value in table2b_small_shape().items()
                         if not FLAGS[name].present})
    if FLAGS.quick:
        settings.update(_QUICK)
    return settings


def make_dataset(s):
    """An endless tf.data.Dataset of random batches in the pre-training schema."""
    import tensorflow as tf

    arrays = pretraining_batches.make_batches(
        s["model_seed"], s["train_batch_size"], s["seq_length"], s["max_predictions_per_seq"],
        s["vocab_size"])
    return tf.data.Dataset.from_tensor_slices(arrays).repeat().prefetch(1)


def build_ours(s, dtype, jit_compile=False):
    """run_pretraining's step (with jit_compile: --jit_compile): returns (loop, model, dataset)."""
    import dataclasses

    from training import distribution
    from modeling import pretraining
    from modeling.family import FAMILY
    from training import trainer as trainer_lib
    from training.training_options import Schedule, TrainingOptions

    dataset = make_dataset(s)
    with benchmark_utils.dtype_policy(dtype):
        config = benchmark_utils.bert_config(s)
        # The real task, with an in-memory dataset instead of TFRecord files.
        task = dataclasses.replace(
            pretraining.pretraining_task(None, config, []),
            make_dataset=lambda batch_size, context: dataset,
        )
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=s["train_batch_size"],
            learning_rate=_LEARNING_RATE, save_checkpoints_steps=_NUM_TRAIN_STEPS,
            iterations_per_loop=s["steps_per_round"], random_seed=s["model_seed"], dtype=dtype,
            jit_compile=jit_compile,
        )
        trainer = trainer_lib.Trainer(
            options, Schedule(_NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS),
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
    with benchmark_utils.dtype_policy(dtype):
        config = benchmark_utils.bert_config(s)
        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = benchmark_utils.garden_encoder(config, initializer)
        word_ids = tf_keras.Input([s["seq_length"]], dtype=tf.int32)
        mask = tf_keras.Input([s["seq_length"]], dtype=tf.int32)
        type_ids = tf_keras.Input([s["seq_length"]], dtype=tf.int32)
        positions = tf_keras.Input([s["max_predictions_per_seq"]], dtype=tf.int32)
        # The call builds the encoder: the MaskedLM needs its embedding table.
        encoded = encoder(dict(input_word_ids=word_ids, input_mask=mask, input_type_ids=type_ids))
        masked_lm = layers.MaskedLM(
            embedding_table=encoder.get_embedding_table(),
            activation=lambda x: tf_keras.activations.gelu(x, approximate=True),
            initializer=initializer, output="logits")
        next_sentence = tf_keras.layers.Dense(2, kernel_initializer=initializer)

        model = tf_keras.Model(
            inputs=dict(input_word_ids=word_ids, input_mask=mask, input_type_ids=type_ids,
                        masked_lm_positions=positions),
            outputs=dict(
                masked_lm_logits=masked_lm(encoded["sequence_output"], masked_positions=positions),
                next_sentence_logits=next_sentence(encoded["pooled_output"])))

    schedule = garden_optimization.WarmUp(
        initial_learning_rate=_LEARNING_RATE,
        decay_schedule_fn=tf_keras.optimizers.schedules.PolynomialDecay(
            _LEARNING_RATE, _NUM_TRAIN_STEPS, end_learning_rate=0.0, power=1.0),
        warmup_steps=_NUM_WARMUP_STEPS)
    optimizer = tf_keras.optimizers.AdamW(
        learning_rate=schedule, weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        global_clipnorm=1.0)
    optimizer.exclude_from_weight_decay(var_names=["LayerNorm", "layer_norm", "bias"])
    variables = model.trainable_variables
    optimizer.build(variables)

    def losses_of(outputs, batch):
        mlm_logits = tf.cast(outputs["masked_lm_logits"], tf.float32)
        weights = tf.reshape(batch["masked_lm_weights"], [-1])
        mlm = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(batch["masked_lm_ids"], [-1]),
            logits=tf.reshape(mlm_logits, [-1, s["vocab_size"]]))
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
                          input_type_ids=batch["segment_ids"],
                          masked_lm_positions=batch["masked_lm_positions"])
            with tf.GradientTape() as tape:
                losses = losses_of(model(inputs, training=True), batch)
                loss = losses[0]
            gradients = tape.gradient(loss, variables)
            optimizer.apply_gradients(zip(gradients, variables))
            total += losses
        return total / tf.cast(num_steps, tf.float32)

    return loop, model, dataset


def run_child(s, contender, dtype):
    """Builds one contender, then runs one loop call per "run" line on stdin."""
    import tensorflow as tf

    start = time.perf_counter()
    if contender == BASELINE:
        loop, model, dataset = build_baseline(s, dtype)
    else:
        loop, model, dataset = build_ours(s, dtype, jit_compile=contender == OURS_XLA)
    iterator = iter(dataset)
    num_steps = tf.constant(s["steps_per_round"])

    def run_round():
        seconds, losses = child_protocol.timed(lambda: loop(iterator, num_steps).numpy())  # .numpy() waits.
        return seconds, losses[0]

    child_protocol.serve(run_round, model.count_params(), time.perf_counter() - start)
    return 0


def child_command(s, contender, dtype, torch_python=None):
    """The command line of one contender's child process."""
    shapes = ["--%s=%s" % (name, s[name]) for name in _SHAPE_FLAGS]
    if contender == PYTORCH:
        return [torch_python, os.path.join(_REPO_ROOT, "benchmarks", "torch_pretraining_step.py"),
                "--dtype=" + dtype] + shapes
    return [sys.executable, os.path.abspath(__file__), "--contender=" + contender,
            "--contender_dtype=" + dtype] + shapes


def contenders(torch_python):
    """The contenders' names: ours, ours-xla and the baseline, and the PyTorch peer given its interpreter."""
    return CONTENDERS + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in turns; returns {name: results} (child_processes)."""
    commands = {name: child_command(s, name, dtype, torch_python) for name in contenders(torch_python)}
    return child_processes.take_turns(commands, s["warmup_rounds"], s["timed_rounds"], _REPO_ROOT)


def best_ours_ratio(results, names):
    """(the faster of ours and ours-xla, the peer it is slowest against, its paired ratio to that peer)."""
    ours = min((OURS, OURS_XLA), key=lambda name: statistics.median(results[name]["seconds"]))
    peers = [name for name in names if name not in (OURS, OURS_XLA)]
    paired = child_processes.paired_ratios(results, [ours] + peers, ours)
    peer = min(peers, key=lambda name: paired[name])
    return ours, peer, paired[peer]


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.contender:
        return run_child(s, FLAGS.contender, FLAGS.contender_dtype)

    import tensorflow as tf

    if s["warmup_rounds"] < 1 or s["timed_rounds"] < 1 or s["steps_per_round"] < 1:
        raise app.UsageError("--warmup_rounds, --timed_rounds and --steps_per_round must be >= 1.")
    if not set(FLAGS.train_dtypes) <= {"float32", "bfloat16"}:
        # float16 would need loss scaling in the baseline.
        raise app.UsageError("--train_dtypes must be among float32, bfloat16.")
    print("Pre-training step benchmark: run_pretraining's loop (%s, and %s with --jit_compile) vs "
          "Model Garden BertEncoderV2 + MaskedLM + NSP head (%s)" % (OURS, OURS_XLA, BASELINE))
    for line in benchmark_utils.machine_lines(tf.__version__):
        print(line)
    print("shape %s%s: " % (FLAGS.shape, " [--quick: tiny]" if FLAGS.quick else "")
          + "layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d "
          "intermediate=%(intermediate_size)d vocab=%(vocab_size)d seq=%(seq_length)d "
          "max_predictions=%(max_predictions_per_seq)d batch=%(train_batch_size)d" % s)
    torch_python, why_not = benchmark_utils.torch_interpreter(FLAGS.torch_python)
    names = contenders(torch_python)
    print("timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + "
          "%(timed_rounds)d timed rounds of %(steps_per_round)d steps (one loop call) each, "
          "taking turns" % s + (" [--quick: figures are meaningless]" if FLAGS.quick else ""))
    print("pytorch: " + ("Hugging Face BertForPreTraining + torch.compile, run by %s" % torch_python
                         if torch_python else "not measured (%s)" % why_not))

    begin = time.perf_counter()
    rows, ratios = [], {}
    for dtype in FLAGS.train_dtypes:
        start = time.perf_counter()
        results = measure(s, dtype, torch_python)
        print("  %s: timed in %.0f s; parameters %s; model build %s; mean loss of the timed "
              "rounds %s" % (
                  dtype, time.perf_counter() - start,
                  ", ".join("%s %d" % (name, results[name]["params"]) for name in names),
                  ", ".join("%s %.0f s" % (name, results[name]["build_seconds"]) for name in names),
                  ", ".join("%s %.3f" % (name, statistics.mean(results[name]["values"]))
                            for name in names)))
        if len({results[name]["params"] for name in CONTENDERS}) > 1:
            print("WARNING: ours, ours-xla and the baseline have different parameter counts.")
        sequences = s["train_batch_size"] * s["steps_per_round"]
        rows.append(child_processes.table_row(dtype, results, names, OURS, sequences))
        ratios[dtype] = best_ours_ratio(results, names)

    child_processes.print_table("dtype", rows, names, OURS)
    print()
    peers = [name for name in names if name not in (OURS, OURS_XLA)]
    print("the better of ours and ours-xla against the best peer measured (%s): %s"
          % (", ".join(peers), "; ".join(
              "%s: %s/%s %.3f" % (dtype, ours, peer, ratio) for dtype, (ours, peer, ratio) in ratios.items())))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
