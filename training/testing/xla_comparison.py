"""The check behind each family's --jit_compile test: XLA-compiled steps train as the plain ones."""

import json
import os

import numpy as np
import tensorflow as tf


def _is_key_bias(name):
    # A key bias adds one constant to all of a query's logits, which softmax ignores: its gradient is
    # rounding noise, which Adam scales up to full-size steps, so the two runs' key biases differ.
    return name.endswith("key/bias") or "key/bias/" in name


def config_without_dropout(config_file, directory):
    """Writes the JSON model config `config_file` into `directory` with no dropout; returns the copy's path.

    The compared runs go without dropout: XLA turns the same random bits into other float uniforms.
    """
    with open(config_file, encoding="utf-8") as f:
        config = dict(json.load(f), hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    path = os.path.join(str(directory), "no_dropout_" + os.path.basename(str(config_file)))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return path


def variable_names(output_dir, step):
    """The model's checkpoint names at `step`: no global_step, no optimizer slots."""
    names = tf.train.load_checkpoint("%s/model.ckpt-%d" % (output_dir, step)).get_variable_to_shape_map()
    return sorted(n for n in names if n != "global_step" and not n.endswith(("/adam_m", "/adam_v")))


def assert_trains_alike(plain_dir, xla_dir, step_before, step, frozen=(), rtol=1e-4, atol=1e-6):
    """The checkpoints of `step` in both runs agree up to rounding; `frozen` names kept bit for bit.

    Args:
      plain_dir, xla_dir: output_dirs of the same run without and with --jit_compile (no dropout:
        XLA draws dropout's float uniforms differently).
      step_before: an earlier checkpoint of the XLA run, against which `frozen` is checked.
      frozen: checkpoint names the run keeps frozen.

    Returns:
      The number of variables the XLA run changed between the two steps.
    """
    plain = tf.train.load_checkpoint("%s/model.ckpt-%d" % (plain_dir, step))
    xla = tf.train.load_checkpoint("%s/model.ckpt-%d" % (xla_dir, step))
    before = tf.train.load_checkpoint("%s/model.ckpt-%d" % (xla_dir, step_before))
    names = sorted(n for n in xla.get_variable_to_shape_map() if n != "global_step")
    assert names == sorted(n for n in plain.get_variable_to_shape_map() if n != "global_step")
    moved = 0
    for name in names:
        value = xla.get_tensor(name)
        if not _is_key_bias(name):
            np.testing.assert_allclose(value, plain.get_tensor(name), rtol=rtol, atol=atol, err_msg=name)
        if name in frozen:
            np.testing.assert_array_equal(before.get_tensor(name), value, err_msg=name)
        moved += not np.array_equal(before.get_tensor(name), value)
    return moved
