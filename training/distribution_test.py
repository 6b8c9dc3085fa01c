"""Two replicas (MirroredStrategy over two logical CPUs): the host batch is split, training runs,
and the result matches one replica on the same global batch. TF_CONFIG is checked before a
multi-worker run starts; a single process is the chief of one worker. (Two workers on loopback:
multi_worker_test.py.)"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from freezing import seeded_values
from modeling import pretraining
from modeling.pretraining import PretrainingOptions
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
from modeling.pretraining import PretrainingOptions, run
options = PretrainingOptions(**json.loads(sys.argv[1]))
print("RESULT " + json.dumps(run(options)))
"""


def _run_child(options):
    process = subprocess.run([sys.executable, "-c", CHILD, json.dumps(options)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=ROOT))
    assert process.returncode == 0, process.stderr[-3000:]
    return process


@pytest.mark.long
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


@pytest.mark.parametrize("value, problem", [
    (None, "needs the environment variable TF_CONFIG"),
    ("worker0", "TF_CONFIG is not JSON"),
    ('{"task": {"type": "worker", "index": 0}}', 'TF_CONFIG has no "cluster"'),
    ('{"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}}', 'TF_CONFIG has no "task"'),
    ('{"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}, "task": {"type": "worker", "index": 2}}',
     'TF_CONFIG "task" index 2 is out of range: "cluster" has 2 "worker" task[(]s[)], index 0 to 1'),
])
def test_multi_worker_needs_a_valid_tf_config_before_anything_runs(tmp_path, monkeypatch, value, problem):
    _leave_slurm(monkeypatch)
    if value is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", value)
    options = distribution.DistributionOptions(distribution_strategy="multi_worker_mirrored")
    with pytest.raises(ValueError, match=problem):
        options.validate()
    # The run refuses it first thing: no output directory, no strategy.
    config_path, inputs = write_tiny_setup(tmp_path, examples_per_file=2)
    run_options = PretrainingOptions(
        bert_config_file=config_path, input_file=inputs, output_dir=str(tmp_path / "out"), max_seq_length=32,
        max_predictions_per_seq=5, do_train=True, distribution_strategy="multi_worker_mirrored")
    with pytest.raises(ValueError, match=problem):
        pretraining.run(run_options)
    assert not (tmp_path / "out").exists()


def _leave_slurm(monkeypatch):
    for name in [name for name in os.environ if name.startswith("SLURM_")]:
        monkeypatch.delenv(name)


SLURM_STEP = dict(SLURM_JOB_ID="5", SLURM_PROCID="0", SLURM_STEP_NUM_TASKS="2", SLURM_STEP_NODELIST="vm",
                  SLURM_STEP_TASKS_PER_NODE="2")


@pytest.mark.parametrize("variables, found", [
    (dict(SLURM_STEP, TF_CONFIG='{"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0}}'),
     "TF_CONFIG"),  # TF_CONFIG first, inside Slurm too
    (SLURM_STEP, "Slurm"),
    (dict(SLURM_JOB_ID="5", SLURM_PROCID="0"),
     "Slurm's variables do not describe a job step: this process runs in job 5 outside srun"),
    ({}, "needs the environment variable TF_CONFIG, .* or to run under srun in a Slurm allocation"),
])
def test_multi_worker_finds_its_cluster_in_tf_config_else_in_slurms_step(monkeypatch, variables, found):
    _leave_slurm(monkeypatch)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    options = distribution.DistributionOptions(distribution_strategy="multi_worker_mirrored")
    if found in ("TF_CONFIG", "Slurm"):
        assert distribution.find_cluster() == found
        options.validate()
    else:
        with pytest.raises(ValueError, match=found):
            options.validate()


def test_tf_config_is_only_read_for_multi_worker(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "not json")
    distribution.DistributionOptions(distribution_strategy="mirrored").validate()
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}}')
    distribution.DistributionOptions(distribution_strategy="multi_worker_mirrored").validate()


def test_a_single_process_is_the_chief_of_one_worker():
    strategy = distribution.get_strategy(distribution.DistributionOptions())
    assert distribution.worker_id(strategy) == 0 and distribution.num_workers(strategy) == 1
    assert distribution.is_chief(strategy)
    # Nothing to wait for, nothing to compare.
    distribution.barrier(strategy)
    distribution.check_same_step(strategy, 7)
