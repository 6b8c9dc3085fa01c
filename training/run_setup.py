"""Set-up shared by the entry points: the effective config, the process, the model to evaluate."""

import os

import tensorflow as tf
import tf_keras
from absl import logging

import modeling
from modeling import tf1_checkpoint
from training import distribution, precision, training_checkpoint
from training import trainer as trainer_lib


def effective_config(bert_config_file, head_size, max_seq_length):
    """The BERT config of the run: the file's, with --head_size applied.

    Raises:
      ValueError: when max_seq_length exceeds max_position_embeddings (the
        original's check and message).
    """
    config = modeling.BertConfig.from_json_file(bert_config_file)
    if head_size is not None:
        config = config.replace(head_size=head_size)
    if max_seq_length > config.max_position_embeddings:
        raise ValueError(
            "Cannot use sequence length %d because the BERT model was only trained up "
            "to sequence length %d (--max_seq_length vs max_position_embeddings)."
            % (max_seq_length, config.max_position_embeddings)
        )
    return config


def prepare(options, config):
    """Creates output_dir with the effective config; seeds; dtype; the strategy.

    Returns:
      The tf.distribute.Strategy.
    """
    tf.io.gfile.makedirs(options.output_dir)
    config.to_json_file(os.path.join(options.output_dir, "bert_config.json"))
    tf_keras.utils.set_random_seed(options.random_seed)
    # Dropout draws from tf.random.Generator objects, whose state is checkpointed.
    tf_keras.backend.experimental.enable_tf_random_generator()
    precision.set_dtype(options.dtype)
    return distribution.get_strategy(
        options.distribution_strategy, options.use_tpu, options.tpu_name, options.tpu_zone,
        options.gcp_project, options.master,
    )


def model_to_evaluate(options, strategy, build_model, trainer=None):
    """The trained model, else the newest checkpoint in output_dir, else --init_checkpoint.

    Returns:
      (model, global_step).

    Raises:
      ValueError: when there is nothing to evaluate, or the checkpoint lacks
        some of the model's variables.
    """
    if trainer is not None:
        return trainer.model, int(trainer.optimizer.iterations.numpy())
    model = trainer_lib.build_seeded_model(strategy, build_model, options.random_seed)
    source = training_checkpoint.latest(options.output_dir) or options.init_checkpoint
    if not source:
        raise ValueError(
            "Evaluating or predicting without --do_train needs a checkpoint in --output_dir "
            "or --init_checkpoint."
        )
    result = modeling.load_checkpoint(model, source)
    if result.missing:
        raise ValueError(
            "Checkpoint %s lacks %d variables of the model (%s); train it first (--do_train)."
            % (source, len(result.missing), ", ".join(result.missing[:3]))
        )
    reader = tf.train.load_checkpoint(tf1_checkpoint.resolve_checkpoint(source))
    step = int(reader.get_tensor("global_step")) if reader.has_tensor("global_step") else 0
    logging.info("Evaluating %s (global step %d).", source, step)
    return model, step


def write_eval_results(output_dir, results, file_name="eval_results.txt"):
    """`key = value` lines, keys sorted, as the original; also to the log."""
    path = os.path.join(output_dir, file_name)
    with tf.io.gfile.GFile(path, "w") as writer:
        logging.info("***** Eval results (%s) *****", path)
        for key in sorted(results):
            logging.info("  %s = %s", key, results[key])
            writer.write("%s = %s\n" % (key, results[key]))
    return path
