"""The pre-training run behind run_pretraining.py: train, resume, evaluate.

`PretrainingOptions` declares the command line (the original flags, then ours);
`run(options)` validates them, trains the masked-LM + next-sentence task with
the shared loop (training/trainer.py: checkpoints, exact resume, freezing) and
writes eval_results.txt.

The original evaluates --input_file, the training records. --eval_input_file
names held-out records instead: the final evaluation reads them, and during
training the model is evaluated on them at every saved checkpoint, each
evaluation appended to output_dir/eval_history.json (`HeldOutCurve`): the run's
learning curve, kept across a resume.
"""

import dataclasses
import json
import os
from typing import Optional

import tensorflow as tf
from absl import logging

import modeling
from modeling.family import FAMILY
import outputs
from modeling import bert_setup, pretraining_input
from modeling.pretraining_losses import PretrainingMetrics, pretraining_losses
from options import option
from training import distribution, evaluation, process, record_files, run_record
from training import trainer as trainer_lib
from training.training_options import EvaluationOptions, Schedule, StepsOptions, TrainingOptions


@dataclasses.dataclass(kw_only=True)
class PretrainingOptions(bert_setup.BertConfigOptions, TrainingOptions, EvaluationOptions, StepsOptions):
    """The run_pretraining.py flags: these, and the shared ones of the base classes."""

    input_file: str = option(help="Input TF example files (can be a glob or comma separated).")
    max_seq_length: int = option(
        128, "The maximum total input sequence length after WordPiece tokenization; must "
        "match the data.", minimum=1)
    max_predictions_per_seq: int = option(
        20, "Maximum number of masked LM predictions per sequence; must match the data.", minimum=1)
    max_eval_steps: int = option(100, "Maximum number of eval steps.", minimum=1)
    eval_input_file: Optional[str] = option(
        None, "Held-out TF example files (a glob or comma separated) to evaluate instead of --input_file: "
        "with --do_train at every saved checkpoint (--max_eval_steps batches of --eval_batch_size, each "
        "evaluation appended to output_dir/eval_history.json, the learning curve), and with --do_eval at the "
        "end. Default: --input_file, and no evaluation during training.", new=True)

    def validate(self):
        if not self.do_train and not self.do_eval:
            raise ValueError("At least one of `--do_train` or `--do_eval` must be True.")
        super().validate()
        if self.max_predictions_per_seq > self.max_seq_length:
            raise ValueError(
                "--max_predictions_per_seq=%d cannot exceed --max_seq_length=%d."
                % (self.max_predictions_per_seq, self.max_seq_length)
            )


def _model_inputs(batch):
    return dict(
        input_ids=batch["input_ids"],
        input_mask=batch["input_mask"],
        token_type_ids=batch["segment_ids"],
        masked_lm_positions=batch["masked_lm_positions"],
    )


EVAL_HISTORY_FILE = "eval_history.json"


def pretraining_task(options, config, input_files, record=None, built=None):
    """The masked-LM + next-sentence task over pre-training records.

    Args:
      record: the run's (run_record).
      built: a dict that receives the model as "model" (the held-out curve evaluates it), or None.
    """
    built = {} if built is None else built

    def build_model():
        built["model"] = modeling.build_model(modeling.BertPretrainingModel(config))
        return built["model"]

    return trainer_lib.Task(
        build_model=build_model,
        make_dataset=lambda batch_size, context: pretraining_input.training_dataset(
            input_files, batch_size, options.max_seq_length, options.max_predictions_per_seq,
            options.random_seed, context,
        ),
        model_inputs=_model_inputs,
        compute_losses=pretraining_losses,
        loss_names=("loss", "masked_lm_loss", "next_sentence_loss"),
        records=dict(FAMILY.config_records(config), **run_record.records(record)),
        input_files=input_files,
    )


def _evaluated(model, options, input_files, eval_step=None):
    """(the eval_results.txt figures of --max_eval_steps batches of input_files, the eval step function)."""
    dataset = pretraining_input.evaluation_dataset(
        input_files, options.eval_batch_size, options.max_seq_length,
        options.max_predictions_per_seq,
    ).take(options.max_eval_steps)
    if eval_step is None:
        @tf.function(autograph=False)
        def eval_step(batch):
            outputs = model(_model_inputs(batch), training=False)
            return outputs, pretraining_losses(outputs, batch)

    metrics = PretrainingMetrics()
    batches = 0
    try:
        for batch in dataset:
            outputs, losses = eval_step(batch)
            metrics.update(outputs, batch, losses)
            batches += 1
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
        described = record_files.describe_input_error(input_files, error)
        if described is None:
            raise
        raise ValueError(described + ".") from None
    if batches == 0:
        raise ValueError(
            "No full eval batch of --eval_batch_size=%d in %s." % (options.eval_batch_size, input_files)
        )
    logging.info("Evaluated %d batches.", batches)
    return metrics.result(), eval_step


