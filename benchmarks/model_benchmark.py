"""Encoder throughput: our `modeling.BertModel` vs Model Garden's `BertEncoderV2`, forward and train steps.

  .venv/bin/python benchmarks/model_benchmark.py [--quick] [--jit_compile] [--head_size=D]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Encoder".
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402

FLAGS = flags.FLAGS
harness.define_bert_shape_flags()
flags.DEFINE_integer("batch_size", 16, "Sequences per step (16: a default run in ~5 min on 2 cores).", lower_bound=1)
flags.DEFINE_integer("head_size", None, "Also time our model with this fixed head size D, in a table of its own.",
                     lower_bound=1)
flags.DEFINE_integer("warmup_steps", 3, "Untimed steps per model and mode (the first traces).", lower_bound=1)
flags.DEFINE_integer("timed_steps", 10, "Timed steps per model and mode.", lower_bound=1)
harness.define_list_flag("dtypes", ("float32", "mixed_bfloat16"), "Keras policies (mixed_float16 would need loss "
                         "scaling).")
harness.define_list_flag("modes", ("forward", "train"), "What to time: forward, train.")
flags.DEFINE_enum("optimizer", "adam", ["adam", "sgd"], "tf_keras optimizer of the train step.")
flags.DEFINE_bool("jit_compile", False, "Compile the step functions with XLA.")

_FLAGS = ("batch_size", "head_size", "warmup_steps", "timed_steps", "optimizer", "jit_compile")
OURS, GARDEN = "ours", "BertEncoderV2"
INPUT_NAMES = {OURS: ("input_ids", "input_mask", "token_type_ids"),
               GARDEN: ("input_word_ids", "input_mask", "input_type_ids")}


def make_step(model, mode, s):
    """A tf.function of one `mode` step of `model`: forward, or train (forward, gradients, one optimizer step)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    def loss(inputs, training):  # A reduction of every output keeps the whole encoder live.
        outputs = model(inputs, training=training)
        return sum(tf.reduce_mean(tf.square(tf.cast(outputs[key], tf.float32)))
                   for key in ("sequence_output", "pooled_output"))

    if mode == "forward":
        return tf.function(lambda inputs: loss(inputs, False), jit_compile=s["jit_compile"])
    optimizer = (tf_keras.optimizers.Adam(learning_rate=1e-4) if s["optimizer"] == "adam"
                 else tf_keras.optimizers.SGD(learning_rate=1e-3))  # A fresh one per model.
    step = harness.training_step(lambda inputs: loss(inputs, True), model.trainable_variables, optimizer)
    return tf.function(step, jit_compile=s["jit_compile"])


def main(_):
    s = harness.bert_settings(_FLAGS, dict(batch_size=4, timed_steps=2))
    harness.print_header(
        "Model benchmark: modeling.BertModel (%s) vs official.nlp.modeling.networks.%s" % (OURS, GARDEN),
        "config: %s batch=%d head_size=%s" % (harness.bert_shape_text(s), s["batch_size"], s["head_size"]),
        "timing: %(warmup_steps)d warm-up + %(timed_steps)d timed steps per model, alternating; "
        "optimizer=%(optimizer)s; tf.function(jit_compile=%(jit_compile)s)" % s + harness.quick_note())
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    import tf_keras  # pylint: disable=import-outside-toplevel

    import modeling  # pylint: disable=import-outside-toplevel

    begin = time.perf_counter()
    config = harness.bert_config(s).replace(type_vocab_size=16)  # BertConfig's default, as BertEncoderV2's.
    makers = {OURS: lambda: modeling.BertModel(config), GARDEN: lambda: harness.garden_encoder(
        config, tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range))}
    if s["head_size"]:
        makers["ours(head_size=%d)" % s["head_size"]] = lambda: modeling.BertModel(
            config.replace(head_size=s["head_size"]))
    # The same inputs for every model: random ids, some padding, two segments.
    batch = child.pretraining_batches(s["model_seed"], s["batch_size"], s["seq_length"], 1, s["vocab_size"])
    arrays = [tf.constant(batch[key][0]) for key in ("input_ids", "input_mask", "segment_ids")]
    inputs = {name: dict(zip(INPUT_NAMES.get(name, INPUT_NAMES[OURS]), arrays)) for name in makers}
    rows = {name: [] for name in makers if name != GARDEN}  # A table per model of ours.
    for policy in FLAGS.dtypes:
        models = {}
        # Built (called once) under the policy: the blocks create their sub-layers, and take it, on the first call.
        with harness.dtype_policy(policy.replace("mixed_", "")):
            for name, make in makers.items():
                tf_keras.utils.set_random_seed(s["model_seed"])
                models[name] = make()
                models[name](inputs[name], training=False)
        if policy == FLAGS.dtypes[0]:
            counts = {name: model.count_params() for name, model in models.items()}
            print("parameters: " + ", ".join("%s %d" % item for item in counts.items()))
            shapes = {name: sorted(v.shape.as_list() for v in model.trainable_variables)
                      for name, model in models.items()}
            at_h_over_n = s["head_size"] and s["head_size"] * s["num_heads"] == s["hidden_size"]
            for name in [n for n in rows if n == OURS or at_h_over_n]:  # BertEncoderV2's architecture.
                if (counts[name], shapes[name]) == (counts[GARDEN], shapes[GARDEN]):
                    print("architecture check: %s and %s have equal parameter counts and variable shapes"
                          % (name, GARDEN))
                else:
                    print("WARNING: %s and %s should be the same architecture but have %d and %d parameters (or "
                          "different variable shapes)." % (name, GARDEN, counts[name], counts[GARDEN]))
        for mode in FLAGS.modes:
            start = time.perf_counter()
            steps = {name: make_step(model, mode, s) for name, model in models.items()}
            seconds = harness.interleave(  # .numpy() waits for the result.
                {name: lambda name=name: steps[name](inputs[name]).numpy() for name in models},
                s["timed_steps"], warmup=s["warmup_steps"])[0]
            print("  timed %s %s in %.0f s" % (policy, mode, time.perf_counter() - start))
            garden = statistics.median(seconds[GARDEN])
            for name, table in rows.items():
                ours = statistics.median(seconds[name])
                table.append([policy, mode, "%.2f" % (s["batch_size"] / ours), harness.spread(seconds[name]),
                              "%.2f" % (s["batch_size"] / garden), harness.spread(seconds[GARDEN]),
                              "%.3f" % (garden / ours), "%.3f" % harness.paired_ratio(seconds[GARDEN], seconds[name])])
        del models, steps

    for name, table in rows.items():
        harness.print_table(
            ["%s vs %s: sequences/s of the median step, spread = (max - min) / median of the step times;"
             % (name, GARDEN),
             "ratio = %s seq/s / %s seq/s; paired = median over rounds of the same ratio for the two steps of a round"
             % (name, GARDEN)],
            ["dtype", "mode", name + " seq/s", "spread", GARDEN + " seq/s", "spread", "ratio", "paired"], table)
    print("\n%s against %s, the lowest paired ratio over the rows: %.3f"
          % (OURS, GARDEN, min(float(row[-1]) for row in rows[OURS])))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
