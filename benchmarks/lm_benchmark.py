"""Language-model training throughput (tokens/s) and peak memory: run_lm.py's step vs its peers.

Contenders, each training a causal Transformer LM of the same shape:

  ours          the step run_lm.py runs: `process.prepare` (seeds, tf.random dropout generators, the
                dtype policy, the strategy), the Task of `lm.task.lm_task` (TransformerLm, the masked
                next-token loss) with an in-memory dataset, built by `training.trainer.Trainer` (our
                AdamW without bias correction, clipping at 1.0, warm-up + linear decay, the freezing
                plan) and the loop of `Trainer.make_loop()`: `loop(iterator, tf.constant(n))` runs n
                steps in one tf.function call;
  ours-xla      the same with TrainingOptions(jit_compile=True) (--jit_compile): each step one XLA program;
  model-garden  the same network from plain Model Garden layers (OnDeviceEmbedding, PositionEmbedding,
                TransformerEncoderBlock(norm_first=True, key_dim=d_p) under a causal mask, a tied output
                layer), tf_keras AdamW (bias-corrected, decay on every variable, constant rate, clipping
                at 1.0) and a tf.function loop over tf.range;
  pytorch       torch_peers.lm_step in the --torch_python interpreter: the same model in torch.nn with
                scaled_dot_product_attention(is_causal=True), torch AdamW with our settings (torch
                bias-corrects), torch.compile; skipped with a printed note when no interpreter with torch
                is at hand.

Shapes (--lm_shape, one table each):

  small  lm_figure1's fixed-head-size family at reproduce_paper_tables.py --scale=small
         (studies/lm/experiments.py SMALL): 3 layers, d = 128, d_p = 16, h = 4, 16, 32, FFN 512, V =
         4000, batch 64 x 32 tokens, its learning rate and schedule (2e-3, 120 warm-up of 1200 steps);
         5 steps per round;
  paper  the lm1b_paper model (lm/presets.py): 6 layers, d = 256, d_p = 32, h = 8, 64, FFN 1024, V =
         32000, batch 8 x 256 tokens, rate 1e-3 with 1000 warm-up of 100000 steps; 2 steps per round.

All contenders read the same random batches in run_lm.py's schema (child.lm_batches). Every
(contender, dtype, h) runs in its own child process; the children of one (dtype, h) take turns
(harness.py), one round (one loop call) each: --lm_warmup_rounds untimed rounds, then
--lm_timed_rounds timed ones.

Figures: tokens/s is the median over the timed rounds of real (not padding) tokens / seconds (every
contender reads the same batches in a round); peak MB is the child's VmHWM. "ours" in the ratio is
the faster (median) of ours and ours-xla, named; the best peer the faster of model-garden and pytorch
in that row; ours/peer is their paired ratio; the last line gives the lowest ours/peer of each dtype.
An informational line per dtype sets ours' time per real token at the largest h over the smallest
beside their training FLOP ratio (3x the forward matrix products: per token and layer 8*d*h*d_p +
4*d*FFN + 4*h*n*d_p, plus 2*d*V for the output layer), from the medians of separate runs (not paired).

Usage, from the repository root:
  .venv/bin/python benchmarks/lm_benchmark.py [--torch_python=/path/to/python]
      [--lm_shape=small,paper] [--lm_dtypes=float32,bfloat16] [--quick]
"""

import dataclasses
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402

FLAGS = flags.FLAGS

OURS, OURS_XLA, MODEL_GARDEN, PYTORCH = "ours", "ours-xla", "model-garden", "pytorch"
TF_CONTENDERS = (OURS, OURS_XLA, MODEL_GARDEN)
SHAPES = ("small", "paper")

harness.define_quick_flag()
harness.define_torch_python_flag()
flags.DEFINE_list("lm_shape", list(SHAPES), "Shapes measured, one table each: small (lm_figure1 at --scale=small), "
                  "paper (the lm1b_paper model).")