def evaluate(options, config, strategy, input_files, trainer=None):
    """Runs max_eval_steps eval batches and writes eval_results.txt.

    Evaluates the trained model when given, else the newest checkpoint in
    output_dir, else --init_checkpoint. In a cluster every worker evaluates
    alike, and the chief writes the results.

    Returns:
      dict of the eval_results.txt values.
    """
    model, step = evaluation.model_to_evaluate(
        options, strategy, pretraining_task(options, config, input_files).build_model, trainer
    )
    figures, _ = _evaluated(model, options, input_files)
    results = dict(figures, global_step=step)
    if distribution.is_chief(strategy):
        evaluation.write_eval_results(options.output_dir, results)
        evaluation.write_eval_summaries(options.output_dir, results, step)
    return results


def read_eval_history(output_dir):
    """The held-out evaluations made during training (eval_history.json), oldest first; [] before the first."""
    path = os.path.join(output_dir, EVAL_HISTORY_FILE)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


class HeldOutCurve:
    """A training callback: the model being trained evaluated on held-out records at every checkpoint.

    Each evaluation (the eval_results.txt figures and global_step) is appended
    to output_dir/eval_history.json, rewritten whole (by the chief), so a
    resumed run keeps the curve and skips the steps it evaluated before.
    """

    def __init__(self, options, strategy, built, input_files):
        self.options, self.strategy, self.built, self.input_files = options, strategy, built, input_files
        self._eval_step = None

    def __call__(self, step):
        if step % self.options.save_checkpoints_steps and step != self.options.num_train_steps:
            return
        history = read_eval_history(self.options.output_dir)
        if history and step <= history[-1]["global_step"]:
            return  # Evaluated before a kill: the trainer calls again for the checkpoint it resumes from.
        figures, self._eval_step = _evaluated(self.built["model"], self.options, self.input_files, self._eval_step)
        history.append(dict(figures, global_step=step))
        logging.info("Held-out masked-LM loss %.4f, accuracy %.4f at step %d.", figures["masked_lm_loss"],
                     figures["masked_lm_accuracy"], step)
        if distribution.is_chief(self.strategy):
            outputs.write_text(os.path.join(self.options.output_dir, EVAL_HISTORY_FILE),
                               json.dumps(history, indent=1, sort_keys=True) + "\n")


def run(options, callbacks=()):
    """The whole run: validate, set up, train and/or evaluate.

    Args:
      options: PretrainingOptions.
      callbacks: passed to the training loop (trainer.train).

    Returns:
      The eval results dict when --do_eval, else None.
    """
    options.validate()
    config = bert_setup.effective_config(options)
    freezer = FAMILY.freezer(options, config)
    input_files = pretraining_input.expand_input_files(options.input_file)
    eval_files = (pretraining_input.expand_input_files(options.eval_input_file, "--eval_input_file")
                  if options.eval_input_file else input_files)
    record = run_record.check_training_run(options, ("max_predictions_per_seq",),
                                           input_file=run_record.files_summary(input_files))
    # Before the records are read: multi_worker_mirrored must be set up
    # before TensorFlow runs its first op.
    strategy = process.prepare(options)
    for files in dict.fromkeys((tuple(input_files), tuple(eval_files))):
        pretraining_input.check_record_lengths(
            list(files), options.max_seq_length, options.max_predictions_per_seq, config.vocab_size
        )
    logging.info("*** Input files: %d ***\n  %s", len(input_files), "\n  ".join(input_files))
    trainer = None
    if options.do_train:
        built = {}
        curve = [HeldOutCurve(options, strategy, built, eval_files)] if options.eval_input_file else []
        trainer = trainer_lib.train(
            options, Schedule(options.num_train_steps, options.num_warmup_steps), strategy,
            pretraining_task(options, config, input_files, record, built), freezer, curve + list(callbacks),
        )
    if options.do_eval:
        return evaluate(options, config, strategy, eval_files, trainer)
    return None
