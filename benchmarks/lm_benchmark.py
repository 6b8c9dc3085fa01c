"""Language-model training throughput (tokens/s): run_lm.py's step vs plain Model Garden, 8 vs 64 heads.

The lm1b_paper model (6 layers, d = 256, d_p = 32, FFN 1024, V = 32000,
sequences of 256 tokens) at h = 8 and h = 64, in float32 and bfloat16.

"ours" is the step run_lm.py runs: the Task of
`training.language_modeling.lm_task` (TransformerLm, the masked next-token
loss) built by `training.trainer.Trainer` (AdamW, freezing plan, the compiled
loop of `Trainer.make_loop()`). "baseline" is the same network written with
plain Model Garden layers (OnDeviceEmbedding, PositionEmbedding,
TransformerEncoderBlock(norm_first=True, key_dim=32) under a causal mask, a
tied output layer), tf_keras AdamW with the same clipping and decay, and a
tf.function loop over tf.range. Both read the same random batches.

Contenders run in this one process, every head count and contender taking
turns (h = 8 ours, baseline, h = 64 ours, baseline, ...), one loop call each,
so that load drift on a shared machine affects all alike; the figure is the
median round. Then the ratio of the h = 64 and h = 8 step times (per real
token, the median of the per-round ratios) is set beside the ratio of their
training FLOPs (3x the forward
matrix products: per token and layer 8*d*h*d_p + 4*d*FFN + 4*h*n*d_p, plus
2*d*V for the output layer; h = 64 costs 2.2x). Token counts exclude padding.

Usage, from the repository root:
  .venv/bin/python benchmarks/lm_benchmark.py [--quick]
"""

import dataclasses
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

FLAGS = flags.FLAGS
flags.DEFINE_list("lm_heads", ["8", "64"], "Head counts h compared (d_p = 32 each).")
flags.DEFINE_list("lm_dtypes", ["float32", "bfloat16"], "--dtype values.")
flags.DEFINE_integer("lm_batch_size", 8, "Sequences per step.")
flags.DEFINE_integer("lm_seq_length", 256, "Tokens per sequence (padded length).")
flags.DEFINE_integer("lm_steps_per_round", 2, "Training steps per timed loop call.")
flags.DEFINE_integer("lm_timed_rounds", 9, "Timed rounds per contender (after one untimed round).")
flags.DEFINE_bool("lm_quick", False, "A tiny model, one timed round: checks that the script runs; "
                  "the figures mean nothing.")

_PAPER = dict(hidden_size=256, num_hidden_layers=6, head_size=32, intermediate_size=1024, vocab_size=32000)
_QUICK = dict(hidden_size=32, num_hidden_layers=1, head_size=8, intermediate_size=64, vocab_size=100)
_NUM_BATCHES = 4


def training_flops(config, batch_size, seq_length):
    """3x the forward matrix-product FLOPs of a step (see the module docstring)."""
    d, h, p, inner = config.hidden_size, config.num_attention_heads, config.attention_head_size, config.intermediate_size
    per_token = config.num_hidden_layers * (8 * d * h * p + 4 * d * inner + 4 * h * seq_length * p)
    per_token += 2 * d * config.vocab_size
    return 3 * batch_size * seq_length * per_token


