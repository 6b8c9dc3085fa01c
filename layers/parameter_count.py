"""The parameter counts every family shares, per sub-layer, from the shapes alone.

With h heads of size d_p on width d, attention holds 4*d*h*d_p + 3*h*d_p + d
(projections and biases) plus its LayerNorm's 2d (Bhojanapalli et al., 2020):
it grows with h when d_p is fixed, and stays 4d^2 + 6d when d_p = d/h. Each
family's `count_parameters(config)` (modeling/parameter_groups.py for BERT,
lm/parameter_groups.py, nmt/parameter_groups.py) adds these up by group.
"""


def layer_norm(d):
    """gamma and beta."""
    return 2 * d


def attention(d, num_heads, head_size):
    """Query, key and value (kernels and biases), the output projection, and the LayerNorm."""
    projection = num_heads * head_size
    return 3 * (d * projection + projection) + projection * d + d + layer_norm(d)


def feed_forward(d, inner):
    """The two dense layers and the LayerNorm."""
    return d * inner + inner + inner * d + d + layer_norm(d)