flags.DEFINE_list("lm_heads", None, "Head counts h (d_p fixed by the shape). Default: the shape's (small 4,16,32; "
                  "paper 8,64; with --quick its first and last).")
flags.DEFINE_list("lm_dtypes", ["float32", "bfloat16"], "--dtype values.")
flags.DEFINE_integer("lm_steps_per_round", None, "Training steps per timed loop call. Default: the shape's "
                     "(small 5, paper 2).")
flags.DEFINE_integer("lm_warmup_rounds", 2, "Untimed rounds per contender (>= 1; the first one traces and compiles).")
flags.DEFINE_integer("lm_timed_rounds", 9, "Timed rounds per contender.")
flags.DEFINE_integer("lm_seed", 1, "Seed of the weights and of the batches.")

# --quick: every shape becomes this tiny model (its head counts: the shape's first and last).
_QUICK_MODEL = dict(num_hidden_layers=1, hidden_size=32, head_size=8, intermediate_size=64, vocab_size=100,
                    max_position_embeddings=32)
_QUICK_RUN = dict(batch_size=2, seq_length=16, steps_per_round=2)


def shape_configs(name):
    """({h: LmConfig}, run settings) of a --lm_shape at full size."""
    from lm.config import LmConfig

    if name == "small":
        from studies.lm import experiments

        scale = experiments.SMALL
        # The fixed-head-size family of Fig. 1 (its standard partners have other d).
        rows = [row for row in scale.rows(experiments.EXPERIMENTS["lm_figure1"]) if row.head_size]
        configs = {row.num_heads: scale.config(row).replace(vocab_size=scale.vocab_size) for row in rows}
        assert scale.learning_rate_schedule == "linear", scale
        return configs, dict(batch_size=scale.train_batch_size, seq_length=scale.max_seq_length,
                             learning_rate=scale.learning_rate, num_train_steps=scale.num_train_steps,
                             num_warmup_steps=scale.num_warmup_steps, steps_per_round=5)
    if name == "paper":
        from lm import presets

        preset = presets.PRESETS["lm1b_paper"]
        configs = {h: LmConfig(vocab_size=preset["vocab_size"], num_attention_heads=h,
                               max_position_embeddings=preset["max_seq_length"]) for h in (8, 64)}
        return configs, dict(batch_size=8, seq_length=preset["max_seq_length"], learning_rate=1e-3,
                             num_train_steps=100000, num_warmup_steps=1000, steps_per_round=2)
    raise ValueError("Unknown --lm_shape %r; expected one of %s." % (name, ", ".join(SHAPES)))


def settings(name):
    """({h: child spec}, rounds dict) of a --lm_shape, with --quick and the flags applied."""
    configs, run = shape_configs(name)
    heads = sorted(configs)
    if FLAGS.quick:
        heads = sorted({heads[0], heads[-1]})
        configs = {h: configs[h].replace(num_attention_heads=h, **_QUICK_MODEL) for h in heads}
        run.update(_QUICK_RUN)
    if FLAGS.lm_heads:
        template = configs[heads[0]]
        heads = [int(h) for h in FLAGS.lm_heads]
        configs = {h: configs.get(h, template.replace(num_attention_heads=h)) for h in heads}
    if FLAGS.lm_steps_per_round and not FLAGS.quick:
        run["steps_per_round"] = FLAGS.lm_steps_per_round
    rounds = dict(warmup=1, timed=1) if FLAGS.quick else dict(warmup=FLAGS.lm_warmup_rounds,
                                                               timed=FLAGS.lm_timed_rounds)
    return {h: child_spec(configs[h], run, FLAGS.lm_seed) for h in heads}, rounds


def child_spec(config, run, seed):
    """The JSON-able spec a child builds its contender from (the PyTorch peer's too)."""
    if config.attention_probs_dropout_prob != config.hidden_dropout_prob:
        raise ValueError("The PyTorch peer takes one dropout rate: %s." % config)
    return dict(num_layers=config.num_hidden_layers, hidden_size=config.hidden_size,
                num_heads=config.num_attention_heads, head_size=config.attention_head_size,
                intermediate_size=config.intermediate_size, vocab_size=config.vocab_size,
                max_position_embeddings=config.max_position_embeddings, hidden_act=config.hidden_act,
                dropout=config.hidden_dropout_prob, initializer_range=config.initializer_range, seed=seed, **run)


