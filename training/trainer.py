"""The training loop shared by pre-training and fine-tuning.

`train(options, schedule, strategy, task, freezer)` runs what the original's
TPUEstimator did, in a custom loop: `iterations_per_loop` steps inside one
tf.function call, a checkpoint every `save_checkpoints_steps` and at the end,
and a resume from the newest checkpoint in output_dir when the same command
runs again, bit for bit (the input iterator and dropout generators are
checkpointed too). Freezing masks, mixed precision and tf.distribute are
handled here once.

Multi-worker runs (every worker runs the same command): each worker reads
its share of the input; the chief (worker 0) writes the checkpoints, records
and TensorBoard events into output_dir, and the others only their own input
position beside them (checkpoints/training_checkpoint.py); on a resume every worker
restores the same checkpoint from the shared output_dir.

The pieces, each tested on its own: `Trainer` sets up (model, init
checkpoint, freezing plan, optimizer, input), restores, runs compiled steps
and saves; `next_boundary` decides where a loop stops; `check_finite` stops a
diverged run; `TrainingLog` writes the log lines and TensorBoard scalars.
"""

import dataclasses
import json
import math
import os
import time
from typing import Callable, Mapping, Optional, Sequence

import tensorflow as tf
import tf_keras
from absl import logging
from official.modeling import performance

import outputs
from checkpoints import seeded_init
from checkpoints import init_checkpoint, training_checkpoint
from checkpoints.original_names import original_variables
from training import distribution, onednn, record_files
from training.optimization import build_optimizer, create_optimizer, current_learning_rate


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
    records: {file name: text} written to output_dir once the run is
      accepted (e.g. the effective bert_config.json); a resume whose records
      differ from those already there is refused.
    input_files: the record files make_dataset reads, searched for the
      damaged record when reading fails.
    tokens_name: the entry of compute_losses' dict, if any, that counts the
      replica batch's real tokens (not a loss: the log turns it into tokens/s).
    """

    build_model: Callable
    make_dataset: Callable
    model_inputs: Callable
    compute_losses: Callable
    loss_names: Sequence[str] = ("loss",)
    records: Mapping[str, str] = dataclasses.field(default_factory=dict)
    input_files: Sequence[str] = ()
    tokens_name: Optional[str] = None


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
    """Builds a task model in the strategy's scope, each variable drawn from (seed, name)."""
    with strategy.scope():
        model = build_model()
    seeded_init.initialize(model, seed)
    return model


def check_records(output_dir, records, resume_from):
    """Refuses to resume a run whose records (bert_config.json) describe another model.

    Raises:
      ValueError: naming the file and the keys that differ.
    """
    if not resume_from:
        return
    for name, text in records.items():
        path = os.path.join(output_dir, name)
        if not tf.io.gfile.exists(path):
            continue
        with tf.io.gfile.GFile(path) as f:
            recorded = f.read()
        if recorded == text:
            continue
        try:
            old, new = json.loads(recorded), json.loads(text)
            differences = ", ".join(
                "%s: %s here, %s in this run" % (key, json.dumps(old.get(key)), json.dumps(new.get(key)))
                for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key))
        except (ValueError, AttributeError):
            differences = "the contents differ"
        if differences:
            raise ValueError(
                "%s describes the checkpoints being resumed (%s), and this run differs (%s); "
                "resume with the same settings, or use a new --output_dir."
                % (path, resume_from, differences))


