"""`ProductDense`: Keras's `EinsumDense` whose weight gradient runs as a fast matrix product on CPUs.

A projection y = x W over the tokens of a batch, x [tokens, K] and W [K, N],
has the weight gradient dW = x^T dy: a product contracting over all the
tokens (2048 in the language model's step). Through einsum's gradient, or
`tf.matmul(x, dy, transpose_a=True)`, oneDNN's float32 kernel runs it at
55-75 GFLOP/s on an AVX2 CPU when one side is short and the other long (K or N
= 256 against 1024 or 2048: the language model's projections at d = 256),
against ~120 for the forward product. It reaches ~90-130 when both operands
are plain row-major and the result's last axis is the shorter one, so for
those shapes the gradient is computed from a materialised transpose:

  K > N:  dW = (x^T) dy           with x^T materialised [K, tokens]
  K < N:  dW = ((dy^T) x)^T       with dy^T materialised [N, tokens]

The transposes are written so that TensorFlow's graph optimizer cannot fold
them back into the product's transpose flags, which would undo this. Square
projections and those whose shorter side exceeds 256 (BERT's 512 and 768,
with FFN 2048 and 3072) measured the same or slower this way and keep
einsum's gradient; `benchmarks/dense_gradient_benchmark.py` prints both ways
per shape.

Everything else is `EinsumDense`'s: the variables, names, config, initializers
and forward values. Only float32 on a machine without a GPU takes this path
(that is where it was measured), and only equations of the form
"<lead><contracted>,<contracted><out>-><lead><out>" (all of the projections
in attention and the feed-forward layer); anything else is `tf.einsum`.
"""

import tensorflow as tf
import tf_keras


def product_axes(equation):
    """(lead axes, contracted axes) counts of a plain projection equation, or None.

    "abc,cde->abde" (x [a, b, c], kernel [c, d, e]) gives (2, 1); "abcd,cde->abe"
    gives (2, 2). None for any other form (a broadcast, a transpose, an
    ellipsis).
    """
    if "..." in equation or "->" not in equation or "," not in equation:
        return None
    operands, output = equation.split("->")
    x, kernel = operands.split(",")
    contracted = [axis for axis in x if axis in kernel and axis not in output]
    lead = x[:len(x) - len(contracted)]
    out = kernel[len(contracted):]
    if not contracted or not out or x != lead + "".join(contracted) or kernel != "".join(contracted) + out:
        return None
    if output != lead + out or len(set(x + kernel)) != len(lead) + len(contracted) + len(out):
        return None
    return len(lead), len(contracted)


def _columns_of(tensor, num_lead):
    """tensor [lead..., rest...] -> [prod(rest), prod(lead)], materialised.

    A rank-2 transpose feeding a product would be folded into its
    `transpose_a` flag by Grappler; a rank >= 3 transpose and a reshape are not.
    """
    lead_size = tf.reduce_prod(tf.shape(tensor)[:num_lead])
    if tensor.shape.rank == 2:
        tensor = tf.expand_dims(tensor, 1)  # [lead, 1, rest]: the 1 counts as a lead axis
        num_lead = 2
    rank = tensor.shape.rank
    transposed = tf.transpose(tensor, list(range(num_lead, rank)) + list(range(num_lead)))
    return tf.reshape(transposed, [-1, lead_size])


def projection(x, kernel, num_lead, num_contracted):
    """x [lead..., contracted...] times kernel [contracted..., out...] -> [lead..., out...].

    The forward is one 2-D product; the weight gradient is as the module
    docstring says (for K = N, einsum's x^T dy).
    """
    x_shape, kernel_shape = tf.shape(x), tf.shape(kernel)
    k = kernel.shape[:num_contracted].num_elements()
    n = kernel.shape[num_contracted:].num_elements()
    output_shape = tf.concat([x_shape[:num_lead], kernel_shape[num_contracted:]], 0)

    @tf.custom_gradient
    def product(x, kernel):
        x_rows = tf.reshape(x, [-1, k])  # [tokens, K]
        kernel_2d = tf.reshape(kernel, [k, n])

        def gradient(upstream):
            upstream_rows = tf.reshape(upstream, [-1, n])  # [tokens, N]
            dx = tf.reshape(tf.matmul(upstream_rows, kernel_2d, transpose_b=True), x_shape)
            if k > n:
                dkernel = tf.matmul(_columns_of(x, num_lead), upstream_rows)
            elif k < n:
                dkernel = tf.transpose(tf.matmul(_columns_of(upstream, num_lead), x_rows))
            else:
                dkernel = tf.matmul(x_rows, upstream_rows, transpose_a=True)
            return dx, tf.reshape(dkernel, kernel_shape)

        return tf.reshape(tf.matmul(x_rows, kernel_2d), output_shape), gradient

    return product(x, kernel)


# The longest shorter side (of K and N) for which the transposed weight gradient measured faster.
SHORT_SIDE_MAX = 256


def uses_transposed_gradient(k, n):
    """Whether a K -> N projection takes `projection`'s weight gradient (see the module docstring)."""
    return k != n and min(k, n) <= SHORT_SIDE_MAX


def _has_gpu():
    return bool(tf.config.list_logical_devices("GPU"))


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class ProductDense(tf_keras.layers.EinsumDense):
    """`tf_keras.layers.EinsumDense` with the weight gradient of `projection` (see the module docstring).

    Same arguments, variables and config.
    """

    def call(self, inputs):
        kernel = tf.convert_to_tensor(self.kernel)
        axes = self._projection_axes(inputs, kernel)
        if axes is not None:
            ret = projection(inputs, kernel, *axes)
        else:
            ret = tf.einsum(self.equation, inputs, kernel)
        if self.bias is not None:
            ret += self.bias
        if self.activation is not None:
            ret = self.activation(ret)
        return ret

    def _projection_axes(self, inputs, kernel):
        """`product_axes` of the equation where this call takes `projection`, else None."""
        axes = product_axes(self.equation)
        if axes is None or kernel.dtype != tf.float32 or inputs.shape.rank is None or _has_gpu():
            return None
        k = kernel.shape[:axes[1]].num_elements()
        return axes if uses_transposed_gradient(k, kernel.shape.num_elements() // k) else None


def replacing_einsum_dense(value):
    """`value` as a `ProductDense` of the same config if it is an unbuilt plain `EinsumDense`, else `value`.

    For the `__setattr__` of layers that create their projections themselves
    (Keras's MultiHeadAttention, Model Garden's TransformerEncoderBlock).
    """
    if type(value) is not tf_keras.layers.EinsumDense or value.built:  # pylint: disable=unidiomatic-typecheck
        return value
    return ProductDense.from_config(value.get_config())