def make_dataset(config, batch_size, seq_length, seed=1):
    """Endless random batches in run_lm's schema; sequences of 1/2 to full length."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    shape = (_NUM_BATCHES, batch_size, seq_length)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    mask = (np.arange(seq_length)[None, None, :] < lengths).astype(np.int32)
    ids = rng.integers(4, config.vocab_size, size=shape, dtype=np.int32) * mask
    arrays = dict(input_ids=ids, target_ids=np.roll(ids, -1, axis=-1) * mask, input_mask=mask,
                  num_chars=np.zeros(shape[:2], np.int32))
    return tf.data.Dataset.from_tensor_slices(arrays).repeat().prefetch(1), int(mask.sum()) // _NUM_BATCHES


def build_ours(config, dtype, dataset, batch_size, steps):
    """run_lm's step: returns a callable running `steps` steps."""
    import tensorflow as tf

    from benchmarks import benchmark_utils
    from lm import model as transformer_lm
    from lm.parameter_groups import PARAMETER_GROUPS
    from training import distribution, run_setup
    from lm import task as language_modeling
    from training import trainer as trainer_lib
    from training.training_options import Schedule, TrainingOptions

    with benchmark_utils.dtype_policy(dtype):
        task = dataclasses.replace(language_modeling.lm_task(None, config, None, None),
                                   make_dataset=lambda batch, context: dataset)
        options = TrainingOptions(output_dir=tempfile.mkdtemp(), train_batch_size=batch_size, learning_rate=1e-3,
                                  iterations_per_loop=steps, dtype=dtype)
        freezer = run_setup.make_freezer(options, PARAMETER_GROUPS, config.num_hidden_layers,
                                         transformer_lm.initializers(config))
        trainer = trainer_lib.Trainer(options, Schedule(100000, 1000), distribution.get_strategy(options), task,
                                      freezer)
        loop = trainer.make_loop()
    return lambda: loop(trainer.iterator, tf.constant(steps)).numpy()


def build_baseline(config, dtype, dataset, batch_size, steps):
    """The same network from plain Model Garden layers: returns a callable running `steps` steps."""
    import tensorflow as tf
    import tf_keras
    from official.nlp.modeling import layers

    from benchmarks import benchmark_utils

    with benchmark_utils.dtype_policy(dtype):
        d = config.hidden_size
        embedding = layers.OnDeviceEmbedding(config.vocab_size, d)
        positions = layers.PositionEmbedding(max_length=config.max_position_embeddings)
        blocks = [layers.TransformerEncoderBlock(
            num_attention_heads=config.num_attention_heads, key_dim=config.attention_head_size,
            inner_dim=config.intermediate_size, inner_activation="relu", output_dropout=0.1,
            attention_dropout=0.1, norm_first=True, norm_epsilon=1e-6) for _ in range(config.num_hidden_layers)]
        final_norm = tf_keras.layers.LayerNormalization(epsilon=1e-6, dtype=tf.float32)
        dropout = tf_keras.layers.Dropout(0.1)
        output_bias = tf.Variable(tf.zeros([config.vocab_size]))
        optimizer = tf_keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=0.01, epsilon=1e-6,
                                              global_clipnorm=1.0)
        iterator = iter(dataset)

        def forward(batch):
            word = embedding(batch["input_ids"])
            x = dropout(word + positions(word), training=True)
            length = tf.shape(batch["input_mask"])[1]
            causal = tf.linalg.band_part(tf.ones([length, length], tf.int32), -1, 0)
            mask = causal[tf.newaxis] * batch["input_mask"][:, tf.newaxis, :]
            for block in blocks:
                x = block([x, mask], training=True)
            x = final_norm(x)
            logits = tf.matmul(tf.cast(x, embedding.compute_dtype), tf.cast(embedding.embeddings, embedding.compute_dtype),
                               transpose_b=True)
            logits = tf.cast(logits, tf.float32) + output_bias
            weights = tf.cast(batch["input_mask"], tf.float32)
            nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch["target_ids"], logits=logits)
            return tf.reduce_sum(nll * weights) / tf.reduce_sum(weights)

        forward(next(iterator))  # Creates the variables.
        variables = (embedding.trainable_variables + positions.trainable_variables
                     + [v for b in blocks for v in b.trainable_variables] + final_norm.trainable_variables
                     + [output_bias])
        optimizer.build(variables)

        @tf.function
        def loop(num_steps):
            total = 0.0
            for _ in tf.range(num_steps):
                with tf.GradientTape() as tape:
                    loss = forward(next(iterator))
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
                total += loss
            return total / tf.cast(num_steps, tf.float32)
    return lambda: loop(tf.constant(steps)).numpy()