def next_boundary(step, num_train_steps, save_checkpoints_steps, iterations_per_loop, log_steps):
    """The step the loop starting at `step` stops at: the next log line, checkpoint or final step."""
    return min([num_train_steps] + [(step // every + 1) * every
                                    for every in (save_checkpoints_steps, iterations_per_loop, log_steps)])


def check_finite(losses, previous_step, step, last_saved):
    """Raises FloatingPointError, naming the last good checkpoint, when a loss is NaN or infinite."""
    if not all(math.isfinite(x) for x in losses):
        raise FloatingPointError(
            "The loss became %s between steps %d and %d; stopping. The last good "
            "checkpoint is %s." % (losses[0], previous_step, step, last_saved or "none")
        )


class TrainingLog:
    """One log line and the TensorBoard scalars per loop.

    With `tokens_name`, that entry of the loop's means (real tokens per replica
    batch) is logged as tokens/s instead of as a loss. `batch_size` is the
    global batch; without `output_dir` (the other workers of a cluster) only
    the log lines are written.
    """

    def __init__(self, output_dir, loss_names, batch_size, num_train_steps, tokens_name=None, num_replicas=1):
        self.loss_names = list(loss_names)
        self.batch_size = batch_size
        self.num_train_steps = num_train_steps
        self.tokens_name = tokens_name
        self.num_replicas = num_replicas
        self.writer = tf.summary.create_file_writer(output_dir) if output_dir else tf.summary.create_noop_writer()

    def write(self, step, previous_step, losses, learning_rate, elapsed):
        elapsed = max(elapsed, 1e-9)
        rates = dict(examples_per_second=(step - previous_step) * self.batch_size / elapsed)
        named = list(zip(self.loss_names, losses))
        if self.tokens_name:
            tokens = dict(named)[self.tokens_name] * self.num_replicas
            named = [(name, value) for name, value in named if name != self.tokens_name]
            rates["tokens_per_second"] = (step - previous_step) * tokens / elapsed
        logging.info(
            "step %d/%d: %s, learning_rate = %.3g, %s",
            step, self.num_train_steps, ", ".join("%s = %.4f" % item for item in named), learning_rate,
            ", ".join("%s = %.1f" % (name.replace("_per_second", "/s"), value) for name, value in rates.items()),
        )
        with self.writer.as_default(step=step):
            for name, value in named:
                tf.summary.scalar(name, value)
            tf.summary.scalar("learning_rate", learning_rate)
            for name, value in rates.items():
                tf.summary.scalar(name, value)

    def close(self):
        self.writer.flush()


class Trainer:
    """One run's model, optimizer, input and compiled loop.

    Construction is the set-up: the seeded model, --init_checkpoint (unless
    output_dir holds a checkpoint to resume), the freezing plan and
    parameters.json, the optimizer on the trained variables only, the input
    iterator and the extra state that an exact resume needs.
    """

    def __init__(self, options, schedule, strategy, task, freezer):
        """
        Args:
          options: TrainingOptions (training/training_options.py).
          schedule: Schedule, the run's step counts.
          strategy: tf.distribute.Strategy.
          task: Task.
          freezer: the run's Freezer (freezing/freezer.py).
        """
        self.options, self.schedule, self.strategy, self.task = options, schedule, strategy, task
        # (this worker, number of workers); the chief writes output_dir.
        self.worker = (distribution.worker_id(strategy), distribution.num_workers(strategy))
        self.chief = distribution.is_chief(strategy)
        self.model = build_seeded_model(strategy, task.build_model, options.random_seed)
        self.variables = original_variables(self.model)  # built once, used throughout
        self.resume_from = training_checkpoint.latest(options.output_dir)
        self.plan = self._plan_freezing(freezer)
        self.trained = freezer.trained_variables(self.plan, self.variables, self.model.trainable_variables)
        self.frozen_manifest = freezer.frozen_manifest(self.plan, self.variables)
        with strategy.scope():
            optimizer = create_optimizer(options.optimizer, options.learning_rate,
                                         schedule.num_train_steps, schedule.num_warmup_steps,
                                         schedule.learning_rate_schedule, schedule.hidden_size,
                                         schedule.adam_beta_2)
            optimizer = performance.configure_optimizer(optimizer, use_float16=options.dtype == "float16")
            self.optimizer = build_optimizer(optimizer, self.trained)
        self.iterator = iter(self._dataset())
        with strategy.scope():
            self.state = tf.train.Checkpoint(iterator=self.iterator, **dropout_generators(self.model))
        self._loop = None

    def _plan_freezing(self, freezer):
        """--init_checkpoint, the freezing plan and --reinit; records are written later."""
        options = self.options
        freezer.check_recorded(options.output_dir)
        check_records(options.output_dir, self.task.records, self.resume_from)
        loaded = ()
        if options.init_checkpoint:
            loaded = init_checkpoint.variable_names(options.init_checkpoint)
            if self.resume_from:
                logging.warning(
                    "--init_checkpoint=%s is not loaded: %s holds checkpoints, and the run resumes "
                    "from %s. Use a new --output_dir to start from --init_checkpoint.",
                    options.init_checkpoint, options.output_dir, self.resume_from)
            else:
                result = init_checkpoint.load(self.model, options.init_checkpoint)
                if not result.loaded:
                    # The original trains on from the initial values then; it is always a wrong path.
                    raise ValueError(
                        "--init_checkpoint=%s holds none of this model's %d variables (it holds %s): a checkpoint "
                        "of another model? Give one of this model, or no --init_checkpoint to train from scratch."
                        % (options.init_checkpoint, len(result.missing), (", ".join(result.unexpected[:3])
                           + (" and %d more" % (len(result.unexpected) - 3) if len(result.unexpected) > 3 else ""))
                           or "no model variable at all"))
        plan = freezer.plan(self.variables, loaded)
        if not self.resume_from:
            freezer.reinitialize(plan, self.variables)
        self._freezer = freezer
        return plan

    def write_records(self):
        """Writes parameters.json and the task's records, each in one step (the chief only).

        Called once the run is accepted (restored, or started afresh), so a
        refused resume leaves the folder's records of its checkpoints as they were.
        """
        if not self.chief:
            return
        output_dir = self.options.output_dir
        self._freezer.record(output_dir, self.plan, self.variables)
        for name, text in self.task.records.items():
            outputs.write_text(os.path.join(output_dir, name), text)

    def _dataset(self):
        """The host's dataset: a plain tf.data pipeline, split across its replicas in the step.

        Unlike tf.distribute's iterators, its iterator can be checkpointed.
        --train_batch_size is the global batch: each of the workers (hosts)
        reads its share.
        """
        strategy, batch_size = self.strategy, self.options.train_batch_size
        replicas = strategy.num_replicas_in_sync
        if batch_size % replicas:
            raise ValueError("--train_batch_size=%d must be divisible by the %d replicas."
                             % (batch_size, replicas))
        host_id, num_hosts = self.worker
        return self.task.make_dataset(batch_size // num_hosts,
                                      tf.distribute.InputContext(num_hosts, host_id, replicas))

    @property
    def step(self):
        return int(self.optimizer.iterations.numpy())

    def restore(self):
        """Resumes from the newest checkpoint in output_dir, if any; returns the step.

        Raises:
          ValueError: when the workers of a cluster did not all find the same
            checkpoint (output_dir is not shared).
        """
        if self.resume_from:
            training_checkpoint.restore(self.resume_from, self.model, self.optimizer, self.state, self.trained,
                                        self.worker)
        distribution.check_same_step(self.strategy, self.step)
        return self.step

    def save(self):
        """Writes a training checkpoint of the current step; returns its prefix.

        Every worker of a cluster calls it at the same step: each writes its
        own training state, and once all have, the chief writes the checkpoint.
        """
        output_dir, step, state = self.options.output_dir, self.step, self.state
        if self.worker[1] > 1:
            training_checkpoint.write_state(output_dir, state, step, self.worker)
            # A worker lost before this point leaves the step unnamed by the index.
            distribution.barrier(self.strategy)
            if not self.chief:
                return training_checkpoint.checkpoint_prefix(output_dir, step)
            state = None  # written above
        return training_checkpoint.save(output_dir, self.model, self.optimizer, state,
                                        self.trained, self.frozen_manifest)

    def run_steps(self, num_steps):
        """Runs `num_steps` training steps in one compiled call; returns the mean losses (numpy)."""
        if self._loop is None:
            self._loop = self.make_loop()
        return self._loop(self.iterator, tf.constant(num_steps)).numpy()

    def make_loop(self):
        """The compiled loop: `loop(iterator, num_steps)` -> mean losses [len(loss_names)].

        With --jit_compile each step is one XLA program: with one replica the
        whole step (forward, backward, the optimizer's update), with several the
        forward and backward only, since the update's cross-replica sum cannot
        run inside a compiled function.

        Traced without AutoGraph, as every function that calls a model here: the
        loop is an explicit tf.while_loop and the layers branch on Python values
        only, so nothing needs converting, and converting the Keras and Model
        Garden code a model calls took several seconds of every process's first
        trace. (A layer that branches on a tensor fails to trace, naming it.)
        """
        model, optimizer, strategy, task = self.model, self.optimizer, self.strategy, self.task
        names, variables = list(task.loss_names), self.trained
        scaled = isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
        jit_compile = self.options.jit_compile
        whole_step = jit_compile and strategy.num_replicas_in_sync == 1

        def gradients_fn(batch):
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
            return tf.stack([losses[name] for name in names]), grads

        if jit_compile and not whole_step:
            gradients_fn = tf.function(gradients_fn, jit_compile=True, autograph=False)

        def step_fn(batch):
            losses, grads = gradients_fn(batch)
            # The step count waits for the batch: after a failed read (a damaged record)
            # optimizer.iterations is then the number of steps actually trained. A write
            # of 0 that needs the batch orders the count's later reads and its increment
            # (same variable) after it. Making all of apply_gradients wait for the loss
            # instead held ~240 MB more at the peak of BERT's pre-training step.
            with tf.control_dependencies(tf.nest.flatten(batch)):
                optimizer.iterations.assign_add(0)
            # Variables the task does not use (SQuAD's pooler) have no gradient.
            optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables) if g is not None])
            return losses

        if whole_step:
            step_fn = tf.function(step_fn, jit_compile=True, autograph=False)

        local_replicas = len(strategy.extended.worker_devices)

        def split_for_replica(batch):
            # The host batch holds every local replica's batch, in order.
            def value_fn(context):
                index = context.replica_id_in_sync_group % local_replicas
                return {k: tf.split(v, local_replicas)[index] for k, v in batch.items()}

            return strategy.experimental_distribute_values_from_function(value_fn)

        def loop(iterator, num_steps):
            def body(step, total):
                per_replica = strategy.run(step_fn, args=(split_for_replica(next(iterator)),))
                return step + 1, total + strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None)

            _, total = tf.while_loop(lambda step, _: step < num_steps, body,
                                     (tf.constant(0), tf.zeros([len(names)])))
            return total / tf.cast(num_steps, tf.float32)

        loop = tf.function(loop, autograph=False)

        return loop


