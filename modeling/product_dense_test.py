"""ProductDense: EinsumDense's values and gradients, with the weight gradient from materialised transposes."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from modeling import product_dense
from modeling.product_dense import (ProductDense, product_axes, projection, replacing_einsum_dense,
                                    uses_transposed_gradient)


@pytest.mark.parametrize("equation, expected", [
    ("abc,cd->abd", (2, 1)),        # Model Garden's feed-forward layer
    ("abc,cde->abde", (2, 1)),      # Keras's query/key/value projections
    ("abcd,cde->abe", (2, 2)),      # Keras's attention output projection
    ("ab,bc->ac", (1, 1)),
    ("abc,dc->abd", None),          # a transposed kernel
    ("...b,bc->...c", None),        # an ellipsis
    ("abc,cd->bad", None),          # output axes reordered
    ("abc,cd->abcd", None),         # nothing contracted
    ("abc,c->ab", None),            # no output axis of the kernel
])
def test_product_axes(equation, expected):
    assert product_axes(equation) == expected


def _numpy_gradients(x, kernel, upstream, num_lead, num_contracted):
    k = int(np.prod(kernel.shape[:num_contracted]))
    n = int(np.prod(kernel.shape[num_contracted:]))
    x_rows = x.reshape(-1, k).astype(np.float64)
    upstream_rows = upstream.reshape(-1, n).astype(np.float64)
    kernel_2d = kernel.reshape(k, n).astype(np.float64)
    return ((upstream_rows @ kernel_2d.T).reshape(x.shape), (x_rows.T @ upstream_rows).reshape(kernel.shape))


@pytest.mark.parametrize("function", [False, True])
@pytest.mark.parametrize("x_shape, kernel_shape, num_lead, num_contracted", [
    ((2, 5, 6), (6, 3, 4), 2, 1),    # K < N: dW from the materialised upstream transpose
    ((2, 5, 3, 4), (3, 4, 6), 2, 2),  # K > N: dW from the materialised input transpose
    ((7, 6), (6, 6), 1, 1),          # K = N, rank-2 input
    ((7, 3), (3, 8), 1, 1),          # K < N, rank-2: the transpose is made rank 3
    ((7, 8), (8, 3), 1, 1),          # K > N, rank-2
])
def test_projection_values_and_gradients_against_numpy(function, x_shape, kernel_shape, num_lead, num_contracted):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    kernel = rng.standard_normal(kernel_shape).astype(np.float32)
    output_shape = x_shape[:num_lead] + kernel_shape[num_contracted:]
    upstream = rng.standard_normal(output_shape).astype(np.float32)

    def run(x, kernel):
        with tf.GradientTape() as tape:
            tape.watch([x, kernel])
            y = projection(x, kernel, num_lead, num_contracted)
            loss = tf.reduce_sum(y * upstream)
        return [y] + tape.gradient(loss, [x, kernel])

    if function:
        run = tf.function(run)
    y, dx, dkernel = run(tf.constant(x), tf.constant(kernel))
    k = int(np.prod(kernel_shape[:num_contracted]))
    expected_y = (x.reshape(-1, k).astype(np.float64) @ kernel.reshape(k, -1)).reshape(output_shape)
    expected_dx, expected_dkernel = _numpy_gradients(x, kernel, upstream, num_lead, num_contracted)
    np.testing.assert_allclose(y.numpy(), expected_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx.numpy(), expected_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dkernel.numpy(), expected_dkernel, rtol=1e-5, atol=1e-5)


def _weight_gradient_graph(k, n):
    """The optimized-by-nobody graph of d loss / d kernel for a [16, k] x [k, n] projection."""
    x = tf.TensorSpec([16, k], tf.float32)
    kernel = tf.TensorSpec([k, n], tf.float32)

    @tf.function
    def weight_gradient(x, kernel):
        with tf.GradientTape() as tape:
            tape.watch(kernel)
            loss = tf.reduce_sum(projection(x, kernel, 1, 1))
        return tape.gradient(loss, kernel)

    return weight_gradient.get_concrete_function(x, kernel).graph


@pytest.mark.parametrize("k, n, transposed", [(4, 8, True), (8, 4, True), (6, 6, False)])
def test_weight_gradient_uses_a_rank_3_transpose_unless_square(k, n, transposed):
    """The transpose Grappler cannot fold into the product's flags is there (and only off the square case)."""
    graph = _weight_gradient_graph(k, n)
    rank_3_transposes = [op for op in graph.get_operations()
                         if op.type == "Transpose" and op.inputs[0].shape.rank == 3]
    assert bool(rank_3_transposes) is transposed


def test_product_dense_is_einsum_dense_with_its_values_gradients_and_config():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((2, 5, 6)).astype(np.float32))
    config = dict(equation="abc,cde->abde", output_shape=(None, 3, 4), bias_axes="de", activation="relu",
                  kernel_initializer="glorot_uniform", bias_initializer="random_normal", name="query")
    mine, theirs = ProductDense(**config), tf_keras.layers.EinsumDense(**config)
    mine(x), theirs(x)
    assert [w.name for w in mine.weights] == [w.name for w in theirs.weights]
    for ours, keras in zip(mine.weights, theirs.weights):
        keras.assign(ours)
    results = []
    for layer in (mine, theirs):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y)
        results.append([y] + tape.gradient(loss, [x] + layer.trainable_weights))
    for ours, keras in zip(*results):
        np.testing.assert_allclose(ours.numpy(), keras.numpy(), rtol=1e-5, atol=1e-5)
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(mine))
    assert type(restored) is ProductDense and restored.get_config() == mine.get_config()


def test_which_shapes_take_the_transposed_gradient():
    # The language model's projections at d = 256 (h = 64 of 32; FFN 1024) do.
    assert uses_transposed_gradient(256, 2048) and uses_transposed_gradient(2048, 256)
    assert uses_transposed_gradient(256, 1024) and uses_transposed_gradient(1024, 256)
    # Square ones and BERT's (512 / 768 against 2048 / 3072) keep einsum's.
    assert not uses_transposed_gradient(256, 256) and not uses_transposed_gradient(512, 512)
    assert not uses_transposed_gradient(512, 2048) and not uses_transposed_gradient(3072, 768)


def test_other_dtypes_shapes_and_gpus_keep_einsum(monkeypatch):
    calls = []
    monkeypatch.setattr(product_dense, "projection", lambda *args: calls.append(args) or tf.einsum(
        "abc,cd->abd", args[0], args[1]))
    x = tf.ones([2, 3, 4])
    ProductDense("abc,cd->abd", output_shape=(None, 5))(x)
    assert len(calls) == 1
    ProductDense("abc,cd->abd", output_shape=(None, 5), dtype="float64")(tf.ones([2, 3, 4], tf.float64))
    ProductDense("abc,cd->abd", output_shape=(None, 4))(x)  # square
    ProductDense("abc,cd->abd", output_shape=(None, 600))(tf.ones([2, 3, 520]))  # both sides > 256
    monkeypatch.setattr(product_dense, "_has_gpu", lambda: True)
    ProductDense("abc,cd->abd", output_shape=(None, 5))(x)
    assert len(calls) == 1


def test_replacing_einsum_dense():
    plain = tf_keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 5), name="intermediate")
    replaced = replacing_einsum_dense(plain)
    assert type(replaced) is ProductDense and replaced.name == "intermediate"
    assert replaced.get_config() == dict(plain.get_config())
    plain(tf.ones([1, 2, 3]))
    assert replacing_einsum_dense(plain) is plain  # built: it has variables already
    dense = tf_keras.layers.Dense(3)
    assert replacing_einsum_dense(dense) is dense
