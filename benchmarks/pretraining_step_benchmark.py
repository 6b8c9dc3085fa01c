"""Pre-training step throughput and peak memory: run_pretraining vs Model Garden.

"ours" is the step run_pretraining.py runs: the Task of
`training.pretraining.pretraining_task` (BertPretrainingModel, the original
losses) with an in-memory dataset, built by `training.trainer.Trainer` under a
OneDeviceStrategy, optimizer and freezing plan as in `trainer.train`, and the
loop of `Trainer.make_loop()`: `loop(iterator, tf.constant(n))` runs n steps in
one tf.function call, as with --iterations_per_loop=n.

"baseline" is a plain Model Garden step at the same shapes:
`networks.BertEncoderV2` + `layers.MaskedLM` (tied to the word embeddings) +
a Dense(2) next-sentence head on the pooled output, the same losses (weighted
masked-LM cross entropy + next-sentence cross entropy), tf_keras AdamW
(weight decay 0.01 without LayerNorm/bias, epsilon 1e-6, global clipnorm 1.0,
warm-up + linear decay) and n steps per call of a tf.function over tf.range.

"pytorch", when an interpreter with torch and transformers is at hand
(`--torch_python`), is Hugging Face's BertForPreTraining with torch.compile
(benchmarks/torch_pretraining_step.py); skipped with a note otherwise.

All read the same random batches in the pre-training schema
(`pretraining_batches`). Each (contender, dtype) runs in its own child process
(`--contender=ours|baseline --contender_dtype=...`, or the PyTorch script), so
that its peak memory (VmHWM, the RSS high-water mark) is its own. The children
of a dtype are started together, then driven in turns, one round (one loop
call) each: ours, baseline, pytorch, ours, ..., so that load drift on a shared
machine affects all alike; a child waits on its stdin, idle, while another
runs. The figure is sequences/s of the median round; the paired ratio ours/X
is the median over rounds of X's seconds / ours' seconds.

Usage, from the repository root:
  .venv/bin/python benchmarks/pretraining_step_benchmark.py [--quick]
"""

import os
import resource
import statistics
import subprocess
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

from benchmarks import pretraining_batches  # noqa: E402

FLAGS = flags.FLAGS


def _define(define, name, default, help_text, **kwargs):
    """Defines a flag unless another benchmark imported in this process did.

    The shape flags share names, defaults and meaning with model_benchmark.py,
    which benchmarks_test.py imports too.
    """
    if name not in FLAGS:
        define(name, default, help_text, **kwargs)


_define(flags.DEFINE_integer, "num_layers", 4, "Transformer layers.")
_define(flags.DEFINE_integer, "hidden_size", 512, "Hidden size H.")
_define(flags.DEFINE_integer, "num_heads", 8, "Attention heads N.")
_define(flags.DEFINE_integer, "intermediate_size", 2048, "Feed-forward inner size.")
_define(flags.DEFINE_integer, "vocab_size", 30522, "Word embedding rows.")
_define(flags.DEFINE_integer, "seq_length", 128, "Tokens per sequence.")
_define(flags.DEFINE_integer, "model_seed", 1, "Seed of the weights and the batches.")
_define(flags.DEFINE_bool, "quick", False, "Tiny config, 1 warm-up and 1 timed round: "
        "only checks that the script runs; the figures mean nothing.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per sequence.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per step.")
flags.DEFINE_integer("steps_per_round", 2, "Training steps per timed loop call "
                     "(--iterations_per_loop). 2 keeps the default run near ~6 min "
                     "on 2 cores (a float32 step takes ~3-5 s there).")
flags.DEFINE_integer("warmup_rounds", 2, "Untimed rounds per contender (>= 1; the "
                     "first one traces the loop).")
flags.DEFINE_integer("timed_rounds", 9, "Timed rounds per contender (enough for a median on a shared "
                     "host).")
