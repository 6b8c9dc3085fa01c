"""The toolkit's initialisation scheme: the (kind, scale) per variable, and the values a seeded draw gives."""

import math

import numpy as np
import pytest

from freezing import seeded_values
from layers import initializers


@pytest.mark.parametrize("name, shape, expected", [
    ("nmt/embeddings/word_embeddings", (4000, 64), ("uniform", math.sqrt(3 / 64))),
    ("lm/embeddings/position_embeddings", (256, 128), ("uniform", math.sqrt(3 / 128))),
    ("nmt/encoder/layer_0/attention/self/query/kernel", (64, 256), ("uniform", math.sqrt(6 / 320))),
    ("nmt/decoder/layer_1/output/dense/kernel", (384, 64), ("uniform", math.sqrt(6 / 448))),
    ("nmt/decoder/layer_1/output/dense/bias", (64,), ("zeros", None)),
    ("nmt/decoder/layer_1/output/LayerNorm/gamma", (64,), ("ones", None)),
    ("nmt/decoder/layer_1/output/LayerNorm/beta", (64,), ("zeros", None)),
])
def test_each_group_gets_the_toolkit_formula(name, shape, expected):
    kind, scale = initializers.toolkit_initializer_of(name, shape)
    assert kind == expected[0] and scale == pytest.approx(expected[1])


@pytest.mark.parametrize("name, shape", [("nmt/embeddings/word_embeddings", (4000, 64)),
                                         ("nmt/encoder/layer_0/intermediate/dense/kernel", (64, 384))])
def test_a_large_seeded_draw_has_the_formulas_moments(name, shape):
    kind, limit = initializers.toolkit_initializer_of(name, shape)
    value = seeded_values.seeded_value(name, shape, kind, limit, seed=3)
    # U(-a, a): mean 0, stddev a / sqrt(3); embeddings 1 / sqrt(d), kernels Glorot's sqrt(2 / (fan_in + fan_out)).
    expected_std = 1 / math.sqrt(shape[1]) if name.endswith("embeddings") else math.sqrt(2 / sum(shape))
    assert limit / math.sqrt(3) == pytest.approx(expected_std)
    assert value.std() == pytest.approx(expected_std, rel=0.01)
    assert abs(value.mean()) < 0.01 * expected_std
    assert -limit <= value.min() < -0.99 * limit and 0.99 * limit < value.max() <= limit
    if name.endswith("embeddings"):  # Rows of about unit length: after the model's sqrt(d), entries of unit variance.
        assert np.linalg.norm(value, axis=1).mean() == pytest.approx(1.0, rel=0.02)
    # The same (seed, name) gives the same tensor bit for bit; another seed another one.
    np.testing.assert_array_equal(value, seeded_values.seeded_value(name, shape, kind, limit, seed=3))
    assert not np.array_equal(value, seeded_values.seeded_value(name, shape, kind, limit, seed=4))


def test_keras_initializers_match_the_seeded_scheme():
    embedding, kernel = initializers.toolkit_keras_initializers(64)
    table = embedding(shape=(2000, 64)).numpy()
    assert table.std() == pytest.approx(1 / 8, rel=0.02) and np.abs(table).max() <= math.sqrt(3 / 64)
    matrix = kernel(shape=(64, 384)).numpy()
    assert matrix.std() == pytest.approx(math.sqrt(2 / 448), rel=0.03)
