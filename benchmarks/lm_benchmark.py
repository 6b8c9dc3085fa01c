"""Language-model training throughput (tokens/s) and peak memory: run_lm.py's step vs Model Garden and PyTorch.

Usage, from the repository root:
  .venv/bin/python benchmarks/lm_benchmark.py [--torch_python=/path/to/python]
      [--lm_shape=small,paper] [--lm_dtypes=float32,bfloat16] [--quick]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Language model".
"""

import dataclasses
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app, flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from official.nlp.modeling import layers  # noqa: E402

from lm import presets  # noqa: E402
from lm import task as language_modeling  # noqa: E402
from lm.config import LmConfig  # noqa: E402
from lm.family import FAMILY  # noqa: E402
from studies.lm import experiments  # noqa: E402
from training import process  # noqa: E402
from training.training_options import Schedule, TrainingOptions  # noqa: E402

FLAGS = flags.FLAGS
OURS, OURS_XLA, MODEL_GARDEN, PYTORCH = "ours", "ours-xla", "model-garden", harness.PYTORCH
CONTENDERS = (OURS, OURS_XLA, MODEL_GARDEN)  # and the PyTorch peer given its interpreter
SHAPES = ("small", "paper")

harness.define_quick_flag()
harness.define_torch_python_flag()
harness.define_list_flag("lm_shape", SHAPES, "Shapes measured, one table each: small, paper (docs/performance.md).")
flags.DEFINE_list("lm_heads", None, "Head counts h (d_p fixed by the shape). Default: the shape's.")
harness.define_list_flag("lm_dtypes", harness.DTYPES, "--dtype values.")
flags.DEFINE_integer("lm_steps_per_round", None, "Steps per loop call. Default: the shape's (small 5, paper 2).",
                     lower_bound=1)
flags.DEFINE_integer("lm_warmup_rounds", 2, "Untimed rounds per contender (the first one traces and compiles).",
                     lower_bound=1)
flags.DEFINE_integer("lm_timed_rounds", 9, "Timed rounds per contender.", lower_bound=1)
flags.DEFINE_integer("lm_seed", 1, "Seed of the weights and of the batches.")

# --quick: every shape becomes this tiny model (its head counts: the shape's first and last).
_QUICK_MODEL = dict(num_hidden_layers=1, hidden_size=32, head_size=8, intermediate_size=64, vocab_size=100,
                    max_position_embeddings=32)
_QUICK_RUN = dict(batch_size=2, seq_length=16, steps_per_round=2)


def shape_configs(name):
    """({h: LmConfig}, run settings) of a --lm_shape at full size."""
    if name == "small":
        scale = experiments.SMALL
        # The fixed-head-size family of Fig. 1 (its standard partners have other d).
        rows = [row for row in scale.rows(experiments.EXPERIMENTS["lm_figure1"]) if row.head_size]
        assert scale.learning_rate_schedule == "linear", scale
        return {row.num_heads: scale.config(row).replace(vocab_size=scale.vocab_size) for row in rows}, dict(
            batch_size=scale.train_batch_size, seq_length=scale.max_seq_length, learning_rate=scale.learning_rate,
            num_train_steps=scale.num_train_steps, num_warmup_steps=scale.num_warmup_steps, steps_per_round=5)
    preset = presets.PRESETS["lm1b_paper"]
    return {h: LmConfig(vocab_size=preset["vocab_size"], num_attention_heads=h,
                        max_position_embeddings=preset["max_seq_length"]) for h in (8, 64)}, dict(
        batch_size=8, seq_length=preset["max_seq_length"], learning_rate=1e-3, num_train_steps=100000,
        num_warmup_steps=1000, steps_per_round=2)


def settings(name):
    """({h: the children's spec: dict(config=LmConfig as a dict, seed, run settings)}, rounds) of a --lm_shape."""
    configs, run = shape_configs(name)
    heads = sorted(configs)
    if FLAGS.quick:
        heads = sorted({heads[0], heads[-1]})
        configs = {h: configs[h].replace(num_attention_heads=h, **_QUICK_MODEL) for h in heads}
        run.update(_QUICK_RUN)
    if FLAGS.lm_heads:
        heads, template = [int(h) for h in FLAGS.lm_heads], configs[heads[0]]
        configs = {h: configs.get(h, template.replace(num_attention_heads=h)) for h in heads}
    if FLAGS.lm_steps_per_round and not FLAGS.quick:
        run["steps_per_round"] = FLAGS.lm_steps_per_round
    rounds = dict(warmup=FLAGS.lm_warmup_rounds, timed=FLAGS.lm_timed_rounds) if not FLAGS.quick else dict(
        warmup=1, timed=1)
    return {h: dict(config=dataclasses.asdict(configs[h]), seed=FLAGS.lm_seed, **run) for h in heads}, rounds


def lm_config(spec):
    return LmConfig(**spec["config"])


