"""The best checkpoint by a held-out figure, and early stopping by it: one owner for every family.

A family that evaluates held-out data at every checkpoint (translation: dev
BLEU; the language model: held-out perplexity) passes `BestCheckpoint` to the
training loop as a callback. At every --save_checkpoints_steps step (and the
last) it asks the family for that step's results, and

  - keeps the weights of the best evaluation so far in output_dir/best/
    (model.ckpt, with the original variable names, and best_results.txt);
  - appends the evaluation to the run's learning curve;
  - stops training (trainer.StopTraining) once the stopping rule of
    training/stopping.py says so: --early_stopping_patience evaluations without
    a better figure *and* no rise of the last 2 x patience beyond their noise.

Its state is output_dir/best/early_stopping.json:

  best_<figure>, best_step, best_epochs   the best evaluation so far
  evaluations_since_best
  history        [{global_step, epochs, <figure>, ...}, ...]: the learning curve
  last_evaluated_step, stopped

Writing it is each evaluation's commit point: a run killed before it
re-evaluates that step on resume (rewriting the best checkpoint if it is the
best), one killed after it does not; a stopped run does not train again. The
final scores of a run use the best checkpoint (`best_model`) when it exists.
"""

import dataclasses
import json
import os

import tensorflow as tf
from absl import logging

import outputs
from checkpoints import tf1_checkpoint
from options import option
from training import evaluation, stopping
from training import trainer as trainer_lib
from training.training_options import ModesOptions

BEST_DIRECTORY = "best"
STATE_FILE = "early_stopping.json"
BEST_RESULTS_FILE = "best_results.txt"


@dataclasses.dataclass(kw_only=True)
class EarlyStoppingOptions(ModesOptions):
    """The modes of a run that can evaluate held-out data at every checkpoint, and its early-stopping flag."""

    early_stopping_patience: int = option(
        0, "With --do_train and --do_eval: stop once this many held-out evaluations (one per checkpoint, every "
        "--save_checkpoints_steps) bring no better figure and the last twice as many show no rise beyond their "
        "own noise (two standard errors of their fitted slope); 0: never stop early. The best checkpoint is "
        "kept in output_dir/best/ either way, and the final scores use it.", minimum=0, new=True)

    def validate(self):
        super().validate()
        if self.early_stopping_patience and self.do_train and not self.do_eval:
            raise ValueError("--early_stopping_patience=%d needs --do_eval: early stopping watches the held-out "
                             "figure of each checkpoint." % self.early_stopping_patience)
        if self.early_stopping_patience and not self.do_train:
            logging.warning("--early_stopping_patience=%d has no effect without --do_train: it stops training, "
                            "and this run only evaluates or predicts.", self.early_stopping_patience)


def read_state(output_dir):
    """The early-stopping state of output_dir ({} before the first held-out evaluation)."""
    path = os.path.join(output_dir, BEST_DIRECTORY, STATE_FILE)
    if not tf.io.gfile.exists(path):
        return {}
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def scores(state, figure, higher_is_better):
    """The run's figure per evaluation, oldest first, signed so that higher is better."""
    sign = 1.0 if higher_is_better else -1.0
    return [sign * point[figure] for point in state.get("history", [])]


