"""The pre-training run behind run_pretraining.py: train, checkpoint, resume, evaluate.

`PretrainingOptions` mirrors the command line (the original flags, then ours);
`run(options)` does what the original's TPUEstimator did, in a custom loop:
`iterations_per_loop` steps run inside one tf.function call, checkpoints are
written every `save_checkpoints_steps` and at the end, and re-running the same
command continues from the newest checkpoint in output_dir.
"""

import dataclasses
import math
import os
import signal
import time
from typing import Optional

import tensorflow as tf
import tf_keras
from absl import logging

import modeling
from modeling import seeded_init, tf1_checkpoint
from training import distribution, freezing, precision, pretraining_input, training_checkpoint
from training.optimization import create_optimizer
from training.pretraining_losses import PretrainingMetrics, pretraining_losses

# Fault injection for the resume test: SIGKILL ourselves after this step.
KILL_AFTER_STEP_ENV = "BERT_TF2_TEST_KILL_AFTER_STEP"


@dataclasses.dataclass
class PretrainingOptions:
    """The run_pretraining.py flags; see the README for each."""

    bert_config_file: str
    input_file: str
    output_dir: str
    init_checkpoint: Optional[str] = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    do_train: bool = False
    do_eval: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    max_eval_steps: int = 100
    use_tpu: bool = False
    tpu_name: Optional[str] = None
    tpu_zone: Optional[str] = None
    gcp_project: Optional[str] = None
    master: Optional[str] = None
    num_tpu_cores: int = 8
    # New flags.
    head_size: Optional[int] = None
    random_seed: int = 12345
    dtype: str = "float32"
    distribution_strategy: str = "one_device"
    optimizer: str = "adamw"
    freeze: str = ""
    reinit: str = ""
    save_frozen: str = "values"

    def validate(self):
        if not self.do_train and not self.do_eval:
            raise ValueError("At least one of `--do_train` or `--do_eval` must be True.")
        for name in ("max_seq_length", "max_predictions_per_seq", "train_batch_size",
                     "eval_batch_size", "num_train_steps", "save_checkpoints_steps",
                     "iterations_per_loop", "max_eval_steps"):
            if getattr(self, name) <= 0:
                raise ValueError("--%s=%s must be positive." % (name, getattr(self, name)))
        if self.num_warmup_steps < 0:
            raise ValueError("--num_warmup_steps=%d must be >= 0." % self.num_warmup_steps)
        if self.save_frozen not in freezing.SAVE_FROZEN:
            raise ValueError(
                "--save_frozen=%s is not supported; expected one of %s."
                % (self.save_frozen, ", ".join(freezing.SAVE_FROZEN))
            )
        if self.max_predictions_per_seq > self.max_seq_length:
            raise ValueError(
                "--max_predictions_per_seq=%d cannot exceed --max_seq_length=%d."
                % (self.max_predictions_per_seq, self.max_seq_length)
            )


def effective_config(options):
    """The BERT config of the run: the file's, with --head_size applied."""
    config = modeling.BertConfig.from_json_file(options.bert_config_file)
    if options.head_size is not None:
        config = config.replace(head_size=options.head_size)
    if options.max_seq_length > config.max_position_embeddings:
        raise ValueError(
            "Cannot use sequence length %d because the BERT model was only trained up "
            "to sequence length %d (--max_seq_length vs max_position_embeddings)."
            % (options.max_seq_length, config.max_position_embeddings)
        )
    return config


def _model_inputs(batch):
    return dict(
        input_ids=batch["input_ids"],
        input_mask=batch["input_mask"],
        token_type_ids=batch["segment_ids"],
        masked_lm_positions=batch["masked_lm_positions"],
    )


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


