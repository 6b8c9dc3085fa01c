"""Speed of a projection's weight gradient: einsum's gradient vs `ProductDense`'s.

For each shape (tokens x K -> N; the language model's and BERT's projections by default) it times, in
float32, inside one tf.function each:

  forward     the 2-D product x W (for scale: the speed the gradient could have)
  einsum      d(sum(einsum(x, W) * dy)) / dW, what `EinsumDense` runs
  product     the same through `layers.product_dense.projection`, what `ProductDense` runs (see that
              module for why it differs)

as GFLOP/s (2 * tokens * K * N per product), rounds interleaved (harness.interleave), medians.

Usage, from the repository root:
  .venv/bin/python benchmarks/dense_gradient_benchmark.py [--dense_rounds=15]
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import harness  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("dense_shapes", ["2048x256x2048", "2048x2048x256", "2048x256x1024", "2048x1024x256",
                                   "2048x256x256", "4096x512x512", "4096x512x2048", "4096x2048x512"],
                  "tokens x K x N of each projection: the LM step at h = 64 (d 256 -> 64 x 32 and back, FFN 1024, "
                  "h = 8's 256 x 256), then BERT's pre-training step shapes (batch 32 x 128 tokens, hidden 512, "
                  "FFN 2048).")
flags.DEFINE_integer("dense_rounds", 15, "Timed rounds (each way once per round) after 3 untimed ones.")

WAYS = ("forward", "einsum", "product")


def make_ways(tokens, k, n):
    """{way: a callable running it and fetching its result}, all on the same random float32 operands."""
    import tensorflow as tf

    from layers.product_dense import projection

    x = tf.random.stateless_normal([tokens, k], [1, 2])
    upstream = tf.random.stateless_normal([tokens, n], [3, 4])
    kernel = tf.Variable(tf.random.stateless_normal([k, n], [5, 6]))

    def weight_gradient(product):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(product(x, kernel) * upstream)
        return tape.gradient(loss, kernel)

    functions = dict(
        forward=tf.function(lambda: tf.matmul(x, kernel)),
        einsum=tf.function(lambda: weight_gradient(lambda a, b: tf.einsum("tk,kn->tn", a, b))),
        product=tf.function(lambda: weight_gradient(lambda a, b: projection(a, tf.convert_to_tensor(b), 1, 1))),
    )
    return {way: (lambda function=function: function().numpy()) for way, function in functions.items()}


def measure(tokens, k, n, rounds):
    """{way: median GFLOP/s}."""
    seconds, _ = harness.interleave(make_ways(tokens, k, n), rounds, warmup=3)
    return {way: 2.0 * tokens * k * n / statistics.median(values) / 1e9 for way, values in seconds.items()}


def main(argv):
    del argv
    harness.print_header("Dense gradient benchmark: einsum's weight gradient vs ProductDense's",
                         "float32, GFLOP/s (median of %d rounds)" % FLAGS.dense_rounds)
    rows = []
    for shape in FLAGS.dense_shapes:
        tokens, k, n = (int(part) for part in shape.split("x"))
        speeds = measure(tokens, k, n, FLAGS.dense_rounds)
        rows.append(["%d x %d -> %d" % (tokens, k, n)] + ["%.0f" % speeds[way] for way in WAYS]
                    + ["%.2f" % (speeds["product"] / speeds["einsum"])])
    print(harness.format_table(["tokens x K -> N"] + list(WAYS) + ["product/einsum"], rows))
    return 0


if __name__ == "__main__":
    app.run(main)
