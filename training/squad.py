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

import modeling
import squad_data
import tokenization
from classifier_data.features import check_vocab_fits_config
from training import common_flags, run_setup
from training import trainer as trainer_lib

# The original shuffles the training examples with this fixed seed.
EXAMPLE_SHUFFLE_SEED = 12345


@dataclasses.dataclass
class SquadOptions(common_flags.SharedOptions):
    """The run_squad.py flags; see the README for each."""

    bert_config_file: str
    vocab_file: str
    output_dir: str
    train_file: Optional[str] = None
    predict_file: Optional[str] = None
    init_checkpoint: Optional[str] = None
    do_lower_case: bool = True
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    n_best_size: int = 20
    max_answer_length: int = 30
    verbose_logging: bool = False
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0

    def validate(self):
        """The original's validate_flags_or_throw, plus our flags."""
        if not self.do_train and not self.do_predict:
            raise ValueError("At least one of `do_train` or `do_predict` must be True.")
        if self.do_train and not self.train_file:
            raise ValueError("If `do_train` is True, then `train_file` must be specified.")
        if self.do_predict and not self.predict_file:
            raise ValueError("If `do_predict` is True, then `predict_file` must be specified.")
        squad_data.check_lengths(self.max_seq_length, self.doc_stride, self.max_query_length)
        for name in ("train_batch_size", "predict_batch_size", "n_best_size", "max_answer_length",
                     "save_checkpoints_steps", "iterations_per_loop"):
            if getattr(self, name) <= 0:
                raise ValueError("--%s=%s must be positive." % (name, getattr(self, name)))
        self.validate_shared()


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
        tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
        self.config = run_setup.effective_config(
            options.bert_config_file, options.head_size, options.max_seq_length)
        self.tokenizer = tokenization.FullTokenizer(options.vocab_file, options.do_lower_case)
        check_vocab_fits_config(len(self.tokenizer.vocab), self.config.vocab_size, options.vocab_file)

    def build_model(self):
        return modeling.build_model(modeling.BertSquadModel(self.config))

    def train(self, strategy):
        options = self.options
        read = squad_data.read_squad_examples(
            options.train_file, is_training=True, version_2_with_negative=options.version_2_with_negative)
        examples = list(read.examples)
        if not examples:
            raise ValueError("No training examples in %s." % options.train_file)
        random.Random(EXAMPLE_SHUFFLE_SEED).shuffle(examples)
        num_train_steps = int(len(examples) / options.train_batch_size * options.num_train_epochs)
        if num_train_steps < 1:
            raise ValueError(
                "%d examples, --train_batch_size=%d and --num_train_epochs=%s give no training "
                "step." % (len(examples), options.train_batch_size, options.num_train_epochs))
        records = os.path.join(options.output_dir, "train.tf_record")
        num_features = squad_data.write_features(
            examples, self.tokenizer, records, options.max_seq_length, options.doc_stride,
            options.max_query_length, is_training=True)
        logging.info(
            "***** Running training: %d examples (%d skipped), %d features, batch size %d, "
            "%d steps *****", len(examples), read.num_skipped, num_features,
            options.train_batch_size, num_train_steps)
        task = trainer_lib.Task(
            build_model=self.build_model,
            make_dataset=lambda batch_size, _: squad_data.make_dataset(
                records, options.max_seq_length, is_training=True, batch_size=batch_size,
                drop_remainder=True, seed=options.random_seed),
            model_inputs=_model_inputs,
            compute_losses=span_losses,
        )
        spec = trainer_lib.TrainingSpec.from_options(
            options, num_train_steps=num_train_steps,
            num_warmup_steps=int(num_train_steps * options.warmup_proportion))
        return trainer_lib.train(spec, strategy, task)

    def predict(self, model):
        """Writes the prediction files, and eval_results.json when answers are known."""
        options = self.options
        read = squad_data.read_squad_examples(
            options.predict_file, is_training=False, version_2_with_negative=options.version_2_with_negative)
        features = squad_data.convert_examples_to_features(
            read.examples, self.tokenizer, options.max_seq_length, options.doc_stride,
            options.max_query_length, is_training=False)
        logging.info("***** Running predictions: %d examples, %d features *****",
                     len(read.examples), len(features))
        spec = tf.TensorSpec([None, options.max_seq_length], tf.int32)

        @tf.function(input_signature=[spec, spec, spec])
        def logits(input_ids, input_mask, segment_ids):
            outputs = model(dict(input_ids=input_ids, input_mask=input_mask,
                                 token_type_ids=segment_ids), training=False)
            return (tf.cast(outputs["start_logits"], tf.float32),
                    tf.cast(outputs["end_logits"], tf.float32))

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
        if squad_data.predict_file_has_answers(options.predict_file, options.version_2_with_negative):
            dataset = squad_data.load_squad_data(options.predict_file)
            metrics = squad_data.evaluate(dataset, predictions.predictions,
                                          options.version_2_with_negative, predictions.null_odds)
            written["eval_results"] = squad_data.write_eval_results(options.output_dir, metrics)
            logging.info("***** Eval results *****\n%s",
                         "\n".join("  %s = %s" % item for item in metrics.items()))
        logging.info("Wrote %s", ", ".join(written.values()))
        return dict(files=written, metrics=metrics, predictions=predictions)


def run(options):
    """Trains and/or predicts as the flags say.

    Returns:
      dict with the predict outcome (files, metrics, predictions) when --do_predict.
    """
    squad = SquadRun(options)
    strategy = run_setup.prepare(options, squad.config)
    trainer = squad.train(strategy) if options.do_train else None
    if not options.do_predict:
        return {}
    model, _ = run_setup.model_to_evaluate(options, strategy, squad.build_model, trainer)
    return squad.predict(model)