def training_flops(config, batch_size, seq_length):
    """3x the forward matrix products of a step: per token and layer 8*d*h*d_p + 4*d*FFN + 4*h*n*d_p, + 2*d*V."""
    d, h, p = config.hidden_size, config.num_attention_heads, config.attention_head_size
    per_token = config.num_hidden_layers * (8 * d * h * p + 4 * d * config.intermediate_size + 4 * h * seq_length * p)
    return 3 * batch_size * seq_length * (per_token + 2 * d * config.vocab_size)


def batches_of(spec):
    return child.lm_batches(spec["seed"], spec["batch_size"], spec["seq_length"], spec["config"]["vocab_size"])


def make_dataset(spec):
    """Endless random batches in run_lm's schema, the first batch first."""
    return tf.data.Dataset.from_tensor_slices(batches_of(spec)).repeat().prefetch(1)


def round_tokens(spec, round_index):
    """Real tokens in the batches of round `round_index` (0: the first warm-up round)."""
    mask, steps = batches_of(spec)["input_mask"], spec["steps_per_round"]
    return sum(int(mask[(round_index * steps + i) % child.NUM_BATCHES].sum()) for i in range(steps))


def build_ours(spec, dtype, jit_compile):
    """run_lm's step: returns (run one round -> mean loss, parameter count)."""
    config = lm_config(spec)
    with harness.dtype_policy(dtype):
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=spec["batch_size"], learning_rate=spec["learning_rate"],
            iterations_per_loop=spec["steps_per_round"], save_checkpoints_steps=spec["num_train_steps"],
            random_seed=spec["seed"], dtype=dtype, jit_compile=jit_compile)
        strategy = process.prepare(options)  # As run_lm.py: seeds, dropout generators, policy.
        schedule = Schedule(spec["num_train_steps"], spec["num_warmup_steps"], "linear", config.hidden_size)
        task = language_modeling.lm_task(None, config, None, None)
        return harness.trainer_round(options, schedule, strategy, task, FAMILY.freezer(options, config),
                                     make_dataset(spec))


def build_model_garden(spec, dtype):
    """The same network from plain Model Garden layers: returns (run one round -> mean loss, parameters)."""
    config = lm_config(spec)
    tf_keras.utils.set_random_seed(spec["seed"])
    with harness.dtype_policy(dtype):
        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        embedding = layers.OnDeviceEmbedding(config.vocab_size, config.hidden_size, initializer=initializer)
        positions = layers.PositionEmbedding(max_length=config.max_position_embeddings, initializer=initializer)
        blocks = [layers.TransformerEncoderBlock(
            num_attention_heads=config.num_attention_heads, key_dim=config.attention_head_size,
            inner_dim=config.intermediate_size, inner_activation=config.hidden_act,
            output_dropout=config.hidden_dropout_prob, attention_dropout=config.attention_probs_dropout_prob,
            norm_first=True, norm_epsilon=1e-6, kernel_initializer=initializer)
            for _ in range(config.num_hidden_layers)]
        final_norm = tf_keras.layers.LayerNormalization(epsilon=1e-6, dtype=tf.float32)
        dropout = tf_keras.layers.Dropout(config.hidden_dropout_prob)
        output_bias = tf.Variable(tf.zeros([config.vocab_size]))
        optimizer = tf_keras.optimizers.AdamW(learning_rate=spec["learning_rate"], weight_decay=0.01, epsilon=1e-6,
                                              global_clipnorm=1.0)

        def forward(batch, training=True):
            word = embedding(batch["input_ids"])
            x = dropout(word + positions(word), training=training)
            length = tf.shape(batch["input_mask"])[1]
            causal = tf.linalg.band_part(tf.ones([length, length], tf.int32), -1, 0)
            mask = causal[tf.newaxis] * batch["input_mask"][:, tf.newaxis, :]
            for block in blocks:
                x = block([x, mask], training=training)
            x, table = tf.cast(final_norm(x), embedding.compute_dtype), tf.cast(embedding.embeddings,
                                                                                 embedding.compute_dtype)
            logits = tf.cast(tf.matmul(x, table, transpose_b=True), tf.float32) + output_bias
            weights = tf.cast(batch["input_mask"], tf.float32)
            nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch["target_ids"], logits=logits)
            return tf.reduce_sum(nll * weights) / tf.reduce_sum(weights)

        # Creates the variables, on a copy of the first batch: the iterator starts at it, as ours.
        forward({name: tf.constant(array[0]) for name, array in batches_of(spec).items()}, training=False)
        variables = (embedding.trainable_variables + positions.trainable_variables
                     + [v for block in blocks for v in block.trainable_variables] + final_norm.trainable_variables
                     + [output_bias])
        run_round = harness.training_round(forward, variables, optimizer, make_dataset(spec), spec["steps_per_round"])
    return run_round, sum(int(np.prod(v.shape)) for v in variables)


def build_contender(contender, dtype, spec):
    """In a child process: (run one loop call -> its mean loss, parameters)."""
    if contender == MODEL_GARDEN:
        return build_model_garden(spec, dtype)
    return build_ours(spec, dtype, jit_compile=contender == OURS_XLA)


