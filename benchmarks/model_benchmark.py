"""Encoder throughput: our `modeling.BertModel` vs Model Garden's `BertEncoderV2`.

Both encoders get the same config and the same inputs, are wrapped the same
way in `tf.function`, get the same number of warm-up steps and are then timed
in alternation (ours, garden, ours, garden, ...) so that load drift on a
shared machine affects both alike. Two modes are timed:

  forward: `model(inputs, training=False)`, inference.
  train:   `model(inputs, training=True)` under a GradientTape, the loss
           mean(seq_output^2) + mean(pooled_output^2) (every layer, the
           pooler and the embeddings get gradients), and one tf_keras
           optimizer step (Adam or SGD, a fresh optimizer per model).

Each mode is timed in float32 and in mixed_bfloat16 (the policy is set before each pair of
models is built and reset to float32 after). The figure is sequences per
second of the median step; spread is (max - min) / median of the step times;
the ratio ours/garden is also given paired: the median over rounds of the
ratio of the two steps of one round, which cancels slower load drift.
`--head_size=D` also times our model with a fixed head size D, in a separate
table (at D = hidden/heads it is the same architecture as BertEncoderV2).

Usage, from the repository root:
  .venv/bin/python benchmarks/model_benchmark.py [--quick] [--jit_compile]
"""

import collections
import os
import statistics
import sys
import time

# Run as `python benchmarks/model_benchmark.py`, Python puts benchmarks/
# (not the repository root) on sys.path; add the root so that
# `import modeling` and `import benchmarks` work without PYTHONPATH.
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from training import onednn  # noqa: E402

onednn.enable()  # before TensorFlow loads, as the entry points do

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import benchmark_utils  # noqa: E402

FLAGS = flags.FLAGS
benchmark_utils.define_bert_shape_flags()
flags.DEFINE_integer("batch_size", 16, "Sequences per step (16 keeps the default "
                     "run under ~5 min on 2 cores; BERT-style runs use 32).")
flags.DEFINE_integer("head_size", None,
                     "If set, also time our model with this fixed head size D "
                     "(reported in a separate table).")
flags.DEFINE_integer("warmup_steps", 3, "Untimed steps per model and mode (>= 1; "
                     "the first one traces the tf.function).")
flags.DEFINE_integer("timed_steps", 10, "Timed steps per model and mode.")
flags.DEFINE_list("dtypes", ["float32", "mixed_bfloat16"], "Mixed precision policies.")
flags.DEFINE_list("modes", ["forward", "train"], "What to time: forward, train.")
flags.DEFINE_enum("optimizer", "adam", ["adam", "sgd"], "tf_keras optimizer of the train step.")
flags.DEFINE_bool("jit_compile", False, "Compile the step functions with XLA.")

_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128,
              vocab_size=1000, seq_length=16, batch_size=4, timed_steps=2)

OURS = "ours"
GARDEN = "BertEncoderV2"


def _settings():
    """The flag values in effect (with --quick applied) as a dict."""
    names = ["num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size",
             "seq_length", "batch_size", "head_size", "warmup_steps", "timed_steps",
             "optimizer", "jit_compile", "model_seed"]
    settings = {name: FLAGS[name].value for name in names}
    if FLAGS.quick:
        settings.update(_QUICK)
    return settings


