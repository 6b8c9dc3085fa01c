"""The language-model run behind run_lm.py: train, resume, evaluate perplexity.

`LmOptions` declares the command line (the original training flags under
their names, then ours); `run(options)` reads the text, gets or learns the
sub-word vocabulary, trains `TransformerLm` with the shared loop
(training/trainer.py: checkpoints, exact resume, freezing, mixed precision,
tf.distribute) and writes eval_results.txt (`--do_eval`, on --eval_file) and
test_results.txt (`--do_predict`, on --test_file):

  loss               mean negative log-likelihood per sub-word token (nats),
                     over every real target token (eos included, padding not)
  perplexity         exp(loss)
  num_tokens         the tokens scored
  bits_per_character loss * num_tokens / ln 2 / num_characters: comparable across
                     vocabularies
  num_characters     characters of the scored lines, one newline each
  global_step
  epochs             (with --early_stopping_patience) the passes over the training
                     sequences the scored weights took: steps * train_batch_size /
                     the training text's sequences (a long line gives several)

With --do_train, --do_eval and --early_stopping_patience the --eval_file text is
also scored at every checkpoint (every --save_checkpoints_steps), its curve in
output_dir/dev and in output_dir/best/early_stopping.json: the checkpoint with
the lowest held-out perplexity is kept in output_dir/best/, training stops by
training/early_stopping.py's rule, and the final eval and test scores are those
of the best checkpoint. Without it the run trains its --num_train_steps and
scores the last weights, as before.
"""

import dataclasses
import math
from typing import Optional

import tensorflow as tf
from absl import logging

from checkpoints import tf1_checkpoint
from file_system import text_files
from lm import dataset as lm_dataset, tfds_source
from lm.config import LmConfig
from lm.family import FAMILY
from layers import cross_entropy
from options import Options, option
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training import early_stopping, evaluation, model_options, process, run_record
from training import trainer as trainer_lib
from training.presets import apply_preset
from training.early_stopping import BestCheckpoint, EarlyStoppingOptions
from training.model_options import HeadSizeOptions
from training.training_options import Schedule, ScheduleOptions, StepsOptions

EVAL_LOG_BATCHES = 100


@dataclasses.dataclass(kw_only=True)
class LmTextOptions(Options):
    """Where the language model's text lives (run_lm.py and reproduce_paper_tables.py's lm_* experiments)."""

    train_file: Optional[str] = option(
        None, "Training text, one sentence per line: files or globs, comma-separated (LM1B: "
        ".../training-monolingual.tokenized.shuffled/news.en-*).", new=True)
    eval_file: Optional[str] = option(
        None, "Evaluation text for --do_eval (LM1B: .../heldout-monolingual.tokenized.shuffled/"
        "news.en.heldout-00000-of-00050).", new=True)
    test_file: Optional[str] = option(None, "Test text for --do_predict, scored into test_results.txt.", new=True)
    tfds_data_dir: Optional[str] = option(
        None, "A prepared TensorFlow Datasets directory holding lm1b: its train split trains, its "
        "test split evaluates and tests, unless the file flags are given. Never downloads.", new=True)


@dataclasses.dataclass(kw_only=True)
class LmOptions(EarlyStoppingOptions, StepsOptions, HeadSizeOptions, ScheduleOptions, LmTextOptions):
    """The run_lm.py flags: the original training flags, then ours."""

    max_seq_length: int = option(
        256, "The maximum sequence length in sub-word tokens (with bos/eos); longer lines are split.",
        minimum=2)
    pack_lines: bool = option(
        False, "Run the lines together as one token stream cut into examples of --max_seq_length predictions "
        "(context crosses line ends), instead of one example per line (split only when too long).", new=True)
    vocab_file: Optional[str] = option(
        None, "A SentencePiece model (.model). Without it a vocabulary of --vocab_size pieces is "
        "learned from the training text and saved as output_dir/spm.model.", path="file")
    vocab_size: int = option(32000, "Pieces of the vocabulary learned when there is no --vocab_file.",
                             minimum=5, new=True)
    lm_config_file: Optional[str] = option(
        None, "JSON of the model: hidden_size, num_hidden_layers, num_attention_heads, head_size, "
        "intermediate_size, hidden_dropout_prob, attention_probs_dropout_prob, tie_embeddings, "
        "hidden_act, max_position_embeddings. Keys left out take the lm1b_paper model's values.",
        new=True, path="file")
    preset: Optional[str] = option(
        None, "lm1b_paper: the LM1B model and schedule of Bhojanapalli et al. (2020); flags given "
        "on the command line win.", choices=tuple(FAMILY.presets), new=True)

    def validate(self):
        super().validate()
        for mode, flag in (("do_train", "train_file"), ("do_eval", "eval_file"), ("do_predict", "test_file")):
            if getattr(self, mode) and not getattr(self, flag) and not self.tfds_data_dir:
                raise ValueError("--%s needs --%s (or --tfds_data_dir)." % (mode, flag))


