"""The training loop shared by pre-training and fine-tuning.

`train(spec, strategy, task)` runs what the original's TPUEstimator did, in a
custom loop: `iterations_per_loop` steps inside one tf.function call, a
checkpoint every `save_checkpoints_steps` and at the end, and a resume from
the newest checkpoint in output_dir when the same command runs again,
bit for bit (the input iterator and dropout generators are checkpointed too).
Freezing masks, mixed precision and tf.distribute are handled here once.
"""

import dataclasses
import math
import os
import signal
import time
from typing import Callable, Optional, Sequence

import tensorflow as tf
import tf_keras
from absl import logging

import modeling
from modeling import seeded_init, tf1_checkpoint
from training import freezing, precision, training_checkpoint
from training.optimization import build_optimizer, create_optimizer, current_learning_rate

# Fault injection for the resume tests: SIGKILL ourselves after this step.
KILL_AFTER_STEP_ENV = "BERT_TF2_TEST_KILL_AFTER_STEP"


@dataclasses.dataclass
class TrainingSpec:
    """The flags every training entry point shares."""

    output_dir: str
    init_checkpoint: Optional[str]
    train_batch_size: int
    learning_rate: float
    num_train_steps: int
    num_warmup_steps: int
    save_checkpoints_steps: int
    iterations_per_loop: int
    random_seed: int
    dtype: str = "float32"
    optimizer: str = "adamw"
    freeze: str = ""
    reinit: str = ""
    save_frozen: str = "values"

    @classmethod
    def from_options(cls, options, **overrides):
        """Takes the fields of an entry point's options object."""
        values = {f.name: getattr(options, f.name) for f in dataclasses.fields(cls) if hasattr(options, f.name)}
        values.update(overrides)
        return cls(**values)


@dataclasses.dataclass
class Task:
    """What the loop needs to know about a task.

    build_model: () -> a built task model (called inside the strategy scope).
    make_dataset: (host_batch_size, tf.distribute.InputContext) -> an endless,
      seeded tf.data.Dataset of dict batches.
    model_inputs: batch -> the model's input dict.
    compute_losses: (model outputs, batch) -> dict of scalar float32 losses,
      with "loss" the one minimised.
    loss_names: the losses logged, "loss" first.
    """

    build_model: Callable
    make_dataset: Callable
    model_inputs: Callable
    compute_losses: Callable
    loss_names: Sequence[str] = ("loss",)


def dropout_generators(model):
    """{name: tf.random.Generator} of every dropout layer, in a stable order."""
    generators = {}
    for index, layer in enumerate(model.submodules):
        if isinstance(layer, tf_keras.layers.Dropout):
            rng = layer._random_generator  # pylint: disable=protected-access
            rng._maybe_init()  # pylint: disable=protected-access
            if rng._generator is not None:  # pylint: disable=protected-access
                generators["dropout_%d" % index] = rng._generator  # pylint: disable=protected-access
    return generators


def build_seeded_model(strategy, build_model, seed):
    """Builds a task model in the strategy's scope, seeded by name (modeling/seeded_init.py)."""
    with strategy.scope():
        model = build_model()
    # Each variable a pure function of (seed, name, shape, initializer).
    seeded_init.initialize(model, seed)
    return model


class Trainer:
    """Holds the model, the optimizer and the compiled loop of one run."""

    def __init__(self, spec, strategy, build_model):
        self.spec = spec
        self.strategy = strategy
        self.model = build_seeded_model(strategy, build_model, spec.random_seed)
        self.optimizer = None
        self.variables = None

    def prepare_training(self, plan):
        """Builds the optimizer on the variables that train (frozen ones excluded)."""
        spec = self.spec
        self.variables = freezing.trained_variables(self.model, plan)
        with self.strategy.scope():
            optimizer = create_optimizer(
                spec.optimizer, spec.learning_rate, spec.num_train_steps, spec.num_warmup_steps
            )
            self.optimizer = build_optimizer(precision.wrap_optimizer(optimizer, spec.dtype), self.variables)

    def make_loop(self, task):
        model, optimizer, strategy = self.model, self.optimizer, self.strategy
        names = list(task.loss_names)
        variables = self.variables
        scaled = precision.uses_loss_scaling(optimizer)

        def step_fn(batch):
            with tf.GradientTape() as tape:
                outputs = model(task.model_inputs(batch), training=True)
                losses = task.compute_losses(outputs, batch)
                # Gradients are summed over replicas: average them as the
                # original's CrossShardOptimizer does.
                loss = losses["loss"] / strategy.num_replicas_in_sync
                if scaled:
                    loss = optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, variables)
            if scaled:
                grads = optimizer.get_unscaled_gradients(grads)
            # Variables the task does not use (SQuAD's pooler) have no gradient.
            optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
            return tf.stack([losses[name] for name in names])

        local_replicas = len(strategy.extended.worker_devices)

        def split_for_replica(batch):
            # The host batch holds every local replica's batch, in order.
            def value_fn(context):
                index = context.replica_id_in_sync_group % local_replicas
                return {k: tf.split(v, local_replicas)[index] for k, v in batch.items()}

            return strategy.experimental_distribute_values_from_function(value_fn)

        @tf.function
        def loop(iterator, num_steps):
            total = tf.zeros([len(names)])
            for _ in tf.range(num_steps):
                per_replica = strategy.run(step_fn, args=(split_for_replica(next(iterator)),))
                total += strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None)
            return total / tf.cast(num_steps, tf.float32)

        return loop


