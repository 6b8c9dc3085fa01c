"""A multi-worker cluster found from Slurm's variables, for multi_worker_mirrored without TF_CONFIG.

Under `srun`, every task of a job step is one worker: Slurm tells each its
rank (SLURM_PROCID), the step's nodes and how many tasks each runs, and
TensorFlow's `SlurmClusterResolver` turns that into the cluster (a
"host:port" per task, ports counted up from a base on each node). Two things
it does not do on its own are done here:

* CPU nodes. The resolver counts GPUs with `nvidia-smi` and steps through
  them by `gpus_per_task`, so on a node without GPUs it fails (no
  `nvidia-smi`; or a step of 0). Without GPUs it is given one placeholder
  slot per task, only to lay out the ports, and told not to set
  CUDA_VISIBLE_DEVICES; the strategy is told of no accelerator.
* GPUs Slurm already bound to tasks (`--gpus-per-task`: each task's
  CUDA_VISIBLE_DEVICES lists its own): each task keeps what it sees.
  Otherwise the node's GPUs are shared out among its tasks as TensorFlow's
  resolver shares them (the same number to each, by the task's place on its
  node), but by Slurm's task order and from the GPUs the node lets the job
  see: the resolver counts a node's tasks in sorted host order, which gives
  two tasks one GPU when the nodes run unequal numbers of tasks and their
  names do not sort in Slurm's order (node9, node10).

The port base is derived from the job id, so that two jobs sharing a node
(a small cluster, the local test Slurm) do not both take TensorFlow's 8888.
The cluster is resolved before TensorFlow looks for GPUs: CUDA_VISIBLE_DEVICES
counts only when set before that.
"""

import dataclasses
import os
import shutil
import subprocess
from typing import Mapping, Optional

import tensorflow as tf
from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

# What `srun` sets in each task of a job step (a batch script, outside srun, has none but the rank).
STEP_VARIABLES = ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE")
_PORTS = (15000, 55000)  # the bases' range
_PORTS_PER_JOB = 16  # tasks of one node a job can run without its ports meeting the next job's


@dataclasses.dataclass(frozen=True)
class SlurmTask:
    """This task's place in its job step.

    job_id: SLURM_JOB_ID. rank: SLURM_PROCID, 0 to num_tasks - 1.
    tasks_per_node: {host: tasks}, in Slurm's node order.
    node: the host this task runs on (SLURMD_NODENAME), or None when Slurm does not say.
    """

    job_id: str
    rank: int
    num_tasks: int
    tasks_per_node: Mapping[str, int]
    node: Optional[str]

    @property
    def port_base(self):
        """The first port of this job's workers on each node (TensorFlow's resolver counts up from it)."""
        first, last = _PORTS
        slots = (last - first) // _PORTS_PER_JOB
        digits = "".join(c for c in self.job_id if c.isdigit()) or "0"
        return first + int(digits) % slots * _PORTS_PER_JOB


def in_job(environ=None):
    """Whether this process runs inside a Slurm job (a batch script or a step of one)."""
    return "SLURM_JOB_ID" in (os.environ if environ is None else environ)


def in_step(environ=None):
    """Whether this process is a task of a job step started by `srun` (Slurm set every STEP_VARIABLES)."""
    environ = os.environ if environ is None else environ
    return all(name in environ for name in STEP_VARIABLES)


def _fail(problem):
    raise ValueError("Slurm's variables do not describe a job step: %s. Start every worker of "
                     "--distribution_strategy=multi_worker_mirrored with srun inside the allocation "
                     "(srun python run_pretraining.py ...), or give each its TF_CONFIG." % problem)


