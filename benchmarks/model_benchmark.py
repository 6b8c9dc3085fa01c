"""Encoder throughput: our `modeling.BertModel` vs Model Garden's `BertEncoderV2`.

Both encoders get the same config and the same inputs, are wrapped the same way in `tf.function`,
get the same number of warm-up steps and are then timed in alternation (harness.interleave). Two
modes are timed:

  forward: `model(inputs, training=False)`, inference.
  train:   `model(inputs, training=True)` under a GradientTape, the loss mean(seq_output^2) +
           mean(pooled_output^2) (every layer, the pooler and the embeddings get gradients), and one
           tf_keras optimizer step (Adam or SGD, a fresh optimizer per model).

Each mode is timed in float32 and in mixed_bfloat16 (the policy is set before each pair of models is
built and reset to float32 after). The figure is sequences per second of the median step; ratio =
ours/garden of those; paired = the median over rounds of the ratio of the two steps of a round.
`--head_size=D` also times our model with a fixed head size D, in a separate table (at D =
hidden/heads it is the same architecture as BertEncoderV2).

Usage, from the repository root:
  .venv/bin/python benchmarks/model_benchmark.py [--quick] [--jit_compile]
"""

import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import harness  # noqa: E402

FLAGS = flags.FLAGS
harness.define_bert_shape_flags()
flags.DEFINE_integer("batch_size", 16, "Sequences per step (16 keeps the default run under ~5 min on 2 cores; "
                     "BERT-style runs use 32).")
flags.DEFINE_integer("head_size", None, "If set, also time our model with this fixed head size D (reported in a "
                     "separate table).")
flags.DEFINE_integer("warmup_steps", 3, "Untimed steps per model and mode (>= 1; the first one traces the "
                     "tf.function).")
flags.DEFINE_integer("timed_steps", 10, "Timed steps per model and mode.")
flags.DEFINE_list("dtypes", ["float32", "mixed_bfloat16"], "Mixed precision policies.")
flags.DEFINE_list("modes", ["forward", "train"], "What to time: forward, train.")
flags.DEFINE_enum("optimizer", "adam", ["adam", "sgd"], "tf_keras optimizer of the train step.")
flags.DEFINE_bool("jit_compile", False, "Compile the step functions with XLA.")

_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000, seq_length=16,
              batch_size=4, timed_steps=2)
OURS = "ours"
GARDEN = "BertEncoderV2"


def _settings():
    """The flag values in effect (with --quick applied) as a dict."""
    names = ["num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length", "batch_size",
             "head_size", "warmup_steps", "timed_steps", "optimizer", "jit_compile", "model_seed"]
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
    return {OURS: dict(input_ids=ids, input_mask=mask, token_type_ids=types),
            GARDEN: dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)}


def build_models(s, policy):
    """Builds {name: model} under `policy`; the policy is reset to float32 after."""
    import tf_keras

    import modeling

    tf_keras.mixed_precision.set_global_policy(policy)
    try:
        # The config's type_vocab_size is BertConfig's default (16); BertEncoderV2's other defaults already are
        # BERT's (tanh-approximate GELU, dropout 0.1, post-norm).
        config = harness.bert_config(s).replace(type_vocab_size=16)
        models = {}
        tf_keras.utils.set_random_seed(s["model_seed"])
        models[OURS] = modeling.BertModel(config)
        tf_keras.utils.set_random_seed(s["model_seed"])
        models[GARDEN] = harness.garden_encoder(config, tf_keras.initializers.TruncatedNormal(
            stddev=config.initializer_range))
        if s["head_size"] is not None:
            tf_keras.utils.set_random_seed(s["model_seed"])
            models[_head_size_name(s)] = modeling.BertModel(config.replace(head_size=s["head_size"]))
        # Build: create the variables outside the timed functions. The policy must still be set here: the
        # Transformer blocks create their sub-layers (and take the global policy) on the first call.
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
    def run(step, name):
        return lambda: step(inputs[_input_key(name)]).numpy()  # .numpy() waits for the result.

    steps = {name: run(make_step(model, mode, s), name) for name, model in models.items()}
    return harness.interleave(steps, s["timed_steps"], warmup=s["warmup_steps"])[0]


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
            lines.append("WARNING: %s and %s should be the same architecture but have %d and %d parameters (or "
                         "different variable shapes)." % (name, GARDEN, counts[name], counts[GARDEN]))
        else:
            lines.append("architecture check: %s and %s have equal parameter counts and variable shapes"
                         % (name, GARDEN))
    return lines


def main(argv):
    del argv  # Unused.
    s = _settings()
    harness.check_rounds(warmup_steps=s["warmup_steps"], timed_steps=s["timed_steps"])
    harness.check_among("modes", FLAGS.modes, ("forward", "train"))
    harness.check_among("dtypes", FLAGS.dtypes, ("float32", "mixed_bfloat16"))  # mixed_float16: loss scaling
    harness.print_header(
        "Model benchmark: modeling.BertModel (%s) vs official.nlp.modeling.networks.%s" % (OURS, GARDEN),
        "config: layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d intermediate=%(intermediate_size)d "
        "vocab=%(vocab_size)d seq=%(seq_length)d batch=%(batch_size)d head_size=%(head_size)s" % s,
        "timing: %(warmup_steps)d warm-up + %(timed_steps)d timed steps per model, alternating; "
        "optimizer=%(optimizer)s; tf.function(jit_compile=%(jit_compile)s)" % s
        + (" [--quick: figures are meaningless]" if FLAGS.quick else ""))

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
            garden = harness.median_and_spread(seconds[GARDEN])[0]
            for name in models:
                if name != GARDEN:
                    median = harness.median_and_spread(seconds[name])[0]
                    rows[name].append([
                        policy, mode, "%.2f" % (s["batch_size"] / median), harness.spread(seconds[name]),
                        "%.2f" % (s["batch_size"] / garden), harness.spread(seconds[GARDEN]), "%.3f" % (garden / median),
                        "%.3f" % harness.paired_ratio(seconds[GARDEN], seconds[name])])
        del models

    for name, table in rows.items():
        harness.print_table(
            ["%s vs %s: sequences/s of the median step, spread = (max - min) / median of the step times;"
             % (name, GARDEN),
             "ratio = %s seq/s / %s seq/s; paired = median over rounds of the same ratio for the two steps of a round"
             % (name, GARDEN)],
            ["dtype", "mode", name + " seq/s", "spread", GARDEN + " seq/s", "spread", "ratio", "paired"], table)
    print()
    print("%s against %s, the lowest paired ratio over the rows: %.3f"
          % (OURS, GARDEN, min(float(row[-1]) for row in rows[OURS])))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
