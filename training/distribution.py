"""`--distribution_strategy` and the original TPU flags -> a tf.distribute.Strategy."""

import dataclasses
from typing import Optional

import tensorflow as tf
from absl import logging
from official.common import distribute_utils

from options import Options, option

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
        "multi_worker_mirrored (with TF_CONFIG) or tpu.", choices=STRATEGIES, new=True)


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