class Trainer:
    """Holds the model, the optimizer and the compiled loop of one run."""

    def __init__(self, options, config, strategy):
        self.options = options
        self.strategy = strategy
        with strategy.scope():
            self.model = modeling.build_model(modeling.BertPretrainingModel(config))
        # Each variable a pure function of (seed, name, shape, initializer).
        seeded_init.initialize(self.model, options.random_seed)
        self.optimizer = None
        self.variables = None

    def prepare_training(self, plan):
        """Builds the optimizer on the variables that train (frozen ones excluded)."""
        options = self.options
        self.variables = freezing.trained_variables(self.model, plan)
        with self.strategy.scope():
            optimizer = create_optimizer(
                options.optimizer, options.learning_rate, options.num_train_steps,
                options.num_warmup_steps,
            )
            self.optimizer = precision.wrap_optimizer(optimizer, options.dtype)
            self.optimizer.build(self.variables)

    def make_loop(self):
        model, optimizer, strategy = self.model, self.optimizer, self.strategy
        variables = self.variables
        scaled = precision.uses_loss_scaling(optimizer)

        def step_fn(batch):
            with tf.GradientTape() as tape:
                outputs = model(_model_inputs(batch), training=True)
                losses = pretraining_losses(outputs, batch)
                # Gradients are summed over replicas: average them as the
                # original's CrossShardOptimizer does.
                loss = losses["loss"] / strategy.num_replicas_in_sync
                if scaled:
                    loss = optimizer.get_scaled_loss(loss)
            grads = tape.gradient(loss, variables)
            if scaled:
                grads = optimizer.get_unscaled_gradients(grads)
            optimizer.apply_gradients(zip(grads, variables))
            return tf.stack([losses["loss"], losses["masked_lm_loss"], losses["next_sentence_loss"]])

        local_replicas = len(strategy.extended.worker_devices)

        def split_for_replica(batch):
            # The host batch holds every local replica's batch, in order.
            def value_fn(context):
                index = context.replica_id_in_sync_group % local_replicas
                return {k: tf.split(v, local_replicas)[index] for k, v in batch.items()}

            return strategy.experimental_distribute_values_from_function(value_fn)

        @tf.function
        def loop(iterator, num_steps):
            total = tf.zeros([3])
            for _ in tf.range(num_steps):
                per_replica = strategy.run(step_fn, args=(split_for_replica(next(iterator)),))
                total += strategy.reduce(tf.distribute.ReduceOp.MEAN, per_replica, axis=None)
            return total / tf.cast(num_steps, tf.float32)

        return loop