def effective_config(options):
    """The run's LmConfig: --lm_config_file over the lm1b_paper model, then --head_size.

    Raises:
      ValueError: for a bad config file, or --max_seq_length beyond max_position_embeddings.
    """
    config = LmConfig.from_json_file(options.lm_config_file) if options.lm_config_file else LmConfig()
    return model_options.with_head_size(config, options,
                                        "--max_seq_length=%d exceeds the model's max_position_embeddings %d.")


def sources(options):
    """{mode: line source} of the modes the run does; every file is checked here, before any model."""
    found = {}
    for mode, wanted, flag, split in (("train", options.do_train, "train_file", "train"),
                                      ("eval", options.do_eval, "eval_file", "test"),
                                      ("test", options.do_predict, "test_file", "test")):
        if not wanted:
            continue
        if getattr(options, flag):
            found[mode] = lm_dataset.TextFiles(text_files.expand(getattr(options, flag), "--" + flag))
            text_files.check_utf8(found[mode].files, "--" + flag)
        else:
            found[mode] = tfds_source.TfdsSplit(options.tfds_data_dir, split)
        logging.info("%s text: %s", mode, found[mode].describe())
    return found


def summed_nll(outputs, batch, output_logits=None):
    """(summed negative log-likelihood of the real target tokens, their number) of a batch.

    With the model's `output_logits`, the logits are made at the real target
    positions only (from outputs["sequence_output"]); else outputs["logits"]
    are read at every position and the padding weighted 0.
    """
    weights = tf.cast(batch["input_mask"], tf.float32)
    if output_logits is None:
        nll, _ = cross_entropy.cross_entropy_terms(outputs["logits"], batch["target_ids"])
        nll = nll * weights
    else:
        logits, labels = cross_entropy.at_real_positions(
            output_logits, outputs["sequence_output"], batch["target_ids"], batch["input_mask"])
        nll, _ = cross_entropy.cross_entropy_terms(logits, labels)
    return tf.reduce_sum(nll), tf.reduce_sum(weights)


def lm_losses(outputs, batch, output_logits=None):
    """{"loss": mean NLL per real target token, "target_tokens": their number} of a batch (see summed_nll)."""
    total, tokens = summed_nll(outputs, batch, output_logits)
    return dict(loss=total / tf.maximum(tokens, 1.0), target_tokens=tokens)


def _model_inputs(batch):
    return dict(input_ids=batch["input_ids"], input_mask=batch["input_mask"])


def training_data(options, found):
    """The training text as a run records it: its files and sizes, or the TFDS split."""
    if "train" not in found:
        return None
    if options.train_file:
        return run_record.files_summary(found["train"].files)
    return "tfds %s train in %s" % (tfds_source.DATASET, options.tfds_data_dir)


def lm_task(options, config, vocabulary, train_source, record=None, built=None):
    """The trainer.Task of a language-model run; the model it builds is left in `built["model"]`."""
    built = {} if built is None else built

    def build():
        built["model"] = FAMILY.build_model(config)
        return built["model"]

    return trainer_lib.Task(
        build_model=build,
        make_dataset=lambda batch_size, context: lm_dataset.training_dataset(
            train_source, vocabulary, options.max_seq_length, batch_size, options.random_seed, context,
            options.pack_lines),
        model_inputs=_model_inputs,
        compute_losses=lambda outputs, batch: lm_losses(outputs, batch, built["model"].output_logits),
        loss_names=("loss", "target_tokens"),
        records=dict(FAMILY.config_records(config), **run_record.records(record)),
        tokens_name="target_tokens",
    )


def scoring_function(model):
    """A traced function: batch -> (summed negative log-likelihood, tokens, characters) by `model`.

    Traced at most twice (full batches, then any batch size); a run's held-out
    evaluations share one, since a new one traces and instantiates its graph
    again (about a second at the small scale).
    """

    @tf.function(reduce_retracing=True, autograph=False)
    def step(batch):
        total, tokens = summed_nll(model(_model_inputs(batch), training=False), batch, model.output_logits)
        return total, tokens, tf.reduce_sum(batch["num_chars"])

    return step


def score(model, batches, scorer=None):
    """Sums over `batches`: (negative log-likelihood in nats, tokens, characters), as Python numbers.

    scorer: `scoring_function(model)` to reuse; None: a new one.
    """
    step = scorer if scorer is not None else scoring_function(model)
    total_nll, tokens, chars = 0.0, 0, 0
    for index, batch in enumerate(batches, 1):
        nll, count, num_chars = step(batch)
        total_nll += float(nll)
        tokens += int(count)
        chars += int(num_chars)
        if index % EVAL_LOG_BATCHES == 0:
            logging.info("Scored %d batches, %d tokens: loss so far %.4f.", index, tokens, total_nll / tokens)
    return total_nll, tokens, chars