def measure(spec, dtype, rounds, torch_python=None):
    """Runs the contenders of one (dtype, h) in turns, each in its own process: {name: results} (harness.take_turns)."""
    return harness.take_turns(harness.contender_commands(__file__, CONTENDERS, dtype, spec, torch_python, "lm_step"),
                              rounds["warmup"], rounds["timed"])


def run_shape(name, torch_python):
    """Measures one --lm_shape and prints its table, the FLOP lines and the lowest ours/peer of each dtype."""
    specs, rounds = settings(name)
    spec = specs[min(specs)]
    c = lm_config(spec)
    print("\nshape %s: layers=%d d=%d d_p=%d h=%s FFN=%d V=%d activation=%s dropout=%g; batch %d x %d tokens; %d "
          "steps per round; rate %g, %d warm-up of %d steps" % (
              name, c.num_hidden_layers, c.hidden_size, c.attention_head_size, ",".join(str(h) for h in specs),
              c.intermediate_size, c.vocab_size, c.hidden_act, c.hidden_dropout_prob, spec["batch_size"],
              spec["seq_length"], spec["steps_per_round"], spec["learning_rate"], spec["num_warmup_steps"],
              spec["num_train_steps"]))
    flops = {h: training_flops(lm_config(spec), spec["batch_size"], spec["seq_length"]) for h, spec in specs.items()}
    rows, ratios, seconds_per_token = [], {}, {}
    for dtype in FLAGS.lm_dtypes:
        for h, spec in specs.items():
            results = harness.run_row("%s h=%d" % (dtype, h), measure, spec, dtype, rounds, torch_python,
                                      agree=CONTENDERS + (PYTORCH,),
                                      warning="  WARNING: the contenders have different parameter counts.")
            names = list(results)
            tokens = [round_tokens(spec, rounds["warmup"] + i) for i in range(rounds["timed"])]
            rate = {n: statistics.median(t / s for t, s in zip(tokens, results[n]["seconds"])) for n in names}
            ours = harness.fastest(results, (OURS, OURS_XLA))
            peer = harness.fastest(results, names[2:])
            ratio = harness.paired_ratio(results[peer]["seconds"], results[ours]["seconds"])
            ratios.setdefault(dtype, []).append((ratio, h))
            seconds_per_token[dtype, h] = 1 / rate[OURS]
            row = [dtype, str(h), "%.1f" % (flops[h] / 1e9)]
            for n in names:
                row += ["%.0f" % rate[n], "%.0f" % (results[n]["peak_kb"] / 1024)]
            widest = max(harness.median_and_spread(results[n]["seconds"])[1] for n in names)
            rows.append(row + ["%.0f%%" % (100 * widest), ours, peer, "%.3f" % ratio])
    harness.print_table([
        "%s: tokens/s = median over rounds of real tokens / seconds; peak MB = VmHWM of each contender's own "
        "process;" % name,
        "spread = the widest (max - min) / median of the round times; ours/peer = median over rounds of the best "
        "peer's round time / the best of ours' (> 1: ours faster)"],
        ["dtype", "h", "GFLOP/step"] + [column % n for n in names for column in ("%s tok/s", "%s MB")]
        + ["spread", "best ours", "best peer", "ours/peer"], rows)
    low, high = min(specs), max(specs)
    for dtype in FLAGS.lm_dtypes if len(specs) > 1 else ():
        print("%s: ours' time per real token h=%d / h=%d = %.2f (medians of separate runs); FLOP ratio %.2f" % (
            dtype, high, low, seconds_per_token[dtype, high] / seconds_per_token[dtype, low], flops[high] / flops[low]))
    print("%s: ours against the best peer (%s), the lowest ours/peer of each dtype: %s" % (name, ", ".join(names[2:]), (
        "; ".join("%s %.3f (h=%d)" % ((dtype,) + min(pairs)) for dtype, pairs in ratios.items()))))


def run_shapes(torch_python):
    for name in FLAGS.lm_shape:
        run_shape(name, torch_python)


def main(argv):
    del argv  # Unused.
    return harness.main_of(
        build_contender, "LM training step benchmark: run_lm.py's loop (%s, and %s with --jit_compile) vs plain Model "
        "Garden (%s) and PyTorch (%s), tokens/s and peak memory" % (OURS, OURS_XLA, MODEL_GARDEN, PYTORCH),
        ["timing: one child process per contender, dtype and h; %s untimed + %s timed rounds of one loop call each, "
         "taking turns%s" % (1 if FLAGS.quick else FLAGS.lm_warmup_rounds, 1 if FLAGS.quick else FLAGS.lm_timed_rounds,
                             " [--quick: a tiny model, figures are meaningless]" if FLAGS.quick else "")],
        "torch.nn causal Transformer LM + torch.compile (benchmarks/torch_peers.py)", run_shapes)


if __name__ == "__main__":
    app.run(main)
