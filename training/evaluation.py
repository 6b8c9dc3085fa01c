"""Evaluation of a training entry point: the model to evaluate, and its results as files and scalars."""

import numbers
import os

import tensorflow as tf
from absl import logging

import outputs
from checkpoints import init_checkpoint, tf1_checkpoint, training_checkpoint
from training import trainer as trainer_lib


def model_to_evaluate(options, strategy, build_model, trainer=None):
    """The trained model, else the newest checkpoint in output_dir, else --init_checkpoint.

    Returns:
      (model, global_step).

    Raises:
      ValueError: when there is nothing to evaluate, or the checkpoint lacks
        some of the model's variables.
    """
    if trainer is not None:
        return trainer.model, trainer.step
    model = trainer_lib.build_seeded_model(strategy, build_model, options.random_seed)
    source = training_checkpoint.latest(options.output_dir) or options.init_checkpoint
    if not source:
        raise ValueError(
            "Evaluating or predicting without --do_train needs a checkpoint in --output_dir "
            "or --init_checkpoint."
        )
    if source == options.init_checkpoint:
        result = init_checkpoint.load(model, source)
    else:
        result = tf1_checkpoint.load_checkpoint(model, source)
    if result.missing:
        raise ValueError(
            "Checkpoint %s lacks %d variables of the model (%s); train it first (--do_train)."
            % (source, len(result.missing), ", ".join(result.missing[:3]))
        )
    reader = tf.train.load_checkpoint(tf1_checkpoint.resolve_checkpoint(source))
    step = int(reader.get_tensor("global_step")) if reader.has_tensor("global_step") else 0
    logging.info("Evaluating %s (global step %d).", source, step)
    return model, step


def write_eval_summaries(output_dir, results, step, name="eval"):
    """The numeric eval results as TensorBoard scalars in output_dir/<name>, at `step`."""
    writer = tf.summary.create_file_writer(os.path.join(output_dir, name))
    with writer.as_default(step=step):
        for key, value in sorted(results.items()):
            if key != "global_step" and isinstance(value, numbers.Real) and not isinstance(value, bool):
                tf.summary.scalar(key, value)
    writer.flush()


def write_eval_results(output_dir, results, file_name="eval_results.txt"):
    """`key = value` lines, keys sorted, as the original; also to the log."""
    path = os.path.join(output_dir, file_name)
    logging.info("***** Eval results (%s) *****", path)
    for key in sorted(results):
        logging.info("  %s = %s", key, results[key])
    outputs.write_text(path, "".join("%s = %s\n" % (key, results[key]) for key in sorted(results)))
    return path