def lm_config(spec):
    """The LmConfig of a child spec."""
    from lm.config import LmConfig

    return LmConfig(vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
                    num_hidden_layers=spec["num_layers"], num_attention_heads=spec["num_heads"],
                    head_size=spec["head_size"], intermediate_size=spec["intermediate_size"],
                    hidden_act=spec["hidden_act"], hidden_dropout_prob=spec["dropout"],
                    attention_probs_dropout_prob=spec["dropout"],
                    max_position_embeddings=spec["max_position_embeddings"],
                    initializer_range=spec["initializer_range"])


def training_flops(config, batch_size, seq_length):
    """3x the forward matrix-product FLOPs of a step (see the module docstring)."""
    d, h, p = config.hidden_size, config.num_attention_heads, config.attention_head_size
    per_token = config.num_hidden_layers * (8 * d * h * p + 4 * d * config.intermediate_size + 4 * h * seq_length * p)
    return 3 * batch_size * seq_length * (per_token + 2 * d * config.vocab_size)


def batches_of(spec):
    return child.lm_batches(spec["seed"], spec["batch_size"], spec["seq_length"], spec["vocab_size"])


def make_dataset(spec):
    """Endless random batches in run_lm's schema, the first batch first."""
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(batches_of(spec)).repeat().prefetch(1)


def round_tokens(spec, round_index):
    """Real tokens in the batches of round `round_index` (0: the first warm-up round)."""
    mask = batches_of(spec)["input_mask"]
    steps = spec["steps_per_round"]
    return sum(int(mask[(round_index * steps + i) % child.NUM_BATCHES].sum()) for i in range(steps))


def build_ours(spec, dtype, jit_compile=False):
    """run_lm's step: returns (run one round -> mean loss, parameter count)."""
    import tensorflow as tf

    from lm import task as language_modeling
    from lm.family import FAMILY
    from training import process
    from training import trainer as trainer_lib
    from training.training_options import Schedule, TrainingOptions

    config, dataset = lm_config(spec), make_dataset(spec)
    with harness.dtype_policy(dtype):
        options = TrainingOptions(
            output_dir=tempfile.mkdtemp(), train_batch_size=spec["batch_size"], learning_rate=spec["learning_rate"],
            iterations_per_loop=spec["steps_per_round"], save_checkpoints_steps=spec["num_train_steps"],
            random_seed=spec["seed"], dtype=dtype, jit_compile=jit_compile)
        strategy = process.prepare(options)  # As run_lm.py: seeds, dropout generators, policy.
        task = dataclasses.replace(language_modeling.lm_task(None, config, None, None),
                                   make_dataset=lambda batch_size, context: dataset)
        schedule = Schedule(spec["num_train_steps"], spec["num_warmup_steps"], "linear", config.hidden_size)
        trainer = trainer_lib.Trainer(options, schedule, strategy, task, FAMILY.freezer(options, config))
        loop = trainer.make_loop()
    num_steps = tf.constant(spec["steps_per_round"])
    return (lambda: float(loop(trainer.iterator, num_steps).numpy()[0])), trainer.model.count_params()


