"""TF_CONFIG: the clusters accepted, TensorFlow's worker numbering, and an error naming each mistake."""

import json
import re

import pytest
from tensorflow.python.distribute import multi_worker_util

from training import tf_config

WORKERS = {"worker": ["127.0.0.1:2222", "127.0.0.1:2223", "10.0.0.3:2222"]}
WITH_CHIEF = {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"]}


def _parse(cluster=None, task=None, **extra):
    config = dict(extra)
    if cluster is not None:
        config["cluster"] = cluster
    if task is not None:
        config["task"] = task
    return tf_config.parse(json.dumps(config))


@pytest.mark.parametrize("cluster", [WORKERS, WITH_CHIEF, {"worker": ["localhost:1"]}])
def test_every_task_of_a_cluster_is_numbered_as_tensorflow_numbers_it(cluster):
    ids = []
    for job, addresses in cluster.items():
        for index in range(len(addresses)):
            task = _parse(cluster, {"type": job, "index": index})
            assert (task.task_type, task.task_index) == (job, index)
            assert task.num_workers == sum(len(a) for a in cluster.values())
            # TensorFlow's own numbering (the replicas' order in the cluster).
            assert task.worker_id == multi_worker_util.id_in_cluster(cluster, job, index)
            assert task.is_chief == (task.worker_id == 0) == multi_worker_util.is_chief(cluster, job, index)
            ids.append(task.worker_id)
    assert sorted(ids) == list(range(len(ids)))


def test_other_keys_are_left_to_tensorflow():
    task = _parse(WORKERS, {"type": "worker", "index": 1}, environment="cloud", rpc_layer="grpc")
    assert task.worker_id == 1 and dict(task.cluster) == {"worker": tuple(WORKERS["worker"])}


@pytest.mark.parametrize("text", [None, "", "  "])
def test_missing_tf_config_names_the_variable_and_the_expected_json(text):
    with pytest.raises(ValueError) as error:
        tf_config.parse(text)
    assert str(error.value) == (
        "--distribution_strategy=multi_worker_mirrored needs the environment variable TF_CONFIG, JSON "
        "naming the cluster and this worker's task, e.g. %s (the same \"cluster\" on every worker, each "
        "with its own \"task\" index), or to run under srun in a Slurm allocation, where the cluster is found "
        "from Slurm's variables." % tf_config.EXAMPLE)


def test_errors_say_what_was_expected():
    with pytest.raises(ValueError) as error:
        _parse(WORKERS, {"type": "worker", "index": 3})
    assert str(error.value) == (
        "TF_CONFIG \"task\" index 3 is out of range: \"cluster\" has 3 \"worker\" task(s), index 0 to 2. "
        "Expected JSON such as %s: the same \"cluster\" on every worker (\"host:port\" addresses of its "
        "jobs, chief and worker), and in \"task\" this worker's job and index in it." % tf_config.EXAMPLE)


@pytest.mark.parametrize("text, problem", [
    ("worker0", "TF_CONFIG is not JSON (Expecting value: line 1 column 1 (char 0)): 'worker0'"),
    ('{"cluster": {"worker": ["a:1"]}, "task": ', "TF_CONFIG is not JSON ("),
    ('["a:1", "b:2"]', 'TF_CONFIG must be a JSON object, not ["a:1", "b:2"]'),
    ('{"task": {"type": "worker", "index": 0}}', 'TF_CONFIG has no "cluster"'),
    ('{"cluster": ["a:1"], "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG "cluster" must be an object of jobs, not ["a:1"]'),
    ('{"cluster": {}, "task": {"type": "worker", "index": 0}}', 'TF_CONFIG "cluster" must be an object of jobs, not {}'),
    ('{"cluster": {"worker": ["a:1"], "ps": ["b:1"]}, "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG names the job "ps" in "cluster"; multi_worker_mirrored trains with the jobs chief and worker only'),
    ('{"cluster": {"worker": "a:1,b:1"}, "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG "cluster" job "worker" must be a non-empty list of "host:port" addresses, not "a:1,b:1"'),
    ('{"cluster": {"worker": []}, "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG "cluster" job "worker" must be a non-empty list of "host:port" addresses, not []'),
    ('{"cluster": {"worker": ["a:1", "b"]}, "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG "cluster" job "worker" must be a non-empty list of "host:port" addresses, not ["a:1", "b"]'),
    ('{"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}}',
     'TF_CONFIG "cluster" has 2 chiefs; at most one'),
    ('{"cluster": {"worker": ["a:1"]}}', 'TF_CONFIG has no "task"'),
    ('{"cluster": {"worker": ["a:1"]}, "task": 0}', 'TF_CONFIG "task" must be an object, not 0'),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"index": 0}}',
     'TF_CONFIG "task" type null is not a job of its "cluster" (worker)'),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "chief", "index": 0}}',
     'TF_CONFIG "task" type "chief" is not a job of its "cluster" (worker)'),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker"}}', 'TF_CONFIG "task" index must be an integer, not null'),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}}',
     'TF_CONFIG "task" index must be an integer, not "0"'),
    ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": true}}',
     'TF_CONFIG "task" index must be an integer, not true'),
    ('{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": -1}}',
     'TF_CONFIG "task" index -1 is out of range: "cluster" has 2 "worker" task(s), index 0 to 1'),
    ('{"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "chief", "index": 1}}',
     'TF_CONFIG "task" index 1 is out of range: "cluster" has 1 "chief" task(s), index 0 to 0'),
])
def test_each_malformed_tf_config_is_named(text, problem):
    with pytest.raises(ValueError, match="^" + re.escape(problem)) as error:
        tf_config.parse(text)
    assert str(error.value).endswith("in \"task\" this worker's job and index in it.")
