"""The fine-tuning run behind run_classifier.py: GLUE / XNLI classification and STS-B regression.

As the original: examples from the task's TSVs (classifier_data), features
`[CLS] a [SEP] b [SEP]` written to `train.tf_record` / `eval.tf_record` /
`predict.tf_record` in output_dir, num_train_steps = int(examples / batch *
epochs), warm-up = int(steps * warmup_proportion), softmax cross entropy on
the pooled output (mean squared error for STS-B). Training goes through the
shared loop (training/trainer.py), so it resumes, freezes and distributes as
pre-training does.
"""

import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging

import file_system
import modeling
from modeling.family import FAMILY
import tokenization
from classifier_data import features as features_lib
from classifier_data import metrics as metrics_lib
from classifier_data import processors, submission
from modeling import bert_setup, frozen_export
from options import option
from serving.export import ExportOptions, export_classifier
from training import evaluation, inference, input_checks, process, run_record
from training import trainer as trainer_lib
from training.training_options import EvaluationOptions, FineTuningOptions


@dataclasses.dataclass(kw_only=True)
class ClassifierOptions(bert_setup.BertConfigOptions, FineTuningOptions, EvaluationOptions, ExportOptions):
    """The run_classifier.py flags: these, and the shared ones of the base classes."""

    data_dir: str = option(help="The input data dir. Should contain the .tsv files (or other data "
                           "files) for the task.")
    task_name: str = option(help="The name of the task to train.")
    max_seq_length: int = option(
        128, "The maximum total input sequence length after WordPiece tokenization; longer "
        "sequences are truncated, shorter ones padded.", minimum=1)

    def validate(self):
        if not (self.do_train or self.do_eval or self.do_predict or self.export_dir):
            raise ValueError("At least one of `do_train`, `do_eval` or `do_predict' must be True.")
        super().validate()
        if self.max_seq_length < 3:
            raise ValueError("--max_seq_length=%d leaves no room for [CLS] and [SEP]." % self.max_seq_length)


def _model_inputs(batch):
    return dict(input_ids=batch["input_ids"], input_mask=batch["input_mask"],
                token_type_ids=batch["segment_ids"])


def losses_fn(is_regression):
    """Per-batch losses: softmax cross entropy, or squared error for regression."""

    def compute(outputs, batch):
        logits = tf.cast(outputs["logits"], tf.float32)
        if is_regression:
            per_example = tf.square(logits[:, 0] - tf.cast(batch["label_ids"], tf.float32))
        else:
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=batch["label_ids"], logits=logits)
        return {"loss": tf.reduce_mean(per_example)}

    return compute