def build_model_garden(spec, dtype):
    """The same network from plain Model Garden layers: returns (run one round -> mean loss, parameters)."""
    import numpy as np
    import tensorflow as tf
    import tf_keras
    from official.nlp.modeling import layers

    config, dataset = lm_config(spec), make_dataset(spec)
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
        iterator = iter(dataset)

        def forward(batch, training=True):
            word = embedding(batch["input_ids"])
            x = dropout(word + positions(word), training=training)
            length = tf.shape(batch["input_mask"])[1]
            causal = tf.linalg.band_part(tf.ones([length, length], tf.int32), -1, 0)
            mask = causal[tf.newaxis] * batch["input_mask"][:, tf.newaxis, :]
            for block in blocks:
                x = block([x, mask], training=training)
            x = final_norm(x)
            logits = tf.matmul(tf.cast(x, embedding.compute_dtype), tf.cast(embedding.embeddings,
                                                                             embedding.compute_dtype), transpose_b=True)
            logits = tf.cast(logits, tf.float32) + output_bias
            weights = tf.cast(batch["input_mask"], tf.float32)
            nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch["target_ids"], logits=logits)
            return tf.reduce_sum(nll * weights) / tf.reduce_sum(weights)

        # Creates the variables, on a copy of the first batch: the iterator starts at it, as ours.
        forward({name: tf.constant(array[0]) for name, array in batches_of(spec).items()}, training=False)
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

    num_steps = tf.constant(spec["steps_per_round"])
    return (lambda: float(loop(num_steps).numpy())), sum(int(np.prod(v.shape)) for v in variables)


def build_contender(contender, dtype, spec):
    """In a child process: (run one loop call -> its mean loss, parameters)."""
    if contender == MODEL_GARDEN:
        return build_model_garden(spec, dtype)
    return build_ours(spec, dtype, jit_compile=contender == OURS_XLA)


def contenders(torch_python):
    """The contenders' names: ours, ours-xla, model-garden, and pytorch given its interpreter."""
    return TF_CONTENDERS + ((PYTORCH,) if torch_python else ())


def child_command(contender, dtype, spec, torch_python=None):
    """The command line of one contender's child process."""
    if contender == PYTORCH:
        return harness.peer_command(torch_python, "lm_step", dtype, spec)
    return harness.child_command(__file__, contender, dtype, spec)


def measure(spec, dtype, rounds, torch_python=None):
    """Runs the contenders of one (dtype, h) in turns; returns {name: results} (harness.take_turns)."""
    commands = {name: child_command(name, dtype, spec, torch_python) for name in contenders(torch_python)}
    return harness.take_turns(commands, rounds["warmup"], rounds["timed"])


def summarize(spec, results, rounds):
    """{name: tokens/s, spread, peak MB}, the best of ours and the best peer, ours/peer (paired)."""
    tokens = [round_tokens(spec, rounds["warmup"] + i) for i in range(rounds["timed"])]
    figures = {name: dict(tokens_per_second=statistics.median(count / seconds for count, seconds in
                                                              zip(tokens, result["seconds"])),
                          spread=harness.median_and_spread(result["seconds"])[1], peak_mb=result["peak_kb"] / 1024)
               for name, result in results.items()}
    ours = harness.fastest(results, (OURS, OURS_XLA))
    peer = harness.fastest(results, [name for name in results if name not in (OURS, OURS_XLA)])
    return figures, ours, peer, harness.paired_ratio(results[peer]["seconds"], results[ours]["seconds"])


def shape_line(name, specs):
    spec = next(iter(specs.values()))
    return ("shape %s: layers=%d d=%d d_p=%d h=%s FFN=%d V=%d activation=%s dropout=%g; batch %d x %d tokens; %d "
            "steps per round; rate %g, %d warm-up of %d steps"
            % (name, spec["num_layers"], spec["hidden_size"], spec["head_size"], ",".join(str(h) for h in specs),
               spec["intermediate_size"], spec["vocab_size"], spec["hidden_act"], spec["dropout"],
               spec["batch_size"], spec["seq_length"], spec["steps_per_round"], spec["learning_rate"],
               spec["num_warmup_steps"], spec["num_train_steps"]))


