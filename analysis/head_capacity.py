"""What one attention head can represent: fit its W_q, W_k to a target context matrix (Bhojanapalli et al., 2020).

Theorem 1 of the low-rank-bottleneck paper: with head size d_p >= n, for
inputs X of full rank (n tokens of width d >= n) every positive
row-stochastic n x n matrix P is softmax(X W_q (X W_k)^T / sqrt(d_p)) for
some W_q, W_k [d, d_p]; with d_p < n the logits have rank at most d_p, and a
P whose log needs rank n (close to a permutation, say) cannot be reached.
`fit_head` measures this directly: gradient descent (Adam) on W_q, W_k from
seeded starts, the best mean KL(P || P_head) over the rows, and the total
variation beside it. Measured (n = 8, d = 16): the error falls to zero from
d_p = n - 1 on, not n, since softmax ignores a constant added to a row: the
logits need only match log P up to row shifts, which takes rank n - 1.
"""

import dataclasses

import numpy as np
import tensorflow as tf
import tf_keras


@dataclasses.dataclass(frozen=True)
class Fit:
    """The best fit found: mean KL(target || head) per row (nats), mean total variation per row."""

    head_size: int
    kl: float
    total_variation: float


def random_inputs(n, d, seed):
    """n token vectors of width d [n, d], Gaussian: full rank n when d >= n."""
    return np.random.RandomState(seed).standard_normal((n, d)).astype(np.float32)


def dirichlet_target(n, seed, concentration=1.0):
    """A random positive row-stochastic [n, n] matrix (each row a Dirichlet draw)."""
    rows = np.random.RandomState(seed).dirichlet(np.full(n, concentration), size=n)
    return np.maximum(rows, 1e-6) / np.maximum(rows, 1e-6).sum(1, keepdims=True)


def near_permutation_target(n, seed, mass=0.9):
    """(`mass` on a random permutation, the rest uniform): positive, and its log has full rank n."""
    target = np.full((n, n), (1.0 - mass) / (n - 1))
    target[np.arange(n), np.random.RandomState(seed).permutation(n)] = mass
    return target


def fit_head(inputs, target, head_size, steps=1500, learning_rate=0.05, restarts=2, seed=0):
    """The best fit of one head of size `head_size` to `target` from `restarts` seeded starts.

    Args:
      inputs: [n, d] token vectors X.
      target: [n, n] positive row-stochastic P (row i: query i's weights over the keys).

    Returns:
      Fit.
    """
    x = tf.constant(inputs, tf.float32)
    p = tf.constant(target, tf.float32)
    log_p = tf.math.log(p)
    d = inputs.shape[1]
    scale = 1.0 / np.sqrt(head_size)
    best = None
    for restart in range(restarts):
        rng = np.random.RandomState(seed * 1000 + restart)
        w_q = tf.Variable(rng.standard_normal((d, head_size)).astype(np.float32) / np.sqrt(d))
        w_k = tf.Variable(rng.standard_normal((d, head_size)).astype(np.float32) / np.sqrt(d))
        optimizer = tf_keras.optimizers.Adam(learning_rate)

        def log_head():
            logits = tf.matmul(tf.matmul(x, w_q), tf.matmul(x, w_k), transpose_b=True) * scale
            return tf.nn.log_softmax(logits, axis=-1)

        @tf.function
        def train(num_steps):
            for _ in tf.range(num_steps):
                with tf.GradientTape() as tape:
                    kl = tf.reduce_mean(tf.reduce_sum(p * (log_p - log_head()), axis=-1))
                optimizer.apply_gradients(zip(tape.gradient(kl, [w_q, w_k]), [w_q, w_k]))

        train(tf.constant(steps))
        log_q = log_head().numpy()
        kl = float(np.mean(np.sum(target * (np.log(target) - log_q), axis=-1)))
        variation = float(np.mean(0.5 * np.abs(target - np.exp(log_q)).sum(-1)))
        if best is None or kl < best.kl:
            best = Fit(head_size, kl, variation)
    return best
