"""`--distribution_strategy` and the original TPU flags -> a tf.distribute.Strategy; who is who among its workers.

With multi_worker_mirrored every worker runs the same command; worker 0, the
chief, writes the outputs. The cluster is named by TF_CONFIG
(training/tf_config.py), or, when that is unset in a task started by Slurm's
`srun`, by Slurm's variables (training/slurm_cluster.py).
`worker_id`, `num_workers` and `is_chief` say which worker this process is,
`barrier` waits for all of them, `check_same_step` that they resumed alike.
"""

import dataclasses
import os
from typing import Optional

import tensorflow as tf
from absl import logging
from official.common import distribute_utils

from options import Options, option
from training import slurm_cluster, tf_config

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


@dataclasses.dataclass(kw_only=True)
class TpuOptions(Options):
    """The original's TPU flags."""

    use_tpu: bool = option(False, "Whether to use TPU (same as --distribution_strategy=tpu).")
    tpu_name: Optional[str] = option(None, "The Cloud TPU to use for training.")
    tpu_zone: Optional[str] = option(None, "GCE zone where the Cloud TPU is located in.")
    gcp_project: Optional[str] = option(None, "Project name for the Cloud TPU-enabled project.")
    master: Optional[str] = option(None, "TensorFlow master URL (used when --tpu_name is unset).")
    num_tpu_cores: int = option(8, "Kept for compatibility: TPUStrategy uses every core it finds.")


@dataclasses.dataclass(kw_only=True)
class DistributionOptions(TpuOptions):
    distribution_strategy: str = option(
        "one_device", "tf.distribute strategy: mirrored (local GPUs, else the logical CPUs), "
        "multi_worker_mirrored (the cluster from TF_CONFIG, or from Slurm under srun) or tpu.",
        choices=STRATEGIES, new=True)

    def validate(self):
        """Also checks the cluster of multi_worker_mirrored (TF_CONFIG, or Slurm's variables), before anything runs."""
        super().validate()
        if self.distribution_strategy == "multi_worker_mirrored" and not self.use_tpu:
            find_cluster()


def find_cluster():
    """Where multi_worker_mirrored finds its cluster: "TF_CONFIG" when set, else "Slurm" in an srun task.

    Raises:
      ValueError: TF_CONFIG malformed; Slurm's variables malformed, or a Slurm
        job outside srun; or neither (the message says both ways).
    """
    if os.environ.get(tf_config.VARIABLE, "").strip() or not slurm_cluster.in_job():
        tf_config.parse(os.environ.get(tf_config.VARIABLE))
        return "TF_CONFIG"
    slurm_cluster.parse()
    return "Slurm"


def get_strategy(options):
    """Builds the strategy of validated DistributionOptions.

    `--use_tpu` means "tpu"; the TPU flags go to the TPU cluster resolver
    (`--master` when `--tpu_name` is unset).
    """
    distribution_strategy = "tpu" if options.use_tpu else options.distribution_strategy
    if distribution_strategy == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=options.tpu_name or options.master, zone=options.tpu_zone, project=options.gcp_project
        )
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    if distribution_strategy == "multi_worker_mirrored":
        return _multi_worker_strategy()
    num_gpus = len(tf.config.list_physical_devices("GPU"))
    if distribution_strategy == "mirrored" and not num_gpus:
        # Without GPUs, mirror over the logical CPU devices (one unless
        # configured otherwise), which is how multi-replica runs are tested.
        strategy = tf.distribute.MirroredStrategy(
            [device.name for device in tf.config.list_logical_devices("CPU")]
        )
    else:
        strategy = distribute_utils.get_distribution_strategy(
            distribution_strategy=distribution_strategy, num_gpus=num_gpus
        )
    logging.info(
        "Distribution: %s with %d replica(s).", distribution_strategy, strategy.num_replicas_in_sync
    )
    return strategy


def _multi_worker_strategy():
    """multi_worker_mirrored over the cluster of TF_CONFIG, or of Slurm (resolved before TensorFlow counts GPUs)."""
    try:
        if find_cluster() == "TF_CONFIG":
            task = tf_config.parse(os.environ.get(tf_config.VARIABLE))
            strategy = distribute_utils.get_distribution_strategy(distribution_strategy="multi_worker_mirrored")
            found = "TF_CONFIG task %s %d" % (task.task_type, task.task_index)
            worker, workers = task.worker_id, task.num_workers
        else:
            resolver, task = slurm_cluster.resolve()
            strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
            found = "found by Slurm: job %s, task %d of %d on %s" % (
                task.job_id, task.rank, task.num_tasks, task.node or "its node")
            worker, workers = task.rank, task.num_tasks
    except RuntimeError as error:
        # TensorFlow configures collective ops when the strategy is made,
        # which it refuses once it has run an op.
        raise RuntimeError("multi_worker_mirrored must be created before TensorFlow runs "
                           "anything in this process (%s)." % error) from error
    logging.info("Distribution: multi_worker_mirrored with %d replica(s): worker %d of %d (%s)%s.",
                 strategy.num_replicas_in_sync, worker, workers, found, ", the chief" if worker == 0 else "")
    return strategy


def _multi_worker_task(strategy):
    """(task type, index, cluster dict) of a multi-worker strategy, else None."""
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return None
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec().as_dict() if resolver else {}
    if not cluster:
        return None
    return resolver.task_type, resolver.task_id, cluster


def worker_id(strategy):
    """This process's worker, 0 (the chief) to num_workers - 1, as TensorFlow orders the replicas."""
    task = _multi_worker_task(strategy)
    return tf_config.id_in_cluster(task[2], task[0], task[1]) if task else 0


def num_workers(strategy):
    """The processes (hosts) training together: 1 unless multi_worker_mirrored names more."""
    return strategy.num_replicas_in_sync // len(strategy.extended.worker_devices)


def is_chief(strategy):
    """Whether this process writes the run's outputs: the chief of a cluster, a lone process always."""
    return strategy.extended.should_checkpoint


def _gather(strategy, value):
    """[num_workers] of every worker's `value` (a collective: each worker must call it)."""
    local_replicas = len(strategy.extended.worker_devices)
    gathered = strategy.gather(strategy.run(lambda: tf.constant([value], tf.float64)), axis=0).numpy()
    return gathered[::local_replicas]  # one entry per local replica: keep each worker's first


def barrier(strategy):
    """Returns once every worker has called it (at once with one worker)."""
    if num_workers(strategy) > 1:
        _gather(strategy, 0)


def check_same_step(strategy, step):
    """Checks that every worker resumed at `step`.

    Raises:
      ValueError: when they differ, as when --output_dir is not one directory
        shared by all workers.
    """
    if num_workers(strategy) <= 1:
        return
    steps = _gather(strategy, step)
    if steps.min() != steps.max():
        raise ValueError(
            "The workers start at different steps (%s, worker 0 the chief): --output_dir must be "
            "one directory that every worker reads and writes (shared storage such as GCS or NFS), "
            "holding the chief's checkpoints." % ", ".join("%d" % s for s in steps))
