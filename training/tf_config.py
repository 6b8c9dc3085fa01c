"""TF_CONFIG, the environment variable naming a multi-worker cluster, checked before anything runs.

Every worker of a --distribution_strategy=multi_worker_mirrored run gets the
same "cluster" and its own "task":

  {"cluster": {"worker": ["host0:2222", "host1:2222"]},
   "task": {"type": "worker", "index": 0}}

TensorFlow reads it when the strategy is created; a missing or malformed
TF_CONFIG would otherwise train alone (missing) or fail deep inside
TensorFlow, so `parse` checks it first and names what is wrong.
"""

import dataclasses
import json
import re
from typing import Mapping, Sequence

VARIABLE = "TF_CONFIG"
# The jobs multi_worker_mirrored trains with; the chief (at most one) is
# worker 0, then the workers in order, as TensorFlow numbers them.
JOBS = ("chief", "worker")
EXAMPLE = '{"cluster": {"worker": ["host0:2222", "host1:2222"]}, "task": {"type": "worker", "index": 0}}'
_ADDRESS = re.compile(r"^\S+:\d+$")


@dataclasses.dataclass(frozen=True)
class ClusterTask:
    """One worker's view of the cluster.

    cluster: {job: ["host:port", ...]} with jobs among JOBS.
    task_type, task_index: this worker's job and position in it.
    """

    cluster: Mapping[str, Sequence[str]]
    task_type: str
    task_index: int

    @property
    def num_workers(self):
        return sum(len(self.cluster.get(job, ())) for job in JOBS)

    @property
    def worker_id(self):
        """This worker's position among all workers: 0 is the chief (or worker 0 without one)."""
        return id_in_cluster(self.cluster, self.task_type, self.task_index)

    @property
    def is_chief(self):
        return self.worker_id == 0


def id_in_cluster(cluster, task_type, task_index):
    """TensorFlow's numbering of the workers: the chief first, then the workers in order."""
    return task_index + (1 if task_type == "worker" and cluster.get("chief") else 0)


def _fail(problem):
    raise ValueError(
        "%s %s. Expected JSON such as %s: the same \"cluster\" on every worker (\"host:port\" "
        "addresses of its jobs, %s), and in \"task\" this worker's job and index in it."
        % (VARIABLE, problem, EXAMPLE, " and ".join(JOBS)))


def parse(text):
    """Checks TF_CONFIG's text for --distribution_strategy=multi_worker_mirrored.

    Args:
      text: the variable's value, or None when it is unset.

    Returns:
      ClusterTask.

    Raises:
      ValueError: naming TF_CONFIG, what is wrong and what was expected.
    """
    if text is None or not text.strip():
        raise ValueError(
            "--distribution_strategy=multi_worker_mirrored needs the environment variable %s, "
            "JSON naming the cluster and this worker's task, e.g. %s (the same \"cluster\" on every "
            "worker, each with its own \"task\" index), or to run under srun in a Slurm allocation, "
            "where the cluster is found from Slurm's variables." % (VARIABLE, EXAMPLE))
    try:
        config = json.loads(text)
    except ValueError as error:
        _fail("is not JSON (%s): %r" % (error, text[:200]))
    if not isinstance(config, dict):
        _fail("must be a JSON object, not %s" % json.dumps(config)[:200])
    cluster, task = config.get("cluster"), config.get("task")
    if not isinstance(cluster, dict) or not cluster:
        _fail("has no \"cluster\"" if cluster is None else "\"cluster\" must be an object of jobs, not %s"
              % json.dumps(cluster)[:200])
    for job, addresses in cluster.items():
        if job not in JOBS:
            _fail("names the job \"%s\" in \"cluster\"; multi_worker_mirrored trains with the jobs %s only"
                  % (job, " and ".join(JOBS)))
        if (not isinstance(addresses, list) or not addresses
                or not all(isinstance(a, str) and _ADDRESS.match(a) for a in addresses)):
            _fail("\"cluster\" job \"%s\" must be a non-empty list of \"host:port\" addresses, not %s"
                  % (job, json.dumps(addresses)[:200]))
    if len(cluster.get("chief", ())) > 1:
        _fail("\"cluster\" has %d chiefs; at most one" % len(cluster["chief"]))
    if not isinstance(task, dict):
        _fail("has no \"task\"" if task is None else "\"task\" must be an object, not %s" % json.dumps(task)[:200])
    task_type, index = task.get("type"), task.get("index")
    if task_type not in cluster:
        _fail("\"task\" type %s is not a job of its \"cluster\" (%s)"
              % (json.dumps(task_type), ", ".join(sorted(cluster))))
    if not isinstance(index, int) or isinstance(index, bool):
        _fail("\"task\" index must be an integer, not %s" % json.dumps(index))
    if not 0 <= index < len(cluster[task_type]):
        _fail("\"task\" index %d is out of range: \"cluster\" has %d \"%s\" task(s), index 0 to %d"
              % (index, len(cluster[task_type]), task_type, len(cluster[task_type]) - 1))
    return ClusterTask({job: tuple(cluster[job]) for job in cluster}, task_type, index)
