"""Two replicas (MirroredStrategy over two logical CPUs): the host batch is split, training runs,
and the result matches one replica on the same global batch."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from freezing import seeded_values
from training import distribution
from training.testing.pretraining_records import TINY_CONFIG, write_tiny_setup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Logical devices must be configured before TensorFlow initialises, hence a child process.
CHILD = """
import json, logging, sys
from absl import logging as absl_logging
logging.basicConfig(level=logging.INFO)
absl_logging.set_verbosity(absl_logging.INFO)
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from training.pretraining import PretrainingOptions, run
options = PretrainingOptions(**json.loads(sys.argv[1]))
print("RESULT " + json.dumps(run(options)))
"""


def _run_child(options):
    process = subprocess.run([sys.executable, "-c", CHILD, json.dumps(options)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=ROOT))
    assert process.returncode == 0, process.stderr[-3000:]
    return process


def test_two_replicas_match_one(tmp_path):
    directory = tmp_path / "data"
    directory.mkdir()
    config_path, inputs = write_tiny_setup(directory)
    # No dropout, so the two runs differ only in how the batch is spread.
    with open(config_path, "w") as f:
        json.dump(dict(TINY_CONFIG, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0), f)
    common = dict(bert_config_file=config_path, input_file=inputs, max_seq_length=32,
                  max_predictions_per_seq=5, do_train=True, do_eval=True, train_batch_size=16,
                  learning_rate=1e-3, num_train_steps=4, num_warmup_steps=0,
                  save_checkpoints_steps=4, iterations_per_loop=2)
    mirrored = _run_child(dict(common, output_dir=str(tmp_path / "mirrored"),
                               distribution_strategy="mirrored"))
    assert "Distribution: mirrored with 2 replica(s)" in mirrored.stderr
    single = _run_child(dict(common, output_dir=str(tmp_path / "single"),
                             distribution_strategy="one_device"))
    assert "with 1 replica(s)" in single.stderr
    a = tf.train.load_checkpoint(str(tmp_path / "mirrored" / "model.ckpt-4"))
    b = tf.train.load_checkpoint(str(tmp_path / "single" / "model.ckpt-4"))
    # The next-sentence loss is a mean over examples either way; the masked-LM
    # loss is normalised per replica (as the original per TPU core), so the
    # runs agree closely but not bit for bit.
    for name in ("bert/encoder/layer_1/output/dense/kernel", "cls/seq_relationship/output_weights"):
        np.testing.assert_allclose(a.get_tensor(name), b.get_tensor(name), atol=2e-3, err_msg=name)
    # And both trained: the weights moved from the shared seeded initialisation.
    name = "bert/encoder/layer_1/output/dense/kernel"
    initial = seeded_values.seeded_value(name, a.get_tensor(name).shape, "truncated_normal", 0.02, 12345)
    assert np.abs(a.get_tensor(name) - initial).max() > 1e-3
    assert a.get_tensor("global_step") == b.get_tensor("global_step") == 4
    results = json.loads(mirrored.stdout.split("RESULT ")[1])
    assert np.isfinite(results["loss"]) and results["global_step"] == 4


def test_unknown_strategy():
    with pytest.raises(ValueError, match="--distribution_strategy=ps is not supported; expected one of one_device, mirrored"):
        distribution.DistributionOptions(distribution_strategy="ps").validate()