def _next_boundary(step, spec):
    """The step the next loop stops at: a log, checkpoint or final step."""
    stops = [
        spec.num_train_steps,
        (step // spec.save_checkpoints_steps + 1) * spec.save_checkpoints_steps,
        (step // spec.iterations_per_loop + 1) * spec.iterations_per_loop,
    ]
    return min(stops)


def train(spec, strategy, task):
    """Trains to num_train_steps, resuming from output_dir when it can.

    Args:
      spec: TrainingSpec.
      strategy: tf.distribute.Strategy.
      task: Task.

    Returns:
      The Trainer, holding the trained model and optimizer.
    """
    trainer = Trainer(spec, strategy, task.build_model)
    model = trainer.model
    resume_from = training_checkpoint.latest(spec.output_dir)
    from_checkpoint = ()
    if spec.init_checkpoint:
        from_checkpoint = tf1_checkpoint.checkpoint_variable_names(spec.init_checkpoint)
        if not resume_from:
            modeling.load_checkpoint(model, spec.init_checkpoint)
    plan = freezing.make_plan(model, spec.freeze, spec.reinit, from_checkpoint)
    if not resume_from:
        freezing.reinitialize(model, plan, spec.random_seed)
    freezing.record(spec.output_dir, model, plan, dict(
        freeze=spec.freeze, reinit=spec.reinit, save_frozen=spec.save_frozen,
        random_seed=spec.random_seed,
    ))
    trainer.prepare_training(plan)
    optimizer = trainer.optimizer
    frozen_manifest = None
    if spec.save_frozen == "seed" and plan.regenerable:
        frozen_manifest = seeded_init.manifest(model, plan.regenerable, spec.random_seed)

    replicas = strategy.num_replicas_in_sync
    if spec.train_batch_size % replicas:
        raise ValueError(
            "--train_batch_size=%d must be divisible by the %d replicas."
            % (spec.train_batch_size, replicas)
        )
    # A plain tf.data iterator per host, split across its replicas inside the
    # step: unlike tf.distribute's iterators it can be checkpointed.
    local_replicas = len(strategy.extended.worker_devices)
    num_hosts = replicas // local_replicas
    host_id = getattr(getattr(strategy, "cluster_resolver", None), "task_id", 0) or 0
    dataset = task.make_dataset(
        spec.train_batch_size // num_hosts, tf.distribute.InputContext(num_hosts, host_id, replicas)
    )
    iterator = iter(dataset)
    with strategy.scope():
        state = tf.train.Checkpoint(iterator=iterator, **dropout_generators(model))

    if resume_from:
        training_checkpoint.restore(resume_from, model, optimizer, state, trainer.variables)

    step = int(optimizer.iterations.numpy())
    if step >= spec.num_train_steps:
        logging.info("Already at step %d of %d: nothing to train.", step, spec.num_train_steps)
        return trainer
    loop = trainer.make_loop(task)
    writer = tf.summary.create_file_writer(spec.output_dir)
    kill_after = int(os.environ.get(KILL_AFTER_STEP_ENV, "0"))
    last_saved = resume_from
    logging.info("Training from step %d to %d.", step, spec.num_train_steps)
    while step < spec.num_train_steps:
        target = _next_boundary(step, spec)
        if kill_after and step < kill_after < target:
            target = kill_after
        start = time.time()
        losses = loop(iterator, tf.constant(target - step)).numpy()
        elapsed = time.time() - start
        previous, step = step, int(optimizer.iterations.numpy())
        if not all(math.isfinite(x) for x in losses):
            raise FloatingPointError(
                "The loss became %s between steps %d and %d; stopping. The last good "
                "checkpoint is %s." % (losses[0], previous, step, last_saved or "none")
            )
        learning_rate = current_learning_rate(optimizer)
        examples_per_second = (step - previous) * spec.train_batch_size / max(elapsed, 1e-9)
        logging.info(
            "step %d/%d: %s, learning_rate = %.3g, examples/s = %.1f",
            step, spec.num_train_steps,
            ", ".join("%s = %.4f" % item for item in zip(task.loss_names, losses)),
            learning_rate, examples_per_second,
        )
        with writer.as_default(step=step):
            for name, value in zip(task.loss_names, losses):
                tf.summary.scalar(name, value)
            tf.summary.scalar("learning_rate", learning_rate)
            tf.summary.scalar("examples_per_second", examples_per_second)
        if step % spec.save_checkpoints_steps == 0 or step == spec.num_train_steps:
            last_saved = training_checkpoint.save(
                spec.output_dir, model, optimizer, state, trainer.variables, frozen_manifest
            )
        if kill_after and step == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    writer.flush()
    return trainer