def perplexity_results(model, options, vocabulary, source, step, scorer=None):
    """The scores of `source` by `model` (see the module docstring), at `step`; `scorer` as for `score`.

    Raises:
      ValueError: when `source` holds no text to score.
    """
    batches = lm_dataset.evaluation_dataset(source, vocabulary, options.max_seq_length, options.eval_batch_size,
                                           options.pack_lines)
    total_nll, tokens, chars = score(model, batches, scorer)
    if not tokens:
        raise ValueError("%s holds no text to score." % source.describe())
    loss = total_nll / tokens
    return dict(loss=loss, perplexity=math.exp(min(loss, 700.0)), num_tokens=tokens,
                bits_per_character=total_nll / math.log(2) / chars, num_characters=chars, global_step=step)


def count_sequences(source, vocabulary, max_seq_length, pack=False):
    """The training sequences of `source` (one pass, tokenized): what an epoch is made of."""
    dataset = lm_dataset.examples(source.lines(), vocabulary, max_seq_length, pack)
    count = int(dataset.reduce(tf.constant(0, tf.int64), lambda total, _: total + 1))
    logging.info("The training text gives %d sequences of up to %d tokens.", count, max_seq_length)
    return count


def held_out_callback(options, built, vocabulary, found):
    """The BestCheckpoint of a language-model run: the --eval_file text's perplexity, lower is better."""
    sequences, scorers = [], []

    def evaluate(step):
        if not sequences:
            sequences.append(count_sequences(found["train"], vocabulary, options.max_seq_length, options.pack_lines))
            scorers.append(scoring_function(built["model"]))  # the run's one model: traced once for all
        results = perplexity_results(built["model"], options, vocabulary, found["eval"], step, scorer=scorers[0])
        results["epochs"] = step * options.train_batch_size / max(sequences[0], 1)
        return results, None

    return BestCheckpoint(options, lambda: tf1_checkpoint.model_tensors(built["model"]), evaluate, "perplexity",
                          higher_is_better=False, curve=("global_step", "epochs", "perplexity", "loss"),
                          label="Held-out perplexity")


def evaluate(options, config, vocabulary, strategy, source, trainer, mode):
    """Scores `source` with the best checkpoint (early stopping), else the trained model, else the newest
    checkpoint, else --init_checkpoint.

    Writes eval_results.txt (mode "eval") or test_results.txt (mode "test"),
    and the same values to TensorBoard under output_dir/<mode>.

    Returns:
      dict of the results.
    """
    model, step = early_stopping.best_model(options, strategy, lambda: FAMILY.build_model(config), trainer)
    results = perplexity_results(model, options, vocabulary, source, step)
    state = early_stopping.read_state(options.output_dir)
    if state:  # The early-stopping figures beside the scores; the curve stays in its own file.
        results.update({key: value for key, value in state.items() if key != "history"})
        results["epochs"] = state["best_epochs"]
    evaluation.write_eval_results(options.output_dir, results, "%s_results.txt" % mode)
    evaluation.write_eval_summaries(options.output_dir, results, step, name=mode)
    return results


def run(options, callbacks=(), given=None):
    """The whole run: validate, read, train and/or score.

    Args:
      options: LmOptions.
      callbacks: passed to the training loop (trainer.train), after the held-out one.
      given: the flags given on the command line (a preset fills the others);
        default: those that differ from their defaults.

    Returns:
      {"eval": results, "test": results} for the modes run.
    """
    options = apply_preset(options, FAMILY.presets, given)
    options.validate()
    config = effective_config(options)
    found = sources(options)
    record = run_record.check_training_run(
        options, vocab_file=vocabulary_lib.identity(options.vocab_file, options.output_dir),
        train_file=training_data(options, found))
    freezer = FAMILY.freezer(options, config)
    strategy = process.prepare(options)
    vocabulary = vocabulary_lib.get(options.vocab_file, options.vocab_size, found.get("train"), options.output_dir)
    config = vocabulary_lib.fit_vocabulary(config, vocabulary)
    record["vocab_file"] = vocabulary.content_hash
    logging.info("Model: %s", config)
    trainer = None
    if options.do_train:
        built = {}
        loop_callbacks = list(callbacks)
        if options.early_stopping_patience:
            loop_callbacks.insert(0, held_out_callback(options, built, vocabulary, found))
        if not early_stopping.stopped_before(options.output_dir):
            schedule = Schedule(options.num_train_steps, options.num_warmup_steps, options.learning_rate_schedule,
                                config.hidden_size)
            trainer = trainer_lib.train(options, schedule, strategy,
                                        lm_task(options, config, vocabulary, found["train"], record, built),
                                        freezer, loop_callbacks)
    results = {}
    for mode in ("eval", "test"):
        if mode in found:
            results[mode] = evaluate(options, config, vocabulary, strategy, found[mode], trainer, mode)
    return results