def make_inputs(s):
    """Identical inputs for both models: random ids, some padding, two segments."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(s["model_seed"])
    shape = (s["batch_size"], s["seq_length"])
    ids = rng.integers(0, s["vocab_size"], size=shape, dtype=np.int32)
    lengths = rng.integers(s["seq_length"] // 2, s["seq_length"] + 1, size=(shape[0], 1))
    positions = np.arange(s["seq_length"])[None, :]
    mask = (positions < lengths).astype(np.int32)
    types = (positions >= lengths // 2).astype(np.int32) * mask
    ids, mask, types = (tf.constant(a) for a in (ids * mask, mask, types))
    return {
        OURS: dict(input_ids=ids, input_mask=mask, token_type_ids=types),
        GARDEN: dict(input_word_ids=ids, input_mask=mask, input_type_ids=types),
    }


def build_models(s, policy):
    """Builds {name: model} under `policy`; the policy is reset to float32 after."""
    import tf_keras
    from official.nlp.modeling import networks

    import modeling

    tf_keras.mixed_precision.set_global_policy(policy)
    try:
        config = modeling.BertConfig(
            vocab_size=s["vocab_size"],
            hidden_size=s["hidden_size"],
            num_hidden_layers=s["num_layers"],
            num_attention_heads=s["num_heads"],
            intermediate_size=s["intermediate_size"],
            max_position_embeddings=max(512, s["seq_length"]),
        )
        models = {}
        tf_keras.utils.set_random_seed(s["model_seed"])
        models[OURS] = modeling.BertModel(config)
        tf_keras.utils.set_random_seed(s["model_seed"])
        # The same hyper-parameters as the config (BertEncoderV2's defaults
        # already are BERT's: tanh-approximate GELU, dropout 0.1, post-norm).
        models[GARDEN] = networks.BertEncoderV2(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            num_layers=config.num_hidden_layers,
            num_attention_heads=config.num_attention_heads,
            max_sequence_length=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            inner_dim=config.intermediate_size,
            output_dropout=config.hidden_dropout_prob,
            attention_dropout=config.attention_probs_dropout_prob,
            initializer=tf_keras.initializers.TruncatedNormal(
                stddev=config.initializer_range),
        )
        if s["head_size"] is not None:
            tf_keras.utils.set_random_seed(s["model_seed"])
            models[_head_size_name(s)] = modeling.BertModel(
                config.replace(head_size=s["head_size"]))
        # Build: create the variables outside the timed functions. The policy
        # must still be set here: the Transformer blocks create their
        # sub-layers (and take the global policy) on the first call.
        inputs = make_inputs(s)
        for name, model in models.items():
            model(inputs[_input_key(name)], training=False)
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    return models


def _head_size_name(s):
    return "ours(head_size=%d)" % s["head_size"]


def _input_key(name):
    return GARDEN if name == GARDEN else OURS


def make_step(model, mode, s):
    """Returns a tf.function running one `mode` step of `model` on a dict input."""
    import tensorflow as tf
    import tf_keras

    def loss_of(outputs):
        sequence = tf.cast(outputs["sequence_output"], tf.float32)
        pooled = tf.cast(outputs["pooled_output"], tf.float32)
        return tf.reduce_mean(tf.square(sequence)) + tf.reduce_mean(tf.square(pooled))

    if mode == "forward":
        def forward(inputs):
            # Returning a reduction of every output keeps the whole encoder live.
            return loss_of(model(inputs, training=False))
        return tf.function(forward, jit_compile=s["jit_compile"])

    if s["optimizer"] == "adam":
        optimizer = tf_keras.optimizers.Adam(learning_rate=1e-4)
    else:
        optimizer = tf_keras.optimizers.SGD(learning_rate=1e-3)

    def train(inputs):
        with tf.GradientTape() as tape:
            loss = loss_of(model(inputs, training=True))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return tf.function(train, jit_compile=s["jit_compile"])


def time_steps(models, mode, inputs, s):
    """Warms up then times every model in alternation; returns {name: [seconds]}."""
    steps = {name: make_step(model, mode, s) for name, model in models.items()}
    seconds = collections.defaultdict(list)
    for round_index in range(s["warmup_steps"] + s["timed_steps"]):
        for name, step in steps.items():
            start = time.perf_counter()
            step(inputs[_input_key(name)]).numpy()  # .numpy() waits for the result.
            if round_index >= s["warmup_steps"]:
                seconds[name].append(time.perf_counter() - start)
    return seconds


def parameter_report(models, s):
    """Lines with parameter counts; warns if the same architecture differs."""
    counts = {name: model.count_params() for name, model in models.items()}
    lines = ["parameters: " + ", ".join("%s %d" % item for item in counts.items())]

    def shapes(model):
        return sorted(tuple(v.shape.as_list()) for v in model.trainable_variables)

    same = [OURS]
    if s["head_size"] is not None and s["head_size"] * s["num_heads"] == s["hidden_size"]:
        same.append(_head_size_name(s))  # D = H/N: the original architecture.
    for name in same:
        if counts[name] != counts[GARDEN] or shapes(models[name]) != shapes(models[GARDEN]):
            lines.append("WARNING: %s and %s should be the same architecture but have "
                         "%d and %d parameters (or different variable shapes)."
                         % (name, GARDEN, counts[name], counts[GARDEN]))
        else:
            lines.append("architecture check: %s and %s have equal parameter counts and "
                         "variable shapes" % (name, GARDEN))
    return lines


def main(argv):
    del argv  # Unused.
    import tensorflow as tf

    s = _settings()
    if s["warmup_steps"] < 1 or s["timed_steps"] < 1:
        raise app.UsageError("--warmup_steps and --timed_steps must be >= 1.")
    if not set(FLAGS.modes) <= {"forward", "train"}:
        raise app.UsageError("--modes must be among forward, train.")
    if not set(FLAGS.dtypes) <= {"float32", "mixed_bfloat16"}:
        # mixed_float16 would need loss scaling in the train step.
        raise app.UsageError("--dtypes must be among float32, mixed_bfloat16.")
    print("Model benchmark: modeling.BertModel (%s) vs official.nlp.modeling.networks.%s"
          % (OURS, GARDEN))
    for line in benchmark_utils.machine_lines(tf.__version__):
        print(line)
    print("config: layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d "
          "intermediate=%(intermediate_size)d vocab=%(vocab_size)d seq=%(seq_length)d "
          "batch=%(batch_size)d head_size=%(head_size)s" % s)
    print("timing: %(warmup_steps)d warm-up + %(timed_steps)d timed steps per model, "
          "alternating; optimizer=%(optimizer)s; tf.function(jit_compile=%(jit_compile)s)"
          % s + (" [--quick: figures are meaningless]" if FLAGS.quick else ""))

    begin = time.perf_counter()
    inputs = make_inputs(s)
    rows = collections.defaultdict(list)  # Table name -> rows.
    for policy in FLAGS.dtypes:
        models = build_models(s, policy)
        if policy == FLAGS.dtypes[0]:
            for line in parameter_report(models, s):
                print(line)
        for mode in FLAGS.modes:
            start = time.perf_counter()
            seconds = time_steps(models, mode, inputs, s)
            print("  timed %s %s in %.0f s" % (policy, mode, time.perf_counter() - start))
            garden, garden_spread = benchmark_utils.median_and_spread(seconds[GARDEN])
            for name in models:
                if name == GARDEN:
                    continue
                median, spread = benchmark_utils.median_and_spread(seconds[name])
                # Steps of the same round ran back to back, under the same load.
                paired = [g / o for g, o in zip(seconds[GARDEN], seconds[name])]
                rows[name].append([
                    policy, mode,
                    "%.2f" % (s["batch_size"] / median), "%.0f%%" % (100 * spread),
                    "%.2f" % (s["batch_size"] / garden), "%.0f%%" % (100 * garden_spread),
                    "%.3f" % (garden / median),
                    "%.3f" % statistics.median(paired),
                ])
        del models

    for name, table in rows.items():
        print()
        print("%s vs %s: sequences/s of the median step, spread = (max - min) / median "
              "of the step times;" % (name, GARDEN))
        print("ratio = %s seq/s / %s seq/s; paired = median over rounds of the same "
              "ratio for the two steps of a round" % (name, GARDEN))
        print(benchmark_utils.format_table(
            ["dtype", "mode", name + " seq/s", "spread", GARDEN + " seq/s", "spread",
             "ratio", "paired"], table))
    ratios = [float(row[-1]) for row in rows[OURS]]
    print()
    print("%s against %s, the lowest paired ratio over the rows: %.3f" % (OURS, GARDEN, min(ratios)))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