class ClassifierRun:
    """One run_classifier.py invocation."""

    def __init__(self, options):
        options.validate()
        self.options = options
        self.processor = processors.get_processor(options.task_name)
        self.task = processors.canonical_task_name(options.task_name)
        self._check_input_files()
        train_files = self.processor.input_files(options.data_dir, "train") if options.do_train else []
        self.record = run_record.check_training_run(
            options, ("task_name",), vocab_file=file_system.content_hash(options.vocab_file),
            data_dir=run_record.files_summary(train_files) if train_files else None)
        self.label_list = self.processor.get_labels()
        self.is_regression = self.processor.is_regression
        tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
        self.config = bert_setup.effective_config(options)
        self.freezer = FAMILY.freezer(options, self.config)
        # FullTokenizer's tokens, each distinct word tokenized once.
        self.tokenizer = tokenization.CachedFullTokenizer.from_vocab_file(
            options.vocab_file, options.do_lower_case)
        features_lib.check_vocab_fits_config(
            self.tokenizer.vocab, self.config.vocab_size, options.vocab_file)
        self.num_labels = 1 if self.is_regression else len(self.label_list)
        # Read now, not after training: a malformed line or an empty file stops the run before it. The
        # small files first; the training set is kept for train().
        self.eval_sets = self._read_eval_sets() if options.do_eval else []
        self.test_examples, self.submission_sets = self._read_test_sets() if options.do_predict else (None, [])
        self.train_examples = self._read_train_set() if options.do_train else None

    def _check_input_files(self):
        """Every file --do_train/--do_eval/--do_predict reads is there, so none is missed after training."""
        options, task = self.options, self.options.task_name
        wanted = [(mode, path) for mode in ("train", "eval", "predict") if getattr(options, "do_" + mode)
                  for path in self.processor.input_files(options.data_dir, mode)]
        if wanted and not tf.io.gfile.isdir(options.data_dir):
            mode, path = wanted[0]
            name = os.path.relpath(path, options.data_dir)
            if tf.io.gfile.exists(options.data_dir):
                raise ValueError("--data_dir=%s is not a directory; task %s reads %s from it for --do_%s."
                                 % (options.data_dir, task, name, mode))
            raise FileNotFoundError("--data_dir=%s does not exist; task %s reads %s from it for --do_%s."
                                    % (options.data_dir, task, name, mode))
        for mode, path in wanted:
            input_checks.check_readable(path, "task %s reads it from --data_dir for --do_%s" % (task, mode))

    def build_model(self):
        return modeling.build_model(modeling.BertClassifierModel(self.config, self.num_labels))

    def _records(self, examples, name):
        path = os.path.join(self.options.output_dir, name)
        features_lib.file_based_convert_examples_to_features(
            examples, self.label_list, self.options.max_seq_length, self.tokenizer, path)
        return path

    def train(self, strategy, callbacks=()):
        options = self.options
        examples, self.train_examples = self.train_examples, None  # Not kept through evaluation.
        schedule = options.schedule(len(examples))
        logging.info("***** Running training: %d examples, batch size %d, %d steps *****",
                     len(examples), options.train_batch_size, schedule.num_train_steps)
        records = self._records(examples, "train.tf_record")
        task = trainer_lib.Task(
            build_model=self.build_model,
            make_dataset=lambda batch_size, _: features_lib.dataset_from_file(
                records, options.max_seq_length, self.is_regression, batch_size,
                is_training=True, drop_remainder=True, seed=options.random_seed),
            model_inputs=_model_inputs,
            compute_losses=losses_fn(self.is_regression),
            records=dict(FAMILY.config_records(self.config), **run_record.records(self.record)),
            input_files=[records],
        )
        return trainer_lib.train(options, schedule, strategy, task, self.freezer, callbacks)

    def _logits_fn(self, model, batch_size):
        """One traced function per model and batch size (eval and predict sizes differ)."""
        if getattr(self, "_logits_key", None) != (model, batch_size):

            def logits(input_ids, input_mask, segment_ids):
                inputs = dict(input_ids=input_ids, input_mask=input_mask, token_type_ids=segment_ids)
                return tf.cast(model(inputs, training=False)["logits"], tf.float32)

            self._logits_key = (model, batch_size)
            self._logits = inference.BatchForward(
                logits, batch_size, self.options.max_seq_length, self.options.compiles_forward(self.options.dtype))
        return self._logits

    def _predict(self, model, examples, name, batch_size):
        """(outputs [n, num_labels] or [n], loss per example [n] or None, labels)."""
        records = self._records(examples, name)
        dataset = features_lib.dataset_from_file(
            records, self.options.max_seq_length, self.is_regression, batch_size,
            is_training=False, drop_remainder=False)
        step = self._logits_fn(model, batch_size)
        logits, labels = [], []
        for batch in dataset:
            logits.append(step(batch["input_ids"], batch["input_mask"], batch["segment_ids"]).numpy())
            labels.append(batch["label_ids"].numpy())
        logits, labels = np.concatenate(logits), np.concatenate(labels)
        if self.is_regression:
            return logits[:, 0], (logits[:, 0] - labels) ** 2, labels
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        losses = -log_probs[np.arange(len(labels)), labels]
        return np.exp(log_probs), losses, labels

    def _nonempty(self, examples, mode, file_of, *args):
        """`examples`; none (a file with only its header) is an error naming the file, file_of(data_dir, *args),
        and the --do_<mode> that reads it (a processor written for the original's API, without `set_files`,
        names no file: the set and the --data_dir are named)."""
        if not examples:
            try:
                source = file_of(self.options.data_dir, *args)
            except KeyError:
                source = "The %s set of --data_dir=%s" % (args[-1], self.options.data_dir)
            raise ValueError("%s has no examples; task %s reads it from --data_dir for --do_%s."
                             % (source, self.options.task_name, mode))
        return examples

    def _read_train_set(self):
        processor = self.processor
        return self._nonempty(processor.get_train_examples(self.options.data_dir), "train", processor.path, "train")

    def _read_eval_sets(self):
        """[(results file, records file, examples)]: dev (and MNLI's dev_mismatched)."""
        sets = [("eval_results.txt", "eval.tf_record", "dev", self.processor.get_dev_examples)]
        if hasattr(self.processor, "get_dev_mismatched_examples"):
            sets.append(("eval_results_mismatched.txt", "eval_mismatched.tf_record", "dev_mismatched",
                         self.processor.get_dev_mismatched_examples))
        return [(results_file, records,
                 self._nonempty(get_examples(self.options.data_dir), "eval", self.processor.path, set_name))
                for results_file, records, set_name, get_examples in sets]

    def _read_test_sets(self):
        """(test examples, [(GLUE submission name, examples)])."""
        processor, data_dir = self.processor, self.options.data_dir
        test = self._nonempty(processor.get_test_examples(data_dir), "predict", processor.path, "test")
        return test, [(name, self._nonempty(examples, "predict", processor.submission_file, name))
                      for name, examples in processor.get_submission_sets(data_dir)]

    def evaluate(self, model, step):
        """Writes eval_results.txt (and eval_results_mismatched.txt for MNLI)."""
        all_results = {}
        for results_file, records, examples in self.eval_sets:
            logging.info("***** Running evaluation: %d examples *****", len(examples))
            outputs, losses, labels = self._predict(model, examples, records, self.options.eval_batch_size)
            results = metrics_lib.task_metrics(self.task, outputs, labels)
            results.update(eval_loss=float(losses.mean()), loss=float(losses.mean()), global_step=step)
            evaluation.write_eval_results(self.options.output_dir, results, results_file)
            # TensorBoard: eval/ (and eval_mismatched/ for MNLI), beside the records' names.
            evaluation.write_eval_summaries(self.options.output_dir, results, step,
                                            os.path.splitext(records)[0])
            all_results[results_file] = results
        return all_results

    def predict(self, model):
        """Writes test_results.tsv and the GLUE leaderboard files."""
        output_dir, examples = self.options.output_dir, self.test_examples
        logging.info("***** Running prediction: %d examples *****", len(examples))
        outputs, _, _ = self._predict(model, examples, "predict.tf_record", self.options.predict_batch_size)
        submission.write_test_results(os.path.join(output_dir, "test_results.tsv"), outputs, len(examples))
        written = [os.path.join(output_dir, "test_results.tsv")]
        for name, test_examples in self.submission_sets:
            if test_examples is examples or name == self.processor.submission_name:
                predictions = outputs
            else:
                predictions, _, _ = self._predict(
                    model, test_examples, "predict_%s.tf_record" % name, self.options.predict_batch_size)
            written.append(submission.write_glue_submission(
                output_dir, name, predictions, self.label_list, len(test_examples)))
        logging.info("Wrote %s", ", ".join(written))
        return written


def run(options, callbacks=()):
    """Trains, evaluates and/or predicts as the flags say.

    Args:
      options: ClassifierOptions.
      callbacks: passed to the training loop (trainer.train).

    Returns:
      dict: eval results by file name (with --do_eval), the predict files
      written (with --do_predict) and the SavedModel's path (with --export_dir).
    """
    classifier = ClassifierRun(options)
    strategy = process.prepare(options)
    trainer = classifier.train(strategy, callbacks) if options.do_train else None
    outcome = {}
    if options.do_eval or options.do_predict or options.export_dir:
        model, step = evaluation.model_to_evaluate(options, strategy, classifier.build_model, trainer)
        if options.do_eval:
            outcome["eval"] = classifier.evaluate(model, step)
        if options.do_predict:
            outcome["predict"] = classifier.predict(model)
        if options.export_dir:
            outcome["export"] = export_classifier(model, options, classifier.label_list, classifier.is_regression,
                                                  classifier.processor.takes_text_pair,
                                                  frozen_export.regeneration_of_run(model, options))
    return outcome