class StopTraining(Exception):
    """Raised by a callback to end training before num_train_steps (early stopping).

    The step it is raised at is saved (if it was not) before `train` returns.
    """


def train(options, schedule, strategy, task, freezer, callbacks=()):
    """Trains to schedule.num_train_steps, resuming from output_dir when it can.

    Args:
      options, schedule, strategy, task, freezer: as `Trainer`.
      callbacks: functions of the global step (each may be called again for a
        step it has seen: on resume, for the checkpoint restored), called after each loop once its
        checkpoint (if any) is written; the resume tests crash the run here,
        early stopping raises StopTraining (in a cluster, on every worker at
        the same step: the save that follows needs them all).

    Returns:
      The Trainer, holding the trained model and optimizer.

    Raises:
      ValueError: a resume refused, or a damaged input record (named, after
        a checkpoint of the steps trained so far).
      FloatingPointError: the loss diverged.
      RuntimeError: another worker of the cluster was lost.
    """
    onednn.refuse_frozen_weights_in_training()
    trainer = Trainer(options, schedule, strategy, task, freezer)
    step, end = trainer.restore(), schedule.num_train_steps
    trainer.write_records()
    if trainer.resume_from and (step % options.save_checkpoints_steps == 0 or step == end):
        # A kill between a checkpoint and its step's callbacks (a dev evaluation) would lose them:
        # they run again for the restored step, and skip what they finished before.
        if _stopped_by(callbacks, step, end):
            return trainer
    if step >= end:
        logging.info("Already at step %d of %d: nothing to train.", step, end)
        return trainer
    log = TrainingLog(options.output_dir if trainer.chief else None, task.loss_names, options.train_batch_size,
                      end, task.tokens_name, strategy.num_replicas_in_sync)
    last_saved, saved_step = trainer.resume_from, step
    logging.info("Training from step %d to %d.", step, end)
    while step < end:
        target = next_boundary(step, end, options.save_checkpoints_steps, options.iterations_per_loop,
                               options.log_steps)
        start = time.time()
        try:
            losses = trainer.run_steps(target - step)
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
            described = record_files.describe_input_error(task.input_files, error)
            if described is None:
                raise
            raise ValueError("%s. %s." % (described, _keep_trained(trainer, saved_step, last_saved))) from None
        except tf.errors.UnavailableError as error:
            if trainer.worker[1] == 1:
                raise
            # A worker died (or its host): the others' collective ops fail.
            raise RuntimeError(
                "Lost a worker of the cluster between steps %d and %d (UnavailableError above). Restart every "
                "worker with the same command: the run resumes from %s." % (step, target, last_saved or "step 0")
            ) from error
        previous, step = step, trainer.step
        check_finite(losses, previous, step, last_saved)
        log.write(step, previous, losses, current_learning_rate(trainer.optimizer), time.time() - start)
        if step % options.save_checkpoints_steps == 0 or step == end:
            last_saved, saved_step = trainer.save(), step
        if _stopped_by(callbacks, step, end):
            if saved_step != step:
                trainer.save()
            break
    log.close()
    return trainer


def _stopped_by(callbacks, step, end):
    """Calls the callbacks at `step`; whether one stopped training (StopTraining, logged)."""
    try:
        for callback in callbacks:
            callback(step)
    except StopTraining as stop:
        logging.info("Training stops at step %d of %d: %s", step, end, stop)
        return True
    return False


def _keep_trained(trainer, saved_step, last_saved):
    """Saves the steps trained since the last checkpoint, if any; says where they are.

    Not in a cluster: a save needs every worker, and the others are not saving.
    """
    if trainer.step > saved_step and trainer.worker[1] == 1:
        return "The %d steps trained are saved in %s" % (trainer.step, trainer.save())
    if last_saved:
        return "The last checkpoint, of step %d, is %s" % (saved_step, last_saved)
    return "No checkpoint was written: a new run starts from step 0"
