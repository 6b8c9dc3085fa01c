"""ProductDense: EinsumDense's values and gradients as a 2-D product, a fused bias and activation, and the weight
gradient from materialised transposes."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2
from tensorflow.python.grappler import tf_optimizer

from layers import activations, product_dense
from layers.product_dense import ProductDense, product_axes, projection, replacing_einsum_dense, uses_transposed_gradient
from training import compute_dtype

# oneDNN computes in bfloat16 only with AVX-512; elsewhere TensorFlow falls back to Eigen's kernels, which
# fuse nothing and round the product before the bias.
ONEDNN_BFLOAT16 = "avx512f" in compute_dtype.cpu_flags()


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


def test_float32_training_calls_of_short_and_long_projections_take_the_transposed_gradient(monkeypatch):
    taken = []
    rows_product = product_dense._rows_product  # pylint: disable=protected-access
    monkeypatch.setattr(product_dense, "_rows_product", lambda *args: taken.append(args[-1]) or rows_product(*args))
    x = tf.ones([2, 3, 4])
    ProductDense("abc,cd->abd", output_shape=(None, 5))(x)  # training unknown: a gradient may be taken
    ProductDense("abc,cd->abd", output_shape=(None, 5))(x, training=True)
    assert taken == [True, True]
    ProductDense("abc,cd->abd", output_shape=(None, 5), activation="relu")(x, training=False)  # inference: no gradient
    ProductDense("abc,cd->abd", output_shape=(None, 5), dtype="float64")(tf.ones([2, 3, 4], tf.float64))
    ProductDense("abc,cd->abd", output_shape=(None, 4))(x)  # square
    ProductDense("abc,cd->abd", output_shape=(None, 600))(tf.ones([2, 3, 520]))  # both sides > 256
    monkeypatch.setattr(product_dense, "_has_gpu", lambda: True)
    ProductDense("abc,cd->abd", output_shape=(None, 5))(x)
    assert taken == [True, True] + [False] * 5


def test_other_equations_keep_einsum():
    layer = ProductDense("abc,dc->abd", output_shape=(None, 5), bias_axes="d", activation="relu")
    x = tf.constant(np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32))
    y = layer(x)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    np.testing.assert_allclose(y.numpy(), np.maximum(np.einsum("abc,dc->abd", x.numpy(), kernel) + bias, 0),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("equation, output_shape, bias_axes, x_shape", [
    ("abc,cde->abde", (None, 3, 4), "de", (2, 5, 6)),  # a bias over every output axis: bias_add
    ("abc,cde->abde", (None, 3, 4), "e", (2, 5, 6)),   # over some of them: broadcast
    ("abcd,cde->abe", (None, 4), "e", (2, 5, 3, 2)),
    ("abc,cd->abd", (None, 7), None, (2, 5, 6)),
])
@pytest.mark.parametrize("training", [None, False])
def test_bias_and_activation_against_numpy(equation, output_shape, bias_axes, x_shape, training):
    rng = np.random.default_rng(3)
    layer = ProductDense(equation, output_shape=output_shape, bias_axes=bias_axes, activation=tf.math.tanh,
                         bias_initializer="random_normal")
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = layer(tf.constant(x), training=training)
    expected = np.einsum(equation, x.astype(np.float64), layer.kernel.numpy())
    if layer.bias is not None:
        expected += layer.bias.numpy()
    np.testing.assert_allclose(y.numpy(), np.tanh(expected), rtol=1e-5, atol=1e-5)


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def test_activation_dtype_under_mixed_bfloat16():
    """Training: the activation in float32 on the bfloat16 product, as Model Garden's float32 activation layer.

    Inference: in the compute dtype, the form oneDNN fuses; close to float64.
    """
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((2, 5, 16)).astype(np.float32))
    config = dict(equation="abc,cd->abd", output_shape=(None, 32), bias_axes="d", bias_initializer="random_normal",
                  name="intermediate")
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mine = ProductDense(**config, activation=activations.gelu, activation_dtype="float32")
        theirs = tf_keras.layers.EinsumDense(**config)
        theirs_activation = tf_keras.layers.Activation(activations.gelu, dtype="float32")
        mine(x), theirs(x)
        for ours, keras in zip(mine.weights, theirs.weights):
            keras.assign(ours)
        trained = mine(x, training=True)
        assert trained.dtype == tf.bfloat16
        expected = tf.cast(theirs_activation(theirs(x)), tf.bfloat16)
        if ONEDNN_BFLOAT16:
            np.testing.assert_array_equal(trained.numpy().astype(np.float32), expected.numpy().astype(np.float32))
        else:  # Eigen: the two forms round at different points, within two bfloat16 steps (2^-7 relative).
            np.testing.assert_allclose(trained.numpy().astype(np.float32), expected.numpy().astype(np.float32),
                                       rtol=2 ** -6, atol=2 ** -6)
        inferred = mine(x, training=False)
        assert inferred.dtype == tf.bfloat16
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    exact = _gelu(x.numpy().astype(np.float64) @ mine.kernel.numpy() + mine.bias.numpy())
    np.testing.assert_allclose(inferred.numpy().astype(np.float32), exact, rtol=0.02, atol=0.02)
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(mine))
    assert restored.activation_dtype == "float32" and restored.get_config() == mine.get_config()
    assert "activation_dtype" not in ProductDense(**config).get_config()  # otherwise EinsumDense's config


def test_bias_gradient_under_mixed_bfloat16_is_summed_in_float32():
    """bias_add's gradient would sum the 16-bit upstream over the tokens in 16 bits (~30% off here)."""
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((8, 512, 16)).astype(np.float32))
    upstream = rng.standard_normal((8, 512, 32)).astype(np.float32) + 0.3
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        layer = ProductDense("abc,cd->abd", output_shape=(None, 32), bias_axes="d")
        layer(x)

        @tf.function
        def bias_gradient():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.cast(layer(x, training=True), tf.float32) * upstream)
            return tape.gradient(loss, layer.bias)

        gradient = bias_gradient().numpy()
    finally:
        tf_keras.mixed_precision.set_global_policy("float32")
    expected = upstream.astype(np.float64).sum(axis=(0, 1))
    assert np.abs(gradient - expected).mean() / np.abs(expected).mean() < 0.01