def _config(heads, quick):
    from lm.config import LmConfig

    shape = _QUICK if quick else _PAPER
    return LmConfig(num_attention_heads=heads, max_position_embeddings=max(256, FLAGS.lm_seq_length), **shape)


def measure(configs, dtype, batch_size, seq_length, steps, rounds):
    """Times ours and the baseline at every head count, all taking turns.

    Every round runs each (h, contender) once, so load drift on a shared
    machine reaches all of them alike, and the h = 64 / h = 8 ratio can be
    taken within a round.

    Args:
      configs: {h: LmConfig}.

    Returns:
      ({(h, contender): [seconds per step, one per timed round]},
       {h: real tokens per step}).
    """
    runs, tokens = {}, {}
    for h, config in configs.items():
        dataset, tokens[h] = make_dataset(config, batch_size, seq_length)
        runs[h, "ours"] = build_ours(config, dtype, dataset, batch_size, steps)
        runs[h, "baseline"] = build_baseline(config, dtype, dataset, batch_size, steps)
    times = {key: [] for key in runs}
    for round_index in range(rounds + 1):
        for key, run in runs.items():
            start = time.perf_counter()
            run()
            if round_index:  # The first round traces.
                times[key].append((time.perf_counter() - start) / steps)
    return times, tokens


def main(_):
    from benchmarks import benchmark_utils

    quick = FLAGS.lm_quick
    batch, seq = (2, 16) if quick else (FLAGS.lm_batch_size, FLAGS.lm_seq_length)
    rounds = 1 if quick else FLAGS.lm_timed_rounds
    heads = [int(h) for h in FLAGS.lm_heads]
    print("LM training throughput, %s, %d usable CPUs (%s)" % (
        benchmark_utils.cpu_model(), benchmark_utils.usable_cpus(), ", ".join(benchmark_utils.cpu_flags())))
    print("model: %s; batch %d x %d tokens; %d steps per round, median of %d rounds, every h and contender "
          "taking turns%s" % (
              ", ".join("%s=%s" % item for item in (_QUICK if quick else _PAPER).items()), batch, seq,
              FLAGS.lm_steps_per_round, rounds, " (--lm_quick: figures mean nothing)" if quick else ""))
    print("%-9s %-4s %12s %12s %12s %10s %12s" % ("dtype", "h", "GFLOP/step", "ours tok/s", "base tok/s",
                                                  "ours/base", "ours GFLOP/s"))
    configs = {h: _config(h, quick) for h in heads}
    for dtype in FLAGS.lm_dtypes:
        times, tokens = measure(configs, dtype, batch, seq, FLAGS.lm_steps_per_round, rounds)
        for h, config in configs.items():
            ours, baseline = times[h, "ours"], times[h, "baseline"]
            flops = training_flops(config, batch, seq)
            paired = statistics.median(b / o for o, b in zip(ours, baseline))
            print("%-9s %-4d %12.1f %12.1f %12.1f %10.2f %12.1f" % (
                dtype, h, flops / 1e9, tokens[h] / statistics.median(ours),
                tokens[h] / statistics.median(baseline), paired, flops / statistics.median(ours) / 1e9))
        if len(heads) == 2:
            low, high = heads
            flop_ratio = training_flops(configs[high], batch, seq) / training_flops(configs[low], batch, seq)
            # Seconds per real token, so that the two random datasets' padding does not count.
            time_ratio = statistics.median(
                (slow / tokens[high]) / (fast / tokens[low])
                for slow, fast in zip(times[high, "ours"], times[low, "ours"]))
            print("%s: step time h=%d / h=%d = %.2f (per real token, paired by round); FLOP ratio %.2f; "
                  "off by %+.0f%% (goal: within 10%%)" % (
                      dtype, high, low, time_ratio, flop_ratio, 100 * (time_ratio / flop_ratio - 1)))


if __name__ == "__main__":
    app.run(main)
