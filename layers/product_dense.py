"""`ProductDense`: Keras's `EinsumDense` as one 2-D matrix product, with a fast weight gradient on CPUs.

Everything visible is `EinsumDense`'s: the variables, names, config,
initializers and forward values. Plain projection equations of the form
"<lead><contracted>,<contracted><out>-><lead><out>" (all of the projections
in attention and the feed-forward layer) are computed as one 2-D `tf.matmul`
on [tokens, K], then `tf.nn.bias_add`, then the activation; anything else is
`tf.einsum`. In that form TensorFlow's graph optimizer hands the bias and the
activation to oneDNN's product kernel, which applies them to its float32
accumulator as it writes the output (Keras's einsum form leaves them as
separate passes). Two exceptions: in float32 inference a projection without
an activation keeps the einsum form (oneDNN's float32 2-D product takes
packing buffers of a few MB per thread at every call; see training/onednn.py),
and in bfloat16 or float16 training the bias is a plain add (the gradient of
`bias_add` sums over the tokens in 16 bits, the add's `Sum` in float32).

`activation_dtype` (default: the compute dtype) is where the activation is
computed in training: Model Garden's block computes its GELU in float32 under
mixed bfloat16 ("bfloat16 causes BERT with the LAMB optimizer to not converge
as well"), and `EncoderBlock` folds that activation into its feed-forward
projection with that dtype. In inference (`training=False`) the activation
is applied in the compute dtype right after the bias, the form oneDNN fuses.

The weight gradient dW = x^T dy contracts over all the tokens. oneDNN's
float32 kernel is slow on it when one side of the projection is short and
the other long, so when the shorter side is at most 256 and the other longer
it is computed from a materialised transpose, written so that the graph
optimizer cannot fold it back into the product's transpose flags:

  K > N:  dW = (x^T) dy           with x^T materialised [K, tokens]
  K < N:  dW = ((dy^T) x)^T       with dy^T materialised [N, tokens]

Square and wider projections (BERT's) keep einsum's gradient. Only float32 on
a machine without a GPU, and only when a gradient may be taken (`training`
not False), takes the transposed gradient (that is where it was measured).

Measurements: docs/performance.md#why-the-models-layers and
docs/performance.md#projection-weight-gradients.
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


def _columns_of(rows):
    """rows [tokens, C] -> [C, tokens], materialised.

    A rank-2 transpose feeding a product would be folded into its
    `transpose_a` flag by Grappler; a rank-3 transpose and a reshape are not.
    """
    transposed = tf.transpose(tf.expand_dims(rows, 1), [2, 0, 1])  # [C, tokens, 1]
    return tf.reshape(transposed, [-1, tf.shape(rows)[0]])


def projection(x, kernel, num_lead, num_contracted):
    """x [lead..., contracted...] times kernel [contracted..., out...] -> [lead..., out...].

    The forward is one 2-D product; the weight gradient is as the module
    docstring says (for K = N, einsum's x^T dy).
    """
    output_shape = tf.concat([tf.shape(x)[:num_lead], tf.shape(kernel)[num_contracted:]], 0)
    return tf.reshape(_rows_product(x, kernel, num_contracted, True), output_shape)


def _rows_product(x, kernel, num_contracted, transposed_gradient):
    """x as rows [tokens, K] times kernel as [K, N] -> [tokens, N].

    transposed_gradient: the weight gradient of the module docstring (a custom
      gradient); otherwise `tf.matmul`'s own.
    """
    k = kernel.shape[:num_contracted].num_elements()
    n = kernel.shape[num_contracted:].num_elements()
    if not transposed_gradient:
        return tf.matmul(tf.reshape(x, [-1, k]), tf.reshape(kernel, [k, n]))
    x_shape, kernel_shape = tf.shape(x), tf.shape(kernel)

    @tf.custom_gradient
    def product(x, kernel):
        x_rows = tf.reshape(x, [-1, k])  # [tokens, K]
        kernel_2d = tf.reshape(kernel, [k, n])

        def gradient(upstream_rows):  # [tokens, N]
            dx = tf.reshape(tf.matmul(upstream_rows, kernel_2d, transpose_b=True), x_shape)
            if k > n:
                dkernel = tf.matmul(_columns_of(x_rows), upstream_rows)
            elif k < n:
                dkernel = tf.transpose(tf.matmul(_columns_of(upstream_rows), x_rows))
            else:
                dkernel = tf.matmul(x_rows, upstream_rows, transpose_a=True)
            return dx, tf.reshape(dkernel, kernel_shape)

        return tf.matmul(x_rows, kernel_2d), gradient

    return product(x, kernel)


# The longest shorter side (of K and N) for which the transposed weight gradient measured faster.
SHORT_SIDE_MAX = 256


def uses_transposed_gradient(k, n):
    """Whether a K -> N projection takes `projection`'s weight gradient (see the module docstring)."""
    return k != n and min(k, n) <= SHORT_SIDE_MAX


def is_inference(training):
    """Whether Keras's resolved `training` says for sure that no gradient is taken."""
    return training is not None and not tf.is_tensor(training) and not training


def _has_gpu():
    return bool(tf.config.list_logical_devices("GPU"))


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class ProductDense(tf_keras.layers.EinsumDense):
    """`tf_keras.layers.EinsumDense` as a 2-D product with a fused bias and activation (see the module docstring).

    Same arguments, variables and config, and:
      activation_dtype: the dtype the activation is computed in when training
        (None: the compute dtype); the output stays in the compute dtype.
    """

    def __init__(self, *args, activation_dtype=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.activation_dtype = None if activation_dtype is None else tf.as_dtype(activation_dtype).name

    def get_config(self):
        config = super().get_config()
        if self.activation_dtype is not None:  # Otherwise the config stays EinsumDense's own.
            config["activation_dtype"] = self.activation_dtype
        return config

    def fold_activation(self, activation, activation_dtype=None):
        """Takes over the activation that a separate layer applied after this one (before build)."""
        if self.built or self.activation is not tf_keras.activations.linear:
            raise ValueError("%s: an activation can only be folded into an unbuilt layer without one." % self.name)
        self.activation = tf_keras.activations.get(activation)
        self.activation_dtype = None if activation_dtype is None else tf.as_dtype(activation_dtype).name

    def call(self, inputs, training=None):
        kernel = tf.convert_to_tensor(self.kernel)
        axes = product_axes(self.equation)
        if axes is None or inputs.shape.rank is None or self._keeps_einsum_in_inference(kernel, training):
            ret = tf.einsum(self.equation, inputs, kernel)
            if self.bias is not None:
                ret += self.bias
            return self._activate(ret, training)
        num_lead, num_contracted = axes
        transposed_gradient = not is_inference(training) and self._takes_transposed_gradient(kernel, num_contracted)
        ret = _rows_product(inputs, kernel, num_contracted, transposed_gradient)  # [tokens, N]
        n = ret.shape[-1]
        output_shape = tf.concat([tf.shape(inputs)[:num_lead], tf.shape(kernel)[num_contracted:]], 0)
        if self.bias is not None and self.bias.shape.num_elements() != n:
            # A bias over some of the output axes only: broadcast in the output's shape.
            return self._activate(tf.reshape(ret, output_shape) + self.bias, training)
        if self.bias is not None:
            ret = self._add_bias(ret, tf.reshape(self.bias, [n]), training)
        return tf.reshape(self._activate(ret, training), output_shape)

    def _add_bias(self, rows, bias, training):
        """rows [tokens, N] + bias [N]: `bias_add` (which oneDNN fuses) unless its gradient would be 16-bit."""
        if is_inference(training) or rows.dtype in (tf.float32, tf.float64):
            return tf.nn.bias_add(rows, bias)
        return rows + bias  # BiasAddGrad sums a 16-bit gradient in 16 bits (~30% off over 4096 rows); Sum does not

    def _activate(self, ret, training):
        if self.activation_dtype is None or is_inference(training) or self.activation_dtype == ret.dtype.name:
            return self.activation(ret)  # in inference, the form oneDNN fuses into the product
        return tf.cast(self.activation(tf.cast(ret, self.activation_dtype)), ret.dtype)

    def _keeps_einsum_in_inference(self, kernel, training):
        """float32 inference without an activation: Keras's einsum (see the module docstring)."""
        return (is_inference(training) and kernel.dtype == tf.float32
                and self.activation is tf_keras.activations.linear)

    def _takes_transposed_gradient(self, kernel, num_contracted):
        if kernel.dtype != tf.float32 or _has_gpu():
            return False
        k = kernel.shape[:num_contracted].num_elements()
        return uses_transposed_gradient(k, kernel.shape.num_elements() // k)


def replacing_einsum_dense(value):
    """`value` as a `ProductDense` of the same config if it is an unbuilt plain `EinsumDense`, else `value`.

    For the `__setattr__` of layers that create their projections themselves
    (Keras's MultiHeadAttention, Model Garden's TransformerEncoderBlock).
    """
    if type(value) is not tf_keras.layers.EinsumDense or value.built:  # pylint: disable=unidiomatic-typecheck
        return value
    return ProductDense.from_config(value.get_config())