def _next_boundary(step, options):
    """The step the next loop stops at: a log, checkpoint or final step."""
    stops = [
        options.num_train_steps,
        (step // options.save_checkpoints_steps + 1) * options.save_checkpoints_steps,
        (step // options.iterations_per_loop + 1) * options.iterations_per_loop,
    ]
    return min(stops)


def train(options, config, strategy, input_files):
    """Trains to num_train_steps, resuming from output_dir when it can.

    Returns:
      The Trainer, holding the trained model.
    """
    trainer = Trainer(options, config, strategy)
    model = trainer.model
    resume_from = training_checkpoint.latest(options.output_dir)
    from_checkpoint = ()
    if options.init_checkpoint:
        from_checkpoint = tf1_checkpoint.checkpoint_variable_names(options.init_checkpoint)
        if not resume_from:
            modeling.load_checkpoint(model, options.init_checkpoint)
    plan = freezing.make_plan(model, options.freeze, options.reinit, from_checkpoint)
    if not resume_from:
        freezing.reinitialize(model, plan, options.random_seed)
    freezing.record(options.output_dir, model, plan, dict(
        freeze=options.freeze, reinit=options.reinit, save_frozen=options.save_frozen,
        random_seed=options.random_seed,
    ))
    trainer.prepare_training(plan)
    optimizer = trainer.optimizer
    frozen_manifest = None
    if options.save_frozen == "seed" and plan.regenerable:
        frozen_manifest = seeded_init.manifest(model, plan.regenerable, options.random_seed)

    replicas = strategy.num_replicas_in_sync
    if options.train_batch_size % replicas:
        raise ValueError(
            "--train_batch_size=%d must be divisible by the %d replicas."
            % (options.train_batch_size, replicas)
        )
    # A plain tf.data iterator per host, split across its replicas inside the
    # step: unlike tf.distribute's iterators it can be checkpointed.
    local_replicas = len(strategy.extended.worker_devices)
    num_hosts = replicas // local_replicas
    host_id = getattr(getattr(strategy, "cluster_resolver", None), "task_id", 0) or 0
    dataset = pretraining_input.training_dataset(
        input_files, options.train_batch_size // num_hosts, options.max_seq_length,
        options.max_predictions_per_seq, options.random_seed,
        tf.distribute.InputContext(num_hosts, host_id, replicas),
    )
    iterator = iter(dataset)
    with strategy.scope():
        state = tf.train.Checkpoint(iterator=iterator, **dropout_generators(model))

    if resume_from:
        training_checkpoint.restore(resume_from, model, optimizer, state, trainer.variables)

    step = int(optimizer.iterations.numpy())
    if step >= options.num_train_steps:
        logging.info("Already at step %d of %d: nothing to train.", step, options.num_train_steps)
        return trainer
    loop = trainer.make_loop()
    writer = tf.summary.create_file_writer(options.output_dir)
    kill_after = int(os.environ.get(KILL_AFTER_STEP_ENV, "0"))
    last_saved = resume_from
    logging.info("Training from step %d to %d.", step, options.num_train_steps)
    while step < options.num_train_steps:
        target = _next_boundary(step, options)
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
        learning_rate = float(optimizer.learning_rate.numpy()) if hasattr(
            optimizer.learning_rate, "numpy") else float(optimizer.learning_rate)
        examples_per_second = (step - previous) * options.train_batch_size / max(elapsed, 1e-9)
        logging.info(
            "step %d/%d: loss = %.4f, masked_lm_loss = %.4f, next_sentence_loss = %.4f, "
            "learning_rate = %.3g, examples/s = %.1f",
            step, options.num_train_steps, losses[0], losses[1], losses[2], learning_rate,
            examples_per_second,
        )
        with writer.as_default(step=step):
            for name, value in zip(("loss", "masked_lm_loss", "next_sentence_loss"), losses):
                tf.summary.scalar(name, value)
            tf.summary.scalar("learning_rate", learning_rate)
            tf.summary.scalar("examples_per_second", examples_per_second)
        if step % options.save_checkpoints_steps == 0 or step == options.num_train_steps:
            last_saved = training_checkpoint.save(
                options.output_dir, model, optimizer, state, trainer.variables, frozen_manifest
            )
        if kill_after and step == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    writer.flush()
    return trainer


def evaluate(options, config, strategy, input_files, trainer=None):
    """Runs max_eval_steps eval batches and writes eval_results.txt.

    Evaluates the trained model when given, else the newest checkpoint in
    output_dir, else --init_checkpoint.

    Returns:
      dict of the eval_results.txt values.
    """
    if trainer is None:
        trainer = Trainer(options, config, strategy)
        source = training_checkpoint.latest(options.output_dir) or options.init_checkpoint
        if not source:
            raise ValueError(
                "--do_eval without --do_train needs a checkpoint in --output_dir or "
                "--init_checkpoint."
            )
        result = modeling.load_checkpoint(trainer.model, source)
        if result.missing:
            raise ValueError("Checkpoint %s lacks %s; cannot evaluate." % (source, result.missing))
        reader = tf.train.load_checkpoint(tf1_checkpoint.resolve_checkpoint(source))
        step = int(reader.get_tensor("global_step")) if reader.has_tensor("global_step") else 0
    else:
        step = int(trainer.optimizer.iterations.numpy())
    model = trainer.model
    dataset = pretraining_input.evaluation_dataset(
        input_files, options.eval_batch_size, options.max_seq_length,
        options.max_predictions_per_seq,
    ).take(options.max_eval_steps)

    @tf.function
    def eval_step(batch):
        outputs = model(_model_inputs(batch), training=False)
        return outputs, pretraining_losses(outputs, batch)

    metrics = PretrainingMetrics()
    batches = 0
    for batch in dataset:
        outputs, losses = eval_step(batch)
        metrics.update(outputs, batch, losses)
        batches += 1
    if batches == 0:
        raise ValueError(
            "No full eval batch of --eval_batch_size=%d in %s." % (options.eval_batch_size, input_files)
        )
    results = dict(metrics.result(), global_step=step)
    path = os.path.join(options.output_dir, "eval_results.txt")
    with tf.io.gfile.GFile(path, "w") as writer:
        logging.info("***** Eval results (%d batches) *****", batches)
        for key in sorted(results):
            logging.info("  %s = %s", key, results[key])
            writer.write("%s = %s\n" % (key, results[key]))
    eval_writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "eval"))
    with eval_writer.as_default(step=step):
        for key, value in results.items():
            if key != "global_step":
                tf.summary.scalar(key, value)
    eval_writer.flush()
    return results


def run(options):
    """The whole run: validate, set up, train and/or evaluate.

    Returns:
      The eval results dict when --do_eval, else None.
    """
    options.validate()
    config = effective_config(options)
    input_files = pretraining_input.expand_input_files(options.input_file)
    pretraining_input.check_record_lengths(
        input_files, options.max_seq_length, options.max_predictions_per_seq
    )
    logging.info("*** Input files: %d ***\n  %s", len(input_files), "\n  ".join(input_files))
    tf.io.gfile.makedirs(options.output_dir)
    config.to_json_file(os.path.join(options.output_dir, "bert_config.json"))

    tf_keras.utils.set_random_seed(options.random_seed)
    # Dropout draws from tf.random.Generator objects whose state is checkpointed.
    tf_keras.backend.experimental.enable_tf_random_generator()
    precision.set_dtype(options.dtype)
    strategy = distribution.get_strategy(
        options.distribution_strategy, options.use_tpu, options.tpu_name, options.tpu_zone,
        options.gcp_project, options.master,
    )
    trainer = None
    if options.do_train:
        trainer = train(options, config, strategy, input_files)
    if options.do_eval:
        return evaluate(options, config, strategy, input_files, trainer)
    return None
