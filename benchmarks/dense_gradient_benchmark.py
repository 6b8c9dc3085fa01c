"""Speed of a projection's weight gradient: einsum's gradient vs `ProductDense`'s, in GFLOP/s.

  .venv/bin/python benchmarks/dense_gradient_benchmark.py [--dense_shapes=...] [--dense_rounds=15]

Contenders, shapes and how rounds are timed: docs/performance.md, section "Projection weight gradients".
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("dense_shapes", ["2048x256x2048", "2048x2048x256", "2048x256x1024", "2048x1024x256",
                                   "2048x256x256", "4096x512x512", "4096x512x2048", "4096x2048x512"],
                  "tokens x K x N of each projection (the defaults: docs/performance.md).")
flags.DEFINE_integer("dense_rounds", 15, "Timed rounds (each way once per round) after 3 untimed ones.", lower_bound=1)


def measure(shape, rounds):
    """The table row of `shape` (tokens x K x N): median GFLOP/s of the forward product, einsum's and
    `projection`'s weight gradients (the docs), and product/einsum."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from layers.product_dense import projection  # pylint: disable=import-outside-toplevel

    tokens, k, n = (int(part) for part in shape.split("x"))
    x, upstream = tf.random.stateless_normal([tokens, k], [1, 2]), tf.random.stateless_normal([tokens, n], [3, 4])
    kernel = tf.Variable(tf.random.stateless_normal([k, n], [5, 6]))

    def weight_gradient(product):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(product(x, kernel) * upstream)
        return tape.gradient(loss, kernel)

    functions = dict(forward=lambda: tf.matmul(x, kernel),
                     einsum=lambda: weight_gradient(lambda a, b: tf.einsum("tk,kn->tn", a, b)),
                     product=lambda: weight_gradient(lambda a, b: projection(a, tf.convert_to_tensor(b), 1, 1)))
    seconds, _ = harness.interleave({way: lambda run=tf.function(function): run().numpy()
                                     for way, function in functions.items()}, rounds, warmup=3)
    speeds = {way: 2.0 * tokens * k * n / statistics.median(values) / 1e9 for way, values in seconds.items()}
    return (["%d x %d -> %d" % (tokens, k, n)] + ["%.0f" % speed for speed in speeds.values()]
            + ["%.2f" % (speeds["product"] / speeds["einsum"])])


def main(argv):
    del argv
    harness.print_header("Dense gradient benchmark: einsum's weight gradient vs ProductDense's",
                         "float32, GFLOP/s (median of %d rounds)" % FLAGS.dense_rounds)
    harness.print_table([], ["tokens x K -> N", "forward", "einsum", "product", "product/einsum"],
                        [measure(shape, FLAGS.dense_rounds) for shape in FLAGS.dense_shapes])
    return 0


if __name__ == "__main__":
    app.run(main)