def parse(environ=None):
    """Checks the Slurm variables of this task.

    Args:
      environ: the environment (os.environ when None).

    Returns:
      SlurmTask.

    Raises:
      ValueError: naming the variable that is missing or malformed, or a batch
        script that runs the training itself instead of under srun.
    """
    environ = os.environ if environ is None else environ
    if not in_step(environ):
        missing = [name for name in STEP_VARIABLES if name not in environ]
        if in_job(environ):
            _fail("this process runs in job %s outside srun (%s unset), as when a batch script runs the "
                  "training itself" % (environ["SLURM_JOB_ID"], ", ".join(missing)))
        _fail("%s unset" % ", ".join(missing))
    try:
        rank, num_tasks = int(environ["SLURM_PROCID"]), int(environ["SLURM_STEP_NUM_TASKS"])
    except ValueError:
        _fail("SLURM_PROCID=%r and SLURM_STEP_NUM_TASKS=%r must be integers"
              % (environ["SLURM_PROCID"], environ["SLURM_STEP_NUM_TASKS"]))
    try:
        hosts = slurm_cluster_resolver.expand_hostlist(environ["SLURM_STEP_NODELIST"])
        counts = slurm_cluster_resolver.expand_tasks_per_node(environ["SLURM_STEP_TASKS_PER_NODE"])
    except ValueError as error:
        _fail("SLURM_STEP_NODELIST=%r or SLURM_STEP_TASKS_PER_NODE=%r cannot be read (%s)"
              % (environ["SLURM_STEP_NODELIST"], environ["SLURM_STEP_TASKS_PER_NODE"], error))
    if len(hosts) != len(counts) or len(set(hosts)) != len(hosts):
        _fail("SLURM_STEP_NODELIST=%r (%d nodes) and SLURM_STEP_TASKS_PER_NODE=%r (%d counts) do not match"
              % (environ["SLURM_STEP_NODELIST"], len(hosts), environ["SLURM_STEP_TASKS_PER_NODE"], len(counts)))
    if sum(counts) != num_tasks:
        _fail("SLURM_STEP_TASKS_PER_NODE=%r adds up to %d tasks, SLURM_STEP_NUM_TASKS=%d"
              % (environ["SLURM_STEP_TASKS_PER_NODE"], sum(counts), num_tasks))
    if not 0 <= rank < num_tasks:
        _fail("SLURM_PROCID=%d is not a task of a step of %d" % (rank, num_tasks))
    return SlurmTask(job_id=environ.get("SLURM_JOB_ID", "0"), rank=rank, num_tasks=num_tasks,
                     tasks_per_node=dict(zip(hosts, counts)), node=environ.get("SLURMD_NODENAME"))


def _visible_gpus(environ, which):
    """This node's GPUs as CUDA_VISIBLE_DEVICES names them: its list when set (empty: none), else nvidia-smi's."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        return [device.strip() for device in environ["CUDA_VISIBLE_DEVICES"].split(",") if device.strip()]
    if not which("nvidia-smi"):
        return []
    listing = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True, check=False)
    count = sum(line.startswith("GPU ") for line in listing.stdout.splitlines()) if listing.returncode == 0 else 0
    return [str(index) for index in range(count)]


def resolve(which=shutil.which):
    """The cluster of this job step, for tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=...).

    Args:
      which: shutil.which, to find nvidia-smi.

    Reads os.environ (as TensorFlow's resolver does); when the node's GPUs are
    shared out among its tasks, sets this task's CUDA_VISIBLE_DEVICES there.

    Returns:
      (tf.distribute.cluster_resolver.SimpleClusterResolver naming the cluster,
      this task's job and index and its GPUs; the SlurmTask).

    Raises:
      ValueError: as parse(), or when this task's own address would be on
        another node than the one it runs on, or a node has fewer GPUs than tasks.
    """
    environ = os.environ
    task = parse(environ)
    most_tasks = max(task.tasks_per_node.values())
    # The resolver lays out the ports only: a placeholder slot per task, CUDA_VISIBLE_DEVICES left alone.
    resolver = slurm_cluster_resolver.SlurmClusterResolver(
        jobs={"worker": task.num_tasks}, port_base=task.port_base, tasks_per_node=dict(task.tasks_per_node),
        gpus_per_node=most_tasks, gpus_per_task=1, auto_set_gpu=False)
    # TensorFlow lays the tasks out node by node in sorted host order; Slurm numbers them (block
    # distribution) in its node order, which sorts node10 after node9: the workers in Slurm's order.
    by_host = {}
    for address in resolver.cluster_spec().as_dict()["worker"]:
        by_host.setdefault(address.rsplit(":", 1)[0], []).append(address)
    workers = [address for host in task.tasks_per_node for address in by_host[host]]
    host = workers[task.rank].rsplit(":", 1)[0]
    if task.node is not None and host != task.node:
        raise ValueError(
            "Task %d of job %s runs on %s, but numbering the tasks node by node puts it on %s: start the step "
            "with srun --distribution=block (Slurm's default), or give each worker its TF_CONFIG."
            % (task.rank, task.job_id, task.node, host))
    gpus = _visible_gpus(environ, which)
    if not gpus:
        gpus_per_task = 0
    elif "SLURM_GPUS_PER_TASK" in environ:
        gpus_per_task = len(gpus)  # Slurm bound each task its own GPUs: each keeps what it sees.
    else:
        if len(gpus) < most_tasks:
            raise ValueError("%d GPU(s) on a node that runs %d tasks of this step: ask Slurm for at least one GPU "
                             "per task (--gpus-per-task), or run one task per node." % (len(gpus), most_tasks))
        # The node's GPUs shared out, the same number to each task, by its place among its node's tasks.
        gpus_per_task = len(gpus) // most_tasks
        place = [address.rsplit(":", 1)[0] for address in workers[:task.rank]].count(host)  # its node's tasks before it
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(gpus[place * gpus_per_task:(place + 1) * gpus_per_task])
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": workers}), task_type="worker", task_id=task.rank, rpc_layer="grpc",
        num_accelerators={"GPU": gpus_per_task} if gpus_per_task else {}), task
