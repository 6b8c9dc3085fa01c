"""Set-up shared by the BERT entry points: the effective config, freezing, the process, the model to evaluate."""

import dataclasses
import numbers
import os
import socket
from typing import Optional

import tensorflow as tf
import tf_keras
from absl import logging
from official.modeling import performance

import modeling
import outputs
from freezing import Freezer
from modeling import seeded_init, tf1_checkpoint
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from options import Options, option
from training import distribution, init_checkpoint, training_checkpoint
from training import trainer as trainer_lib

CONFIG_FILE = "bert_config.json"

@dataclasses.dataclass(kw_only=True)
class BertConfigOptions(Options):
    """The model of a BERT entry point: the original's config file, and our head size."""

    bert_config_file: str = option(
        help="The config json file corresponding to the pre-trained BERT model (the "
        "architecture; its head_size key is honoured).", path="file")
    head_size: Optional[int] = option(
        None, "Attention head size; overrides the config's head_size.", minimum=1, new=True)


def with_head_size(config, options, too_long=None):
    """Any family's model config of the run: `config` with --head_size applied and, when the family has
    learned positions (`too_long` given), --max_seq_length checked against max_position_embeddings.

    Args:
      options: with head_size and max_seq_length.
      too_long: the message, formatted with (max_seq_length, max_position_embeddings).
    """
    if options.head_size is not None:
        config = config.replace(head_size=options.head_size)
    if too_long and options.max_seq_length > config.max_position_embeddings:
        raise ValueError(too_long % (options.max_seq_length, config.max_position_embeddings))
    return config


def effective_config(options):
    """The BERT config of the run: --bert_config_file, with --head_size applied.

    Args:
      options: BertConfigOptions with a max_seq_length.

    Raises:
      ValueError: when max_seq_length exceeds max_position_embeddings (the
        original's check and message).
    """
    return with_head_size(modeling.BertConfig.from_json_file(options.bert_config_file), options,
                          "Cannot use sequence length %d because the BERT model was only trained up "
                          "to sequence length %d (--max_seq_length vs max_position_embeddings).")


def make_freezer(options, groups, num_layers, initializer_of):
    """The run's Freezer over a model family's groups; bad selectors fail here, before any model.

    --init_checkpoint, which --freeze and --reinit act on, is checked here too.
    """
    if options.init_checkpoint:
        init_checkpoint.check(options.init_checkpoint)
    return Freezer(options, groups, num_layers, initializer_of)


def bert_freezer(options, config):
    """make_freezer over BERT's parameter groups."""
    return make_freezer(options, BERT_PARAMETER_GROUPS, config.num_hidden_layers, seeded_init.initializers(config))


def config_records(config):
    """What a training run records beside its checkpoints: the effective config."""
    return {CONFIG_FILE: config.to_json_string()}


def make_output_dir(output_dir):
    """Creates --output_dir and checks that files can be written there.

    Raises:
      ValueError: naming the flag, the path and the reason.
    """
    if tf.io.gfile.exists(output_dir) and not tf.io.gfile.isdir(output_dir):
        raise ValueError("--output_dir=%s is a file, not a directory." % output_dir)
    try:
        tf.io.gfile.makedirs(output_dir)
        # Named after this process: the workers of a cluster probe the same directory at once.
        probe = os.path.join(output_dir, ".write_test-%s-%d" % (socket.gethostname(), os.getpid()))
        outputs.write_text(probe, "")
        tf.io.gfile.remove(probe)
    except (tf.errors.OpError, OSError) as error:
        raise ValueError("--output_dir=%s is not a writable directory (%s)."
                         % (output_dir, getattr(error, "message", None) or error)) from None


def prepare(options):
    """Creates output_dir; seeds; dtype; the strategy.

    The effective config is written later, once training is accepted
    (`config_records`, written by the trainer).

    Returns:
      The tf.distribute.Strategy.
    """
    make_output_dir(options.output_dir)
    tf_keras.utils.set_random_seed(options.random_seed)
    # Dropout draws from tf.random.Generator objects, whose state is checkpointed.
    tf_keras.backend.experimental.enable_tf_random_generator()
    performance.set_mixed_precision_policy(tf.as_dtype(options.dtype))
    return distribution.get_strategy(options)


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
