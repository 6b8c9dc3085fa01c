"""`--distribution_strategy` and the original TPU flags -> a tf.distribute.Strategy."""

import tensorflow as tf
from absl import logging
from official.common import distribute_utils

STRATEGIES = ("one_device", "mirrored", "multi_worker_mirrored", "tpu")


def get_strategy(distribution_strategy="one_device", use_tpu=False, tpu_name=None,
                 tpu_zone=None, gcp_project=None, master=None):
    """Builds the strategy.

    Args:
      distribution_strategy: one of STRATEGIES.
      use_tpu: the original flag; True means "tpu".
      tpu_name, tpu_zone, gcp_project, master: the original TPU flags, passed
        to the TPU cluster resolver (`master` is used when tpu_name is unset).

    Raises:
      ValueError: for an unknown strategy name, listing the known ones.
    """
    if use_tpu:
        distribution_strategy = "tpu"
    if distribution_strategy not in STRATEGIES:
        raise ValueError(
            "--distribution_strategy=%s is not supported; expected one of %s."
            % (distribution_strategy, ", ".join(STRATEGIES))
        )
    if distribution_strategy == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu_name or master, zone=tpu_zone, project=gcp_project
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