flags.DEFINE_list("train_dtypes", ["float32", "bfloat16"], "--dtype values of run_pretraining.")
flags.DEFINE_string("torch_python", None, "An interpreter with torch and transformers, to run the "
                    "PyTorch peer (benchmarks/torch_pretraining_step.py: Hugging Face BERT with "
                    "torch.compile). Default: this interpreter if it has both; otherwise the peer is "
                    "skipped with a note. 'none' skips it.")

# Internal: the child process mode.
flags.DEFINE_enum("contender", None, ["ours", "baseline"],
                  "Internal: run one contender as a child process driven on stdin.")
flags.DEFINE_string("contender_dtype", "float32", "Internal: the child's dtype.")

_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128,
              vocab_size=1000, seq_length=16, max_predictions_per_seq=4, train_batch_size=4,
              steps_per_round=2, warmup_rounds=1, timed_rounds=1)

OURS = "ours"
BASELINE = "baseline"
PYTORCH = "pytorch"
CONTENDERS = (OURS, BASELINE)
_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size",
                "seq_length", "max_predictions_per_seq", "train_batch_size", "steps_per_round", "model_seed")
# Child -> parent protocol lines start with this; anything else is ignored.
_TAG = "@@bench "
_LEARNING_RATE = 1e-4
_NUM_TRAIN_STEPS = 100000
_NUM_WARMUP_STEPS = 10000


def _settings():
    """The flag values in effect (with --quick applied) as a dict."""
    names = list(_SHAPE_FLAGS) + ["warmup_rounds", "timed_rounds"]
    settings = {name: FLAGS[name].value for name in names}
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


def _bert_config(s):
    import modeling

    return modeling.BertConfig(
        vocab_size=s["vocab_size"],
        hidden_size=s["hidden_size"],
        num_hidden_layers=s["num_layers"],
        num_attention_heads=s["num_heads"],
        intermediate_size=s["intermediate_size"],
        max_position_embeddings=max(512, s["seq_length"]),
        type_vocab_size=2,
    )


def build_ours(s, dtype):
    """run_pretraining's step: returns (loop, model, dataset)."""
    import dataclasses

    from training import distribution, pretraining, run_setup
    from training import trainer as trainer_lib
    from training.training_options import Schedule, TrainingOptions

    dataset = make_dataset(s)
    _set_dtype(dtype)
    try:
        config = _bert_config(s)
        # The real task, with an in-memory dataset instead of TFRecord files.
        task = dataclasses.replace(
            pretraining.pretraining_task(None, config, []),
            make_dataset=lambda batch_size, context: dataset,
        )
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=s["train_batch_size"],
            learning_rate=_LEARNING_RATE, save_checkpoints_steps=_NUM_TRAIN_STEPS,
            iterations_per_loop=s["steps_per_round"], random_seed=s["model_seed"], dtype=dtype,
        )
        trainer = trainer_lib.Trainer(
            options, Schedule(_NUM_TRAIN_STEPS, _NUM_WARMUP_STEPS),
            distribution.get_strategy(options), task, run_setup.bert_freezer(options, config))
        loop = trainer.make_loop()
    finally:
        _set_dtype("float32")
    return loop, trainer.model, task.make_dataset(s["train_batch_size"], None)


def _set_dtype(dtype):
    """The global Keras policy of --dtype, as run_pretraining.py sets it."""
    import tensorflow as tf
    from official.modeling import performance

    performance.set_mixed_precision_policy(tf.as_dtype(dtype))


def build_baseline(s, dtype):
    """A plain Model Garden step at the same shapes: returns (loop, model, dataset)."""
    import tensorflow as tf
    import tf_keras
    from official.nlp import optimization as garden_optimization
    from official.nlp.modeling import layers, networks

    dataset = make_dataset(s)
    _set_dtype(dtype)
    try:
        config = _bert_config(s)
        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = networks.BertEncoderV2(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            num_layers=config.num_hidden_layers,
            num_attention_heads=config.num_attention_heads,
            max_sequence_length=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            inner_dim=config.intermediate_size,
            output_dropout=config.hidden_dropout_prob,
            attention_dropout=config.attention_probs_dropout_prob,
            initializer=initializer,
        )
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
    finally:
        _set_dtype("float32")

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


