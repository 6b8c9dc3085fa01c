"""The fine-tuning run behind run_squad.py: SQuAD v1.1 and v2.0.

As the original: training examples shuffled with random.Random(12345),
windowed features written to `train.tf_record`, num_train_steps =
int(examples / batch * epochs), the loss the mean of the start and end
cross entropies. Prediction writes predictions.json, nbest_predictions.json
and (v2) null_odds.json, and eval_results.json with the official metrics
when the predict file carries answers. Data handling is squad_data (Model
Garden's squad_lib underneath); training is the shared loop.
"""

import dataclasses
import os
import random
from typing import Optional

import tensorflow as tf
from absl import logging

import file_system
import modeling
from modeling.family import FAMILY
import squad_data
import tokenization
from classifier_data.features import check_vocab_fits_config
from modeling import bert_setup, frozen_export
from options import Options, option
from serving.export import ExportOptions, export_squad
from training import evaluation, inference, input_checks, process, run_record
from training import trainer as trainer_lib
from training.training_options import FineTuningOptions

# The original shuffles the training examples with this fixed seed.
EXAMPLE_SHUFFLE_SEED = 12345


@dataclasses.dataclass(kw_only=True)
class SquadAnswerOptions(Options):
    """How answers are chosen: run_squad.py's flags, which an exported SQuAD model keeps."""

    doc_stride: int = option(
        128, "When splitting up a long document into chunks, how much stride to take between chunks.")
    max_query_length: int = option(
        64, "The maximum number of tokens for the question; longer questions are truncated.")
    n_best_size: int = option(
        20, "The total number of n-best predictions to generate in nbest_predictions.json.", minimum=1)
    max_answer_length: int = option(
        30, "The maximum length of an answer that can be generated.", minimum=1)
    version_2_with_negative: bool = option(
        False, "If true, the SQuAD examples contain some that do not have an answer.")
    null_score_diff_threshold: float = option(
        0.0, "If null_score - best_non_null is greater than the threshold predict null.")


@dataclasses.dataclass(kw_only=True)
class SquadOptions(bert_setup.BertConfigOptions, FineTuningOptions, SquadAnswerOptions, ExportOptions):
    """The run_squad.py flags: these, and the shared ones of the base classes."""

    train_file: Optional[str] = option(None, "SQuAD json for training. E.g., train-v1.1.json")
    predict_file: Optional[str] = option(
        None, "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
    max_seq_length: int = option(
        384, "The maximum total input sequence length after WordPiece tokenization; longer "
        "documents are split into windows.")
    verbose_logging: bool = option(
        False, "If true, all of the warnings related to data processing will be printed.")

    def validate(self):
        """The original's validate_flags_or_throw, plus our flags."""
        if not self.do_train and not self.do_predict and not self.export_dir:
            raise ValueError("At least one of `do_train` or `do_predict` must be True.")
        if self.do_train and not self.train_file:
            raise ValueError("If `do_train` is True, then `train_file` must be specified.")
        if self.do_predict and not self.predict_file:
            raise ValueError("If `do_predict` is True, then `predict_file` must be specified.")
        squad_data.check_lengths(self.max_seq_length, self.doc_stride, self.max_query_length)
        super().validate()


def _read_examples(options, flag, is_training):
    """(the "data" list, `SquadReadResult`) of --train_file or --predict_file.

    Raises:
      FileNotFoundError, ValueError: the file is missing, malformed or has no questions (that training
        can use); the message names the flag.
    """
    path = getattr(options, flag)
    try:
        dataset = squad_data.load_squad_data(path)
        read = squad_data.examples_from_data(dataset, path, is_training, options.version_2_with_negative)
    except FileNotFoundError as error:
        raise FileNotFoundError("--%s: %s" % (flag, error)) from None
    except ValueError as error:
        raise ValueError("--%s: %s" % (flag, error)) from None
    if not read.examples:
        raise ValueError("--%s: SQuAD file %s has no questions%s." % (
            flag, path, " whose answer is found in its context" if read.skipped_ids else ""))
    return dataset, read


def _model_inputs(batch):
    return dict(input_ids=batch["input_ids"], input_mask=batch["input_mask"],
                token_type_ids=batch["segment_ids"])


def span_losses(outputs, batch):
    """The original: mean of the start and end position cross entropies."""
    start = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["start_positions"], logits=tf.cast(outputs["start_logits"], tf.float32))
    end = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=batch["end_positions"], logits=tf.cast(outputs["end_logits"], tf.float32))
    return {"loss": (tf.reduce_mean(start) + tf.reduce_mean(end)) / 2.0}


