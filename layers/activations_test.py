"""`hidden_act` names against their formulas."""

import math

import numpy as np
import pytest
import tensorflow as tf
from scipy.special import erf

from layers import activations

X = np.linspace(-5, 5, 41).astype(np.float32)
FORMULAS = {
    # The original BERT's gelu: the tanh approximation.
    "gelu": lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "gelu_exact": lambda x: 0.5 * x * (1.0 + erf(x / math.sqrt(2.0))),
    "relu": lambda x: np.maximum(x, 0),
    "tanh": np.tanh,
    "linear": lambda x: x,
}


@pytest.mark.parametrize("name", activations.NAMES)
def test_activation_matches_its_formula(name):
    got = activations.get_activation(name)(tf.constant(X)).numpy()
    np.testing.assert_allclose(got, FORMULAS[name](X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_the_two_gelus_differ():
    assert not np.allclose(activations.gelu(X), activations.gelu_exact(X), atol=1e-5)


def test_unknown_name():
    with pytest.raises(ValueError, match="Unsupported activation 'swish'; expected one of gelu, gelu_exact, linear"):
        activations.get_activation("swish")