def _peak_memory_kb():
    """(VmHWM, VmRSS) of this process in kB from /proc/self/status."""
    values = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0])
    except OSError:
        pass
    # ru_maxrss is in kB on Linux; the fallback where /proc is missing.
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return values.get("VmHWM", maxrss), values.get("VmRSS", 0)


def _say(*fields):
    print(_TAG + " ".join(str(field) for field in fields), flush=True)


def run_child(s, contender, dtype):
    """Builds one contender, then runs one loop call per "run" line on stdin."""
    import tensorflow as tf

    start = time.perf_counter()
    build = build_ours if contender == OURS else build_baseline
    loop, model, dataset = build(s, dtype)
    iterator = iter(dataset)
    _, rss_built = _peak_memory_kb()
    _say("ready", model.count_params(), "%.1f" % (time.perf_counter() - start), rss_built)
    num_steps = tf.constant(s["steps_per_round"])
    for line in sys.stdin:
        command = line.strip()
        if command == "run":
            start = time.perf_counter()
            losses = loop(iterator, num_steps).numpy()  # .numpy() waits for the result.
            _say("round", "%.6f" % (time.perf_counter() - start), "%.4f" % losses[0])
        elif command == "quit":
            break
    peak, rss = _peak_memory_kb()
    _say("memory", peak, rss)
    return 0


class _Child:
    """A child process of this script running one (contender, dtype)."""

    def __init__(self, s, contender, dtype, torch_python=None):
        self.name = contender
        self.log = tempfile.TemporaryFile(mode="w+")
        shapes = ["--%s=%s" % (name, s[name]) for name in _SHAPE_FLAGS]
        if contender == PYTORCH:
            args = [torch_python, os.path.join(_REPO_ROOT, "benchmarks", "torch_pretraining_step.py"),
                    "--dtype=" + dtype] + shapes
        else:
            args = [sys.executable, os.path.abspath(__file__), "--contender=" + contender,
                    "--contender_dtype=" + dtype] + shapes
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            cwd=_REPO_ROOT)

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def expect(self, kind):
        """The fields of the next protocol line, which must be of `kind`."""
        for line in self.process.stdout:
            if line.startswith(_TAG):
                fields = line[len(_TAG):].split()
                if fields[0] != kind:
                    break
                return fields[1:]
        self.process.kill()
        self.process.wait()
        self.log.seek(0)
        tail = self.log.read()[-3000:]
        raise RuntimeError("The %s child did not report %r; its stderr ends with:\n%s"
                           % (self.name, kind, tail))

    def finish(self):
        self.send("quit")
        self.process.stdin.close()
        fields = self.expect("memory")
        self.process.wait()
        self.log.close()
        return fields


def torch_interpreter():
    """The interpreter of the PyTorch peer, or (None, why not)."""
    if FLAGS.torch_python == "none":
        return None, "--torch_python=none"
    if FLAGS.torch_python:
        return FLAGS.torch_python, None
    import importlib.util  # pylint: disable=import-outside-toplevel
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        return sys.executable, None
    return None, ("torch and transformers are not installed here; give an interpreter that has "
                  "them with --torch_python")