def run_shape(name, torch_python):
    """Measures one --lm_shape and prints its table; returns {dtype: [(ours/peer ratio, h)]}."""
    specs, rounds = settings(name)
    names = contenders(torch_python)
    print()
    print(shape_line(name, specs))
    rows, ratios, seconds_per_token = [], {}, {}
    for dtype in FLAGS.lm_dtypes:
        for h, spec in specs.items():
            start = time.perf_counter()
            results = measure(spec, dtype, rounds, torch_python)
            print(harness.progress_line("%s h=%d" % (dtype, h), time.perf_counter() - start, results), flush=True)
            if len({results[n]["params"] for n in names}) > 1:
                print("  WARNING: the contenders have different parameter counts.")
            figures, ours, peer, ratio = summarize(spec, results, rounds)
            ratios.setdefault(dtype, []).append((ratio, h))
            seconds_per_token[dtype, h] = 1 / figures[OURS]["tokens_per_second"]
            flops = training_flops(lm_config(spec), spec["batch_size"], spec["seq_length"])
            row = [dtype, str(h), "%.1f" % (flops / 1e9)]
            for n in names:
                row += ["%.0f" % figures[n]["tokens_per_second"], "%.0f" % figures[n]["peak_mb"]]
            rows.append(row + ["%.0f%%" % (100 * max(figures[n]["spread"] for n in names)), ours, peer,
                               "%.3f" % ratio])
    header = ["dtype", "h", "GFLOP/step"]
    for n in names:
        header += ["%s tok/s" % n, "%s MB" % n]
    harness.print_table([
        "%s: tokens/s = median over rounds of real tokens / seconds; peak MB = VmHWM of each contender's own "
        "process;" % name,
        "spread = the widest (max - min) / median of the round times; ours/peer = median over rounds of the best "
        "peer's round time / the best of ours' (> 1: ours faster)"],
        header + ["spread", "best ours", "best peer", "ours/peer"], rows)
    heads = list(specs)
    for dtype in FLAGS.lm_dtypes:
        if len(heads) > 1:
            low, high = heads[0], heads[-1]
            flops = [training_flops(lm_config(specs[h]), specs[h]["batch_size"], specs[h]["seq_length"])
                     for h in (low, high)]
            print("%s: ours' time per real token h=%d / h=%d = %.2f (medians of separate runs); FLOP ratio %.2f"
                  % (dtype, high, low, seconds_per_token[dtype, high] / seconds_per_token[dtype, low],
                     flops[1] / flops[0]))
    worst = "; ".join("%s %.3f (h=%d)" % ((dtype,) + min(pairs)) for dtype, pairs in ratios.items())
    print("%s: ours against the best peer (%s), the lowest ours/peer of each dtype: %s"
          % (name, ", ".join(names[2:]), worst))
    return ratios


def main(argv):
    del argv  # Unused.
    if FLAGS.bench_child:
        return harness.serve_child(build_contender)
    harness.check_rounds(lm_warmup_rounds=FLAGS.lm_warmup_rounds, lm_timed_rounds=FLAGS.lm_timed_rounds,
                         lm_steps_per_round=FLAGS.lm_steps_per_round)
    harness.check_among("lm_dtypes", FLAGS.lm_dtypes, ("float32", "bfloat16"))
    harness.check_among("lm_shape", FLAGS.lm_shape, SHAPES)
    torch_python, why_not = harness.torch_interpreter(FLAGS.torch_python)
    harness.print_header(
        "LM training step benchmark: run_lm.py's loop (%s, and %s with --jit_compile) vs plain Model Garden (%s) "
        "and PyTorch (%s), tokens/s and peak memory" % (OURS, OURS_XLA, MODEL_GARDEN, PYTORCH),
        "timing: one child process per contender, dtype and h; %s untimed + %s timed rounds of one loop call each, "
        "taking turns%s" % (1 if FLAGS.quick else FLAGS.lm_warmup_rounds, 1 if FLAGS.quick else FLAGS.lm_timed_rounds,
                            " [--quick: a tiny model, figures are meaningless]" if FLAGS.quick else ""),
        harness.torch_line(torch_python, why_not, "torch.nn causal Transformer LM + torch.compile "
                           "(benchmarks/torch_peers.py)"))
    begin = time.perf_counter()
    for name in FLAGS.lm_shape:
        run_shape(name, torch_python)
    print()
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