class SquadRun:
    """One run_squad.py invocation."""

    def __init__(self, options):
        options.validate()
        self.options = options
        # Before training: a missing --predict_file would otherwise be found after it.
        for mode, flag in (("train", "train_file"), ("predict", "predict_file")):
            if getattr(options, "do_" + mode):
                input_checks.check_readable(getattr(options, flag), "--do_%s reads it" % mode, flag)
        self.record = run_record.check_training_run(
            options, ("doc_stride", "max_query_length"), vocab_file=file_system.content_hash(options.vocab_file),
            train_file=run_record.files_summary([options.train_file]) if options.do_train else None)
        tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
        self.config = bert_setup.effective_config(options)
        self.freezer = FAMILY.freezer(options, self.config)
        # FullTokenizer's tokens; SQuAD's conversion tokenizes word by word, which the cache makes cheap.
        self.tokenizer = tokenization.CachedFullTokenizer.from_vocab_file(
            options.vocab_file, options.do_lower_case)
        check_vocab_fits_config(self.tokenizer.vocab, self.config.vocab_size, options.vocab_file)
        # Read now, not after training: a malformed or empty file stops the run before it. The predict file
        # first (the smaller); both are kept, so read once.
        self.predict_data, self.predict_read = (
            _read_examples(options, "predict_file", is_training=False) if options.do_predict else (None, None))
        self.train_read = _read_examples(options, "train_file", is_training=True)[1] if options.do_train else None

    def build_model(self):
        return modeling.build_model(modeling.BertSquadModel(self.config))

    def train(self, strategy, callbacks=()):
        options = self.options
        read, self.train_read = self.train_read, None  # Not kept through prediction.
        examples = list(read.examples)
        random.Random(EXAMPLE_SHUFFLE_SEED).shuffle(examples)
        schedule = options.schedule(len(examples))
        records = os.path.join(options.output_dir, "train.tf_record")
        num_features = squad_data.write_features(
            examples, self.tokenizer, records, options.max_seq_length, options.doc_stride,
            options.max_query_length, is_training=True)
        logging.info(
            "***** Running training: %d examples (%d skipped), %d features, batch size %d, "
            "%d steps *****", len(examples), read.num_skipped, num_features,
            options.train_batch_size, schedule.num_train_steps)
        task = trainer_lib.Task(
            build_model=self.build_model,
            make_dataset=lambda batch_size, _: squad_data.make_dataset(
                records, options.max_seq_length, is_training=True, batch_size=batch_size,
                drop_remainder=True, seed=options.random_seed),
            model_inputs=_model_inputs,
            compute_losses=span_losses,
            records=dict(FAMILY.config_records(self.config), **run_record.records(self.record)),
            input_files=[records],
        )
        return trainer_lib.train(options, schedule, strategy, task, self.freezer, callbacks)

    def predict(self, model, step=0):
        """Writes the prediction files, and eval_results.json (and TensorBoard scalars at
        `step`) when answers are known."""
        options, read = self.options, self.predict_read
        features = squad_data.convert_examples_to_features(
            read.examples, self.tokenizer, options.max_seq_length, options.doc_stride,
            options.max_query_length, is_training=False)
        logging.info("***** Running predictions: %d examples, %d features *****",
                     len(read.examples), len(features))

        def logits(input_ids, input_mask, segment_ids):
            outputs = model(dict(input_ids=input_ids, input_mask=input_mask,
                                 token_type_ids=segment_ids), training=False)
            return (tf.cast(outputs["start_logits"], tf.float32),
                    tf.cast(outputs["end_logits"], tf.float32))

        logits = inference.BatchForward(logits, options.predict_batch_size, options.max_seq_length,
                                        options.compiles_forward(options.dtype))
        results = []
        for batch in squad_data.features_to_dataset(features, options.predict_batch_size):
            start, end = logits(batch["input_ids"], batch["input_mask"], batch["segment_ids"])
            results.extend(squad_data.results_from_batch(batch["unique_ids"], start, end))
            if len(results) % 1000 < options.predict_batch_size:
                logging.info("Processed %d / %d features.", len(results), len(features))
        predictions = squad_data.postprocess_predictions(
            read.examples, features, results, options.n_best_size, options.max_answer_length,
            options.do_lower_case, options.version_2_with_negative,
            options.null_score_diff_threshold, options.verbose_logging)
        written = squad_data.write_prediction_files(options.output_dir, predictions)
        metrics = None
        if squad_data.has_answers(self.predict_data, options.version_2_with_negative):
            metrics = squad_data.evaluate(self.predict_data, predictions.predictions,
                                          options.version_2_with_negative, predictions.null_odds)
            written["eval_results"] = squad_data.write_eval_results(options.output_dir, metrics)
            evaluation.write_eval_summaries(options.output_dir, metrics, step)
            logging.info("***** Eval results *****\n%s",
                         "\n".join("  %s = %s" % item for item in metrics.items()))
        logging.info("Wrote %s", ", ".join(written.values()))
        return dict(files=written, metrics=metrics, predictions=predictions)


def run(options, callbacks=()):
    """Trains and/or predicts as the flags say.

    Args:
      options: SquadOptions.
      callbacks: passed to the training loop (trainer.train).

    Returns:
      dict with the predict outcome (files, metrics, predictions) when --do_predict,
      and the SavedModel's path under "export" with --export_dir.
    """
    squad = SquadRun(options)
    strategy = process.prepare(options)
    trainer = squad.train(strategy, callbacks) if options.do_train else None
    if not options.do_predict and not options.export_dir:
        return {}
    model, step = evaluation.model_to_evaluate(options, strategy, squad.build_model, trainer)
    outcome = squad.predict(model, step) if options.do_predict else {}
    if options.export_dir:
        outcome["export"] = export_squad(model, options, frozen_export.regeneration_of_run(model, options))
    return outcome