def test_fold_activation():
    layer = ProductDense("abc,cd->abd", output_shape=(None, 5), bias_axes="d")
    layer.fold_activation(activations.gelu, tf.float32)
    assert layer.activation is activations.gelu and layer.activation_dtype == "float32"
    with pytest.raises(ValueError, match="can only be folded into an unbuilt layer without one"):
        layer.fold_activation("relu")
    built = ProductDense("abc,cd->abd", output_shape=(None, 5))
    built(tf.ones([1, 2, 3]))
    with pytest.raises(ValueError, match="can only be folded"):
        built.fold_activation("relu")


def _optimized_ops(function, *specs):
    """(op type, fused_ops) of the nodes of `function`'s graph after Grappler, as a session would run it."""
    concrete = function.get_concrete_function(*specs)
    graph_def = concrete.graph.as_graph_def()
    for node in graph_def.node:
        node.device = "/device:CPU:0"  # where the function runs; Grappler's remapper fuses placed nodes only
    metagraph = tf.compat.v1.train.export_meta_graph(graph_def=graph_def, graph=concrete.graph)
    fetches = meta_graph_pb2.CollectionDef()
    fetches.node_list.value.extend(t.name for t in concrete.outputs)
    metagraph.collection_def["train_op"].CopyFrom(fetches)
    optimized = tf_optimizer.OptimizeGraph(config_pb2.ConfigProto(), metagraph)
    return [(node.op, [op.decode() for op in node.attr["fused_ops"].list.s]) for node in optimized.node]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_inference_takes_the_bias_and_gelu_into_the_product(dtype):
    """With oneDNN (on in the tests, as in the entry points) the product, bias and GELU become one kernel.

    Also with a float32 activation_dtype (as in the block under mixed bfloat16): that is for training only.
    """
    if dtype == "bfloat16" and not ONEDNN_BFLOAT16:
        pytest.skip("oneDNN has no bfloat16 kernels without AVX-512; this CPU has none")
    layer = ProductDense("abc,cd->abd", output_shape=(None, 16), bias_axes="d", activation=activations.gelu,
                         activation_dtype="float32", dtype=dtype)
    ops = _optimized_ops(tf.function(lambda x: layer(x, training=False)), tf.TensorSpec([2, 3, 8], dtype))
    fused = [fused_ops for op, fused_ops in ops if "MatMul" in op]
    assert fused == [["BiasAdd", "GeluApproximate"]]
    assert not any(op in ("Tanh", "BiasAdd", "Einsum") for op, _ in ops)


@pytest.mark.parametrize("dtype, training, activation, product", [
    ("float32", False, None, "Einsum"),  # nothing to fuse but the bias: no GEMM packing buffers
    ("float32", False, activations.gelu, "MatMul"),  # the bias and GELU fused into the product
    ("float32", True, None, "MatMul"),
    ("float32", None, None, "MatMul"),  # not known to be inference
    ("bfloat16", False, None, "MatMul"),
])
def test_which_calls_keep_the_einsum_form(dtype, training, activation, product):
    layer = ProductDense("abc,cd->abd", output_shape=(None, 16), bias_axes="d", activation=activation, dtype=dtype)
    graph = tf.function(lambda x: layer(x, training=training)).get_concrete_function(
        tf.TensorSpec([2, 3, 8], dtype)).graph
    ops = [op.type for op in graph.get_operations()]
    other = {"Einsum": "MatMul", "MatMul": "Einsum"}[product]
    assert product in ops and other not in ops, ops


def test_replacing_einsum_dense():
    plain = tf_keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 5), name="intermediate")
    replaced = replacing_einsum_dense(plain)
    assert type(replaced) is ProductDense and replaced.name == "intermediate"
    assert replaced.get_config() == dict(plain.get_config())
    plain(tf.ones([1, 2, 3]))
    assert replacing_einsum_dense(plain) is plain  # built: it has variables already
    dense = tf_keras.layers.Dense(3)
    assert replacing_einsum_dense(dense) is dense
