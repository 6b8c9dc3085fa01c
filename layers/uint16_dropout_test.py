"""Tests for layers/uint16_dropout.py."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from layers.uint16_dropout import Uint16Dropout, drop_threshold, keep_scale, uint16_draws


def test_threshold_and_scale_are_the_rounded_rate():
    assert drop_threshold(0.1) == 6554  # round(6553.6)
    assert keep_scale(0.1) == pytest.approx(65536 / (65536 - 6554), rel=1e-15)
    assert drop_threshold(0.5) == 32768 and keep_scale(0.5) == 2.0
    assert drop_threshold(0.0) == 0 and keep_scale(0.0) == 1.0


@pytest.mark.parametrize("shape", [(4, 6, 5), (3, 7)])  # even and odd element counts
def test_draws_cover_sixteen_bits_uniformly(shape):
    draws = uint16_draws(tf.constant(shape), tf.constant([1, 2])).numpy()
    assert draws.shape == shape and draws.dtype == np.uint16
    many = uint16_draws([1 << 18], tf.constant([3, 4])).numpy().astype(np.float64)
    # Uniform on [0, 65536): mean 32767.5, standard deviation 18918.6; both halves of a word are used.
    assert abs(many.mean() - 32767.5) < 5 * 18918.6 / np.sqrt(many.size)
    assert many.min() < 64 and many.max() > 65536 - 64
    counts = np.bincount(many.astype(np.int64) >> 12, minlength=16)  # 16 bins of 4096 values
    expected = many.size / 16
    assert np.all(np.abs(counts - expected) < 6 * np.sqrt(expected))
    # Even and odd positions (the two halves of each 32-bit word) are not copies of each other.
    assert np.mean(many[0::2] == many[1::2]) < 0.01


def test_draws_depend_on_the_seed_only():
    first = uint16_draws([1000], tf.constant([5, 6])).numpy()
    np.testing.assert_array_equal(first, uint16_draws([1000], tf.constant([5, 6])).numpy())
    assert np.mean(first == uint16_draws([1000], tf.constant([5, 7])).numpy()) < 0.01


@pytest.fixture(params=["legacy", "generator"])
def rng_mode(request):
    """Keras' legacy stateful ops, or tf.random.Generator (what the entry points enable)."""
    if request.param == "generator":
        tf_keras.backend.experimental.enable_tf_random_generator()
    yield request.param
    tf_keras.backend.experimental.disable_tf_random_generator()


def test_drops_at_the_rate_and_keeps_the_expectation(rng_mode):
    tf_keras.utils.set_random_seed(1)
    x = tf.constant(np.random.default_rng(0).uniform(1.0, 2.0, size=(8, 4, 128, 128)).astype(np.float32))
    layer = Uint16Dropout(0.1)
    y = layer(x, training=True).numpy()
    dropped = y == 0
    # 524288 elements: the dropped share is 0.100006 +- 0.0004 (one standard deviation).
    assert abs(dropped.mean() - 6554 / 65536) < 5 * np.sqrt(0.09 / x.shape.num_elements())
    np.testing.assert_allclose(y[~dropped], x.numpy()[~dropped] * np.float32(keep_scale(0.1)), rtol=1e-7)
    assert abs(y.mean() / x.numpy().mean() - 1) < 0.003


def test_identity_outside_training(rng_mode):
    x = tf.random.uniform((2, 3, 5, 5))
    layer = Uint16Dropout(0.3)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())  # learning phase 0
    np.testing.assert_array_equal(Uint16Dropout(0.0)(x, training=True).numpy(), x.numpy())


def test_seeded_runs_repeat_and_calls_differ(rng_mode):
    def two_calls():
        tf_keras.utils.set_random_seed(7)
        layer = Uint16Dropout(0.5)
        x = tf.ones((64, 64))
        step = tf.function(lambda: layer(x, training=True))
        return step().numpy(), step().numpy()

    first, second = two_calls()
    again_first, again_second = two_calls()
    np.testing.assert_array_equal(first, again_first)
    np.testing.assert_array_equal(second, again_second)
    assert np.mean(first == second) < 0.6  # 0.5 expected when independent


def test_gradient_is_the_scaled_keep_mask():
    tf_keras.utils.set_random_seed(3)
    layer = Uint16Dropout(0.25)
    x = tf.random.uniform((16, 33))  # an odd last dimension
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
    gradient = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(gradient, np.where(y.numpy() != 0, np.float32(keep_scale(0.25)), 0))


def test_noise_shape_takes_keras_path():
    tf_keras.utils.set_random_seed(4)
    y = Uint16Dropout(0.5, noise_shape=(1, 40))(tf.ones((30, 40)), training=True).numpy()
    # One draw per column, shared by all rows.
    assert np.all(y == y[:1])


def test_bfloat16_inputs():
    x = tf.cast(tf.random.uniform((4, 256)) + 1, tf.bfloat16)
    y = Uint16Dropout(0.1, dtype="mixed_bfloat16")(x, training=True)
    assert y.dtype == tf.bfloat16
    kept = y.numpy() != 0
    np.testing.assert_array_equal(
        y.numpy()[kept], (x * tf.cast(keep_scale(0.1), tf.bfloat16)).numpy()[kept])


def test_config_round_trip():
    layer = Uint16Dropout(0.2, name="attention_dropout")
    restored = tf_keras.layers.deserialize(tf_keras.layers.serialize(layer))
    assert type(restored) is Uint16Dropout  # pylint: disable=unidiomatic-typecheck
    assert restored.get_config() == layer.get_config()
