"""The pre-training run behind run_pretraining.py: train, resume, evaluate.

`PretrainingOptions` declares the command line (the original flags, then ours);
`run(options)` validates them, trains the masked-LM + next-sentence task with
the shared loop (training/trainer.py: checkpoints, exact resume, freezing) and
writes eval_results.txt.
"""

import dataclasses

import tensorflow as tf
from absl import logging

import modeling
from options import option
from training import distribution, pretraining_input, record_files, run_record, run_setup
from training import trainer as trainer_lib
from training.pretraining_losses import PretrainingMetrics, pretraining_losses
from training.training_options import EvaluationOptions, Schedule, TrainingOptions


@dataclasses.dataclass(kw_only=True)
class PretrainingOptions(run_setup.BertConfigOptions, TrainingOptions, EvaluationOptions):
    """The run_pretraining.py flags: these, and the shared ones of the base classes."""

    input_file: str = option(help="Input TF example files (can be a glob or comma separated).")
    max_seq_length: int = option(
        128, "The maximum total input sequence length after WordPiece tokenization; must "
        "match the data.", minimum=1)
    max_predictions_per_seq: int = option(
        20, "Maximum number of masked LM predictions per sequence; must match the data.", minimum=1)
    num_train_steps: int = option(100000, "Number of training steps.", minimum=1)
    num_warmup_steps: int = option(10000, "Number of warmup steps.", minimum=0)
    max_eval_steps: int = option(100, "Maximum number of eval steps.", minimum=1)

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


def pretraining_task(options, config, input_files, record=None):
    """The masked-LM + next-sentence task over pre-training records; `record` is the run's (run_record)."""
    return trainer_lib.Task(
        build_model=lambda: modeling.build_model(modeling.BertPretrainingModel(config)),
        make_dataset=lambda batch_size, context: pretraining_input.training_dataset(
            input_files, batch_size, options.max_seq_length, options.max_predictions_per_seq,
            options.random_seed, context,
        ),
        model_inputs=_model_inputs,
        compute_losses=pretraining_losses,
        loss_names=("loss", "masked_lm_loss", "next_sentence_loss"),
        records=dict(run_setup.config_records(config), **run_record.records(record)),
        input_files=input_files,
    )


def evaluate(options, config, strategy, input_files, trainer=None):
    """Runs max_eval_steps eval batches and writes eval_results.txt.

    Evaluates the trained model when given, else the newest checkpoint in
    output_dir, else --init_checkpoint. In a cluster every worker evaluates
    alike, and the chief writes the results.

    Returns:
      dict of the eval_results.txt values.
    """
    model, step = run_setup.model_to_evaluate(
        options, strategy, pretraining_task(options, config, input_files).build_model, trainer
    )
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
    try:
        for batch in dataset:
            outputs, losses = eval_step(batch)
            metrics.update(outputs, batch, losses)
            batches += 1
    except tf.errors.DataLossError as error:
        raise ValueError(record_files.describe_damage(input_files, error) + ".") from None
    if batches == 0:
        raise ValueError(
            "No full eval batch of --eval_batch_size=%d in %s." % (options.eval_batch_size, input_files)
        )
    results = dict(metrics.result(), global_step=step)
    logging.info("Evaluated %d batches.", batches)
    if distribution.is_chief(strategy):
        run_setup.write_eval_results(options.output_dir, results)
        run_setup.write_eval_summaries(options.output_dir, results, step)
    return results


def run(options, callbacks=()):
    """The whole run: validate, set up, train and/or evaluate.

    Args:
      options: PretrainingOptions.
      callbacks: passed to the training loop (trainer.train).

    Returns:
      The eval results dict when --do_eval, else None.
    """
    options.validate()
    config = run_setup.effective_config(options)
    freezer = run_setup.bert_freezer(options, config)
    input_files = pretraining_input.expand_input_files(options.input_file)
    record = run_record.check_training_run(options, ("max_predictions_per_seq",),
                                           input_file=run_record.files_summary(input_files))
    # Before the records are read: multi_worker_mirrored must be set up
    # before TensorFlow runs its first op.
    strategy = run_setup.prepare(options)
    pretraining_input.check_record_lengths(
        input_files, options.max_seq_length, options.max_predictions_per_seq
    )
    logging.info("*** Input files: %d ***\n  %s", len(input_files), "\n  ".join(input_files))
    trainer = None
    if options.do_train:
        trainer = trainer_lib.train(
            options, Schedule(options.num_train_steps, options.num_warmup_steps), strategy,
            pretraining_task(options, config, input_files, record), freezer, callbacks,
        )
    if options.do_eval:
        return evaluate(options, config, strategy, input_files, trainer)
    return None