class BestCheckpoint:
    """The training-loop callback: evaluate, keep the best weights, stop by training/stopping.py's rule.

    Args:
      options: the run's options (output_dir, save_checkpoints_steps, num_train_steps, early_stopping_patience).
      model_tensors: () -> {original variable name: value} of the model being trained.
      evaluate: step -> (results dict holding `figure`, anything to remember with it); the results may hold
        "epochs", and every key of `curve` is copied into the learning curve.
      figure: the results key that decides (e.g. "bleu", "perplexity").
      higher_is_better: whether a larger figure is better.
      curve: the results keys kept per evaluation in the history.
      label: how logs and messages name the figure (e.g. "Dev BLEU").
      split: the name of the held-out data's TensorBoard folder.
    """

    def __init__(self, options, model_tensors, evaluate, figure, higher_is_better, curve, label, split="dev"):
        self.options, self.model_tensors, self.evaluate = options, model_tensors, evaluate
        self.figure, self.higher_is_better, self.curve = figure, higher_is_better, curve
        self.label, self.split = label, split
        self.directory = os.path.join(options.output_dir, BEST_DIRECTORY)
        self.state = read_state(options.output_dir)
        self._writer = None  # one events file for the run's held-out curve
        # (step, results, what evaluate remembered) of the best evaluation made by this process: the final
        # scoring of the same weights on the same data may reuse it.
        self.best_of_this_process = None

    def _better(self, value):
        best = self.state.get("best_" + self.figure)
        return best is None or (value > best if self.higher_is_better else value < best)

    def __call__(self, step):
        if step % self.options.save_checkpoints_steps and step != self.options.num_train_steps:
            return
        if step <= self.state.get("last_evaluated_step", 0):
            return  # Evaluated before a kill: the trainer calls again for the checkpoint it resumes from.
        results, remembered = self.evaluate(step)
        if self._writer is None:
            self._writer = tf.summary.create_file_writer(os.path.join(self.options.output_dir, self.split))
        with self._writer.as_default(step=step):
            for key in self.curve:
                if key in results and key not in ("global_step", "epochs"):
                    tf.summary.scalar(key, results[key])
        self._writer.flush()
        state = self.state
        if self._better(results[self.figure]):
            tf.io.gfile.makedirs(self.directory)
            tf1_checkpoint.write_tensors(os.path.join(self.directory, "model.ckpt"), self.model_tensors())
            evaluation.write_eval_results(self.directory, results, BEST_RESULTS_FILE)
            state.update({"best_" + self.figure: results[self.figure], "best_step": step,
                          "best_epochs": results.get("epochs", 0.0), "evaluations_since_best": 0})
            self.best_of_this_process = (step, dict(results), remembered)
        else:
            state["evaluations_since_best"] = state.get("evaluations_since_best", 0) + 1
        state.setdefault("history", []).append({key: results[key] for key in self.curve if key in results})
        logging.info("%s %.4g at step %d (%.2f epochs); best %.4g at step %d.", self.label, results[self.figure],
                     step, results.get("epochs", 0.0), state["best_" + self.figure], state["best_step"])
        patience = self.options.early_stopping_patience
        state["stopped"] = stopping.should_stop(scores(state, self.figure, self.higher_is_better), patience)
        state["last_evaluated_step"] = step
        # The evaluation's commit point (see the module docstring).
        outputs.write_text(os.path.join(self.directory, STATE_FILE), json.dumps(state, indent=2) + "\n")
        if state["stopped"]:
            raise trainer_lib.StopTraining(
                "no better %s in %d evaluations and no rise beyond noise in the last %d "
                "(--early_stopping_patience)" % (self.label.lower(), patience, 2 * patience))


def stopped_too_soon(state, figure, higher_is_better, patience):
    """Whether a run that stopped early (by its state) would have gone on under today's rule with `patience`.

    Runs stopped by an older rule (patience alone) are found this way; they are run again to be compared.
    """
    return bool(state.get("stopped")) and not stopping.should_stop(scores(state, figure, higher_is_better), patience)


def stopped_before(output_dir):
    """Whether the run in output_dir stopped early before (logged): it then does not train again."""
    if not read_state(output_dir).get("stopped"):
        return False
    logging.info("Training stopped early before (%s): not training further.",
                 os.path.join(output_dir, BEST_DIRECTORY, STATE_FILE))
    return True


def best_model(options, strategy, build_model, trainer):
    """(model, step): the weights in output_dir/best/ if they exist, else evaluation.model_to_evaluate's.

    Raises:
      ValueError: when the best checkpoint lacks some of the model's variables.
    """
    best = os.path.join(options.output_dir, BEST_DIRECTORY, "model.ckpt")
    if not tf.io.gfile.exists(best + ".index"):
        return evaluation.model_to_evaluate(options, strategy, build_model, trainer)
    model = trainer_lib.build_seeded_model(strategy, build_model, options.random_seed)
    result = tf1_checkpoint.load_checkpoint(model, best)
    if result.missing:
        raise ValueError("%s lacks %d variables of the model (%s)." % (best, len(result.missing),
                                                                       ", ".join(result.missing[:3])))
    step = int(read_state(options.output_dir).get("best_step", 0))
    logging.info("Scoring the best checkpoint by held-out figure: %s (step %d).", best, step)
    return model, step