def contenders(torch_python):
    """The contenders' names: ours and the baseline, and the PyTorch peer given its interpreter."""
    return CONTENDERS + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in alternation; returns {name: results}."""
    names = contenders(torch_python)
    children = {name: _Child(s, name, dtype, torch_python) for name in names}  # Built concurrently.
    try:
        results = {}
        for name, child in children.items():
            params, build_seconds, rss_built = child.expect("ready")
            results[name] = dict(params=int(params), build_seconds=float(build_seconds),
                                 rss_built_kb=int(rss_built), seconds=[], losses=[])
        for round_index in range(s["warmup_rounds"] + s["timed_rounds"]):
            for name, child in children.items():
                child.send("run")
                seconds, loss = child.expect("round")
                if round_index >= s["warmup_rounds"]:
                    results[name]["seconds"].append(float(seconds))
                    results[name]["losses"].append(float(loss))
        for name, child in children.items():
            peak, rss = child.finish()
            results[name].update(peak_kb=int(peak), rss_kb=int(rss))
        return results
    finally:
        for child in children.values():
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.contender:
        return run_child(s, FLAGS.contender, FLAGS.contender_dtype)

    import tensorflow as tf

    from benchmarks import benchmark_utils

    if s["warmup_rounds"] < 1 or s["timed_rounds"] < 1 or s["steps_per_round"] < 1:
        raise app.UsageError("--warmup_rounds, --timed_rounds and --steps_per_round must be >= 1.")
    if not set(FLAGS.train_dtypes) <= {"float32", "bfloat16"}:
        # float16 would need loss scaling in the baseline.
        raise app.UsageError("--train_dtypes must be among float32, bfloat16.")
    print("Pre-training step benchmark: run_pretraining's loop (%s) vs Model Garden "
          "BertEncoderV2 + MaskedLM + NSP head (%s)" % (OURS, BASELINE))
    for line in benchmark_utils.machine_lines(tf.__version__):
        print(line)
    print("config: layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d "
          "intermediate=%(intermediate_size)d vocab=%(vocab_size)d seq=%(seq_length)d "
          "max_predictions=%(max_predictions_per_seq)d batch=%(train_batch_size)d" % s)
    torch_python, why_not = torch_interpreter()
    names = contenders(torch_python)
    print("timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + "
          "%(timed_rounds)d timed rounds of %(steps_per_round)d steps (one loop call) each, "
          "taking turns" % s + (" [--quick: figures are meaningless]" if FLAGS.quick else ""))
    print("pytorch: " + ("Hugging Face BertForPreTraining + torch.compile, run by %s" % torch_python
                         if torch_python else "not measured (%s)" % why_not))

    begin = time.perf_counter()
    rows, worst = [], []
    for dtype in FLAGS.train_dtypes:
        start = time.perf_counter()
        results = measure(s, dtype, torch_python)
        print("  %s: timed in %.0f s; parameters %s; model build %s; mean loss of the timed "
              "rounds %s" % (
                  dtype, time.perf_counter() - start,
                  ", ".join("%s %d" % (name, results[name]["params"]) for name in names),
                  ", ".join("%s %.0f s" % (name, results[name]["build_seconds"]) for name in names),
                  ", ".join("%s %.3f" % (name, statistics.mean(results[name]["losses"]))
                            for name in names)))
        if results[OURS]["params"] != results[BASELINE]["params"]:
            print("WARNING: ours and the baseline have different parameter counts.")
        sequences = s["train_batch_size"] * s["steps_per_round"]
        row = [dtype]
        for name in names:
            median, spread = benchmark_utils.median_and_spread(results[name]["seconds"])
            row += ["%.2f" % (sequences / median), "%.0f%%" % (100 * spread)]
        # Rounds of the same index ran back to back, under the same load.
        paired = {name: statistics.median(p / o for p, o in zip(results[name]["seconds"],
                                                               results[OURS]["seconds"]))
                  for name in names[1:]}
        worst.append(min(paired.values()))
        row += ["%.3f" % paired[name] for name in names[1:]]
        row += ["%.0f" % (results[name]["peak_kb"] / 1024) for name in names]
        rows.append(row)

    print()
    print("sequences/s of the median round, spread = (max - min) / median of the round times;")
    print("ours/X = median over rounds of X's round time / ours' for the rounds of an index "
          "(> 1: ours faster);")
    print("peak MB = VmHWM (RSS high-water mark) of each contender's own process")
    header = ["dtype"]
    for name in names:
        header += ["%s seq/s" % name, "spread"]
    header += ["ours/%s" % name for name in names[1:]]
    header += ["%s peak MB" % name for name in names]
    print(benchmark_utils.format_table(header, rows))
    if FLAGS.quick:
        verdict = "not judged with --quick"
    else:
        verdict = "met" if min(worst) >= 1.0 else "NOT met"
    print()
    print("goal: ours >= the best peer measured (%s) in every dtype: %s (worst ours/peer %.3f)"
          % (", ".join(names[1:]), verdict, min(worst)))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
