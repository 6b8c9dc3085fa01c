"""The translation run behind run_translation.py: train, keep the best checkpoint, score BLEU, translate.

`NmtOptions` declares the command line (the original training flags under
their names, then ours); `run(options)` checks the parallel text, gets or
learns the joint SentencePiece vocabulary, trains `TransformerNmt` with the
shared loop (training/trainer.py: checkpoints, exact resume, freezing, mixed
precision, tf.distribute) and scores:

  --do_eval     the dev set: eval_results.txt, translations.dev.txt
  --do_predict  the test set: test_results.txt, translations.test.txt

Results (`key = value`):
  bleu, chrf          sacreBLEU corpus scores of the detokenized beam-search output
  loss                teacher-forced cross-entropy per target token (nats, eos
                      included, padding and label smoothing not)
  perplexity          exp(loss)
  num_tokens          target tokens scored; sentences: pairs translated
  global_step, epochs the step evaluated and the passes over the training pairs
                      it took (steps * train_batch_size / training pairs)

TensorBoard: output_dir/eval and output_dir/test hold the final scores. With
--do_train and --do_eval the dev set is also translated at every checkpoint
(every --save_checkpoints_steps), its curve in output_dir/dev: the checkpoint
with the best dev BLEU is kept in output_dir/best/, and --early_stopping_patience
stops training by training/early_stopping.py's rule (patience, and no rise
beyond noise). The final dev and test scores use output_dir/best/ when it exists.
"""

import dataclasses
import json
import math
import os
from typing import Optional

import tensorflow as tf
from absl import logging

import outputs
from checkpoints import tf1_checkpoint
from layers import cross_entropy
from nmt import dataset as nmt_dataset
from nmt import metrics
from nmt import model as transformer_nmt
from nmt import presets as nmt_presets
from nmt.config import NmtConfig
from nmt.family import FAMILY
from nmt.parallel_text import ParallelText
from options import Options, default_of, option
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training import early_stopping, evaluation, model_options, process, run_record
from training import trainer as trainer_lib
from training.early_stopping import BestCheckpoint, EarlyStoppingOptions
from training.model_options import HeadSizeOptions
from training.presets import apply_preset
from training.training_options import Schedule, ScheduleOptions, StepsOptions

LENGTH_CHECK_PAIRS = 10000


@dataclasses.dataclass(kw_only=True)
class NmtDataOptions(Options):
    """Where the parallel text lives (run_translation.py and reproduce_paper_tables.py's freezing_nmt)."""

    train_src: Optional[str] = option(None, "Training source sentences, one per line (files or globs, "
                                      "comma-separated), aligned with --train_tgt.", new=True)
    train_tgt: Optional[str] = option(None, "Training target sentences, aligned with --train_src.", new=True)
    dev_src: Optional[str] = option(None, "Dev source sentences for --do_eval.", new=True)
    dev_tgt: Optional[str] = option(None, "Dev target sentences (references).", new=True)
    test_src: Optional[str] = option(None, "Test source sentences for --do_predict, translated into "
                                     "translations.test.txt.", new=True)
    test_tgt: Optional[str] = option(None, "Test target sentences (references).", new=True)
    train_tsv: Optional[str] = option(
        None, "Training pairs as source<TAB>target[<TAB>...] lines (Tatoeba/Anki), instead of "
        "--train_src/--train_tgt.", new=True)
    dev_tsv: Optional[str] = option(None, "Dev pairs as TSV, instead of --dev_src/--dev_tgt.", new=True)
    test_tsv: Optional[str] = option(None, "Test pairs as TSV, instead of --test_src/--test_tgt.", new=True)
    source_language: str = option("src", "Source language code (recorded in the results).", new=True)
    target_language: str = option(
        "tgt", "Target language code: recorded, and \"zh\" selects sacreBLEU's Chinese tokenizer.", new=True)


@dataclasses.dataclass(kw_only=True)
class NmtOptions(EarlyStoppingOptions, StepsOptions, HeadSizeOptions, ScheduleOptions, NmtDataOptions):
    """The run_translation.py flags: the original training flags, then ours."""

    num_warmup_steps: int = default_of(StepsOptions, "num_warmup_steps", 16000)
    max_seq_length: int = option(
        128, "Training pairs with a side longer than this many sub-word tokens (with eos/bos) are "
        "skipped (the share is logged); dev and test sentences are never cut.", minimum=2)
    spm_model: Optional[str] = option(
        None, "A SentencePiece model (.model) for both languages. Without it a joint vocabulary of "
        "--vocab_size pieces is learned from the training text and saved as output_dir/spm.model.",
        new=True, path="file")
    vocab_size: int = option(32000, "Pieces of the joint vocabulary learned when there is no --spm_model.",
                             minimum=5, new=True)
    preset: Optional[str] = option(
        None, "transformer-base, transformer-big or transformer-tiny: the model and training of "
        "Bogoychev (2021)'s presets; flags given on the command line win.",
        choices=tuple(FAMILY.presets), new=True)
    model_config_file: Optional[str] = option(
        None, "JSON of the model (nmt/config.py keys: hidden_size, num_encoder_layers, "
        "num_decoder_layers, num_attention_heads, head_size, intermediate_size, ...); keys left out "
        "take the preset's (else transformer-base's) values.", new=True, path="file")
    label_smoothing: float = option(0.1, "Label smoothing of the training loss.", new=True)
    adam_beta2: float = option(0.98, "beta_2 of --optimizer=adam (transformer-big: 0.998).", new=True)
    beam_size: int = option(4, "Beam size of the translations.", minimum=1, new=True)
    length_penalty: float = option(
        0.6, "alpha of the length penalty ((5 + length) / 6) ** alpha; 0: none.", new=True)
    max_decode_length: int = option(256, "Most sub-word tokens generated per translation.", minimum=1, new=True)

    def validate(self):
        super().validate()
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError("--label_smoothing=%s must be in [0, 1)." % self.label_smoothing)
        for mode, split in (("do_train", "train"), ("do_eval", "dev"), ("do_predict", "test")):
            src, tgt, tsv = (getattr(self, "%s_%s" % (split, kind)) for kind in ("src", "tgt", "tsv"))
            if tsv and (src or tgt):
                raise ValueError("Give --%s_tsv or --%s_src/--%s_tgt, not both." % (split, split, split))
            if bool(src) != bool(tgt):
                raise ValueError("--%s_src and --%s_tgt go together (aligned files); one is missing."
                                 % (split, split))
            if getattr(self, mode) and not (tsv or src):
                raise ValueError("--%s needs --%s_tsv or --%s_src with --%s_tgt." % (mode, split, split, split))


def effective_config(options):
    """The run's NmtConfig: the preset's model (else transformer-base), --model_config_file's keys, --head_size.

    Raises:
      ValueError: for a bad config file.
    """
    config = nmt_presets.MODELS.get(options.preset, NmtConfig())
    if options.model_config_file:
        given = NmtConfig.from_json_file(options.model_config_file)
        with tf.io.gfile.GFile(options.model_config_file) as f:
            keys = json.load(f)
        config = config.replace(**{key: getattr(given, key) for key in keys if hasattr(given, key)})
    return model_options.with_head_size(config, options)


def check_padding_id(vocabulary, options):
    """The model reads id 0 as padding: refuses a vocabulary whose id 0 is a real piece."""
    if vocabulary.processor().pad_id() != transformer_nmt.PAD_ID:
        raise ValueError(
            "--spm_model=%s has no padding piece at id 0 (id 0 is %r); the model reads id 0 as padding. "
            "Train the SentencePiece model with --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3, or leave "
            "--spm_model out to learn one." % (options.spm_model or vocabulary.path,
                                              vocabulary.processor().IdToPiece(0)))


def corpus(options, split):
    """The ParallelText of a split ("train", "dev", "test") from its flags."""
    tsv = getattr(options, split + "_tsv")
    if tsv:
        return ParallelText.from_tsv(tsv, "--%s_tsv" % split)
    return ParallelText.from_files(getattr(options, split + "_src"), getattr(options, split + "_tgt"),
                                   "--%s_src" % split, "--%s_tgt" % split)


def corpora(options):
    """{split: (ParallelText, pairs)} of the splits the run uses; every file is read and checked here."""
    found = {}
    for split, wanted in (("train", options.do_train), ("dev", options.do_eval), ("test", options.do_predict)):
        if wanted:
            text = corpus(options, split)
            found[split] = (text, text.check())
            logging.info("%s: %d sentence pairs in %s", split, found[split][1], text.describe())
    return found


def translation_losses(outputs_, batch, label_smoothing=0.0, output_logits=None):
    """{"loss": label-smoothed cross-entropy per target token, "nll": without smoothing, "target_tokens"}.

    Smoothing spreads `label_smoothing` of each target's probability mass
    uniformly over the vocabulary: loss = (1 - e) * NLL + e * mean_v(-log p_v)
    (layers/cross_entropy.py, one softmax for both terms). Padding (target
    id 0) is left out: with the model's `output_logits`, the logits are made at
    the real target positions only (from outputs_["sequence_output"]), else
    outputs_["logits"] are read at every position and the padding weighted 0.
    """
    targets = batch["target_ids"]
    weights = tf.cast(tf.not_equal(targets, 0), tf.float32)
    tokens = tf.reduce_sum(weights)
    if output_logits is None:
        per_token, nll = cross_entropy.smoothed_cross_entropy(outputs_["logits"], targets, label_smoothing)
        per_token, nll = per_token * weights, nll * weights
    else:
        logits, labels = cross_entropy.at_real_positions(output_logits, outputs_["sequence_output"], targets,
                                                         targets)
        per_token, nll = cross_entropy.smoothed_cross_entropy(logits, labels, label_smoothing)
    denominator = tf.maximum(tokens, 1.0)
    return dict(loss=tf.reduce_sum(per_token) / denominator, nll=tf.reduce_sum(nll) / denominator,
                target_tokens=tokens)


def model_inputs(batch):
    return dict(source_ids=batch["source_ids"], target_input_ids=batch["target_input_ids"])


def translation_task(options, config, vocabulary, train_text, built, record=None):
    """The trainer's Task; `built` receives the model (the dev-BLEU callback needs it); `record` is the run's."""

    def build():
        built["model"] = FAMILY.build_model(config)
        return built["model"]

    return trainer_lib.Task(
        build_model=build,
        make_dataset=lambda batch_size, context: nmt_dataset.training_dataset(
            train_text, vocabulary, options.max_seq_length, batch_size, options.random_seed, context),
        model_inputs=model_inputs,
        compute_losses=lambda outputs_, batch: translation_losses(outputs_, batch, options.label_smoothing,
                                                                  built["model"].output_logits),
        loss_names=("loss", "nll", "target_tokens"),
        records=dict(FAMILY.config_records(config), **run_record.records(record)),
        tokens_name="target_tokens",
    )


class Translator:
    """Beam search and teacher-forced scoring of a model, compiled once per model."""

    def __init__(self, model, vocabulary, options):
        self.model, self.vocabulary, self.options = model, vocabulary, options
        self._processor = vocabulary.processor()
        spec = tf.TensorSpec([None, None], tf.int32)

        @tf.function(input_signature=[spec], autograph=False)
        def translate(source_ids):
            return model.translate(source_ids, vocabulary.bos_id, vocabulary.eos_id, options.beam_size,
                                   options.length_penalty, options.max_decode_length)[0]

        @tf.function(input_signature=[spec, spec, spec], autograph=False)
        def score(source_ids, target_input_ids, target_ids):
            outputs_ = model(dict(source_ids=source_ids, target_input_ids=target_input_ids), training=False)
            losses = translation_losses(outputs_, dict(target_ids=target_ids), output_logits=model.output_logits)
            return losses["nll"] * losses["target_tokens"], losses["target_tokens"]

        self._translate, self._score = translate, score

    def detokenize(self, ids):
        """Text of one decoded row: bos dropped, cut at eos."""
        ids = [int(i) for i in ids[1:]]
        if self.vocabulary.eos_id in ids:
            ids = ids[:ids.index(self.vocabulary.eos_id)]
        return self._processor.DecodeIds([i for i in ids if i != 0])

    def run(self, text, num_pairs):
        """(translations in input order, summed NLL, target tokens) of a ParallelText.

        Teacher-forced scoring reads the pairs in input order; beam search reads the
        sources longest first (`nmt_dataset.sources_by_length`), so that a batch's
        sentences end together.
        """
        translations = [None] * num_pairs
        total_nll, tokens = 0.0, 0
        for batch in nmt_dataset.evaluation_dataset(text, self.vocabulary, self.options.eval_batch_size):
            nll, count = self._score(batch["source_ids"], batch["target_input_ids"], batch["target_ids"])
            total_nll, tokens = total_nll + float(nll), tokens + int(count)
        batches = nmt_dataset.sources_by_length(text, self.vocabulary, self.options.eval_batch_size)
        for number, (indices, source_ids) in enumerate(batches, 1):
            for index, row in zip(indices, self._translate(source_ids).numpy()):
                translations[index] = self.detokenize(row)
            if number % 20 == 0:
                logging.info("Translated %d of %d sentences.", min(number * self.options.eval_batch_size,
                                                                   num_pairs), num_pairs)
        return translations, total_nll, tokens


def score_split(options, translator, text, num_pairs, split, step, epochs):
    """Translates and scores one split; writes translations.<split>.txt.

    Returns:
      (results, the text written): results is a dict of BLEU, chrF, loss and perplexity.
    """
    translations, total_nll, tokens = translator.run(text, num_pairs)
    references = [target for _, target in text.python_pairs()]
    scores = metrics.corpus_scores(translations, references, options.target_language)
    written = "".join(line + "\n" for line in translations)
    outputs.write_text(os.path.join(options.output_dir, "translations.%s.txt" % split), written)
    loss = total_nll / max(tokens, 1)
    return dict(bleu=scores["bleu"], chrf=scores["chrf"], bleu_signature=scores["bleu_signature"],
                loss=loss, perplexity=math.exp(min(loss, 700.0)), num_tokens=tokens, sentences=num_pairs,
                global_step=step, epochs=epochs,
                language_pair="%s-%s" % (options.source_language, options.target_language)), written


def dev_bleu_callback(options, built, vocabulary, dev, epochs_of):
    """The BestCheckpoint of a translation run: dev BLEU, its beam-search translations remembered."""
    dev_text, dev_pairs = dev
    translators = []

    def evaluate(step):
        if not translators:
            translators.append(Translator(built["model"], vocabulary, options))
        return score_split(options, translators[0], dev_text, dev_pairs, "dev", step, epochs_of(step))

    return BestCheckpoint(options, lambda: tf1_checkpoint.model_tensors(built["model"]), evaluate, "bleu",
                          higher_is_better=True, curve=("global_step", "epochs", "bleu", "chrf"), label="Dev BLEU")


def run(options, callbacks=(), given=None):
    """The whole run: validate, read, train and/or translate and score.

    Args:
      options: NmtOptions.
      callbacks: passed to the training loop (trainer.train), after the dev-BLEU one.
      given: the flags given on the command line (a preset fills the others);
        default: those that differ from their defaults.

    Returns:
      {"dev": results, "test": results} for the splits scored.
    """
    options = apply_preset(options, FAMILY.presets, given)
    options.validate()
    config = effective_config(options)
    found = corpora(options)
    data = {}
    if "train" in found:  # Recorded under the flag that names it.
        text = found["train"][0]
        data["train_tsv" if text.tsv_files else "train_src"] = run_record.files_summary(
            text.tsv_files + text.source_files + text.target_files)
    record = run_record.check_training_run(
        options, spm_model=vocabulary_lib.identity(options.spm_model, options.output_dir), **data)
    freezer = FAMILY.freezer(options, config)
    strategy = process.prepare(options)
    train = found.get("train")
    vocabulary = vocabulary_lib.get(options.spm_model, options.vocab_size, train[0] if train else None,
                                    options.output_dir, flag="--spm_model")
    check_padding_id(vocabulary, options)
    config = vocabulary_lib.fit_vocabulary(config, vocabulary)
    record["spm_model"] = vocabulary.content_hash
    logging.info("Model: %s", config)

    def epochs_of(step):
        return step * options.train_batch_size / train[1] if train else 0.0

    trainer = best = None
    if options.do_train:
        too_long, looked_at = nmt_dataset.count_too_long(train[0], vocabulary, options.max_seq_length,
                                                         LENGTH_CHECK_PAIRS)
        if too_long == looked_at:
            raise ValueError("Every one of the first %d training pairs has a side longer than --max_seq_length=%d "
                             "tokens: nothing to train on." % (looked_at, options.max_seq_length))
        if too_long:
            logging.warning("%d of the first %d training pairs (%.1f%%) have a side longer than "
                            "--max_seq_length=%d tokens and are skipped in training.", too_long, looked_at,
                            100.0 * too_long / looked_at, options.max_seq_length)
        built = {}
        loop_callbacks = list(callbacks)
        if "dev" in found:
            best = dev_bleu_callback(options, built, vocabulary, found["dev"], epochs_of)
            loop_callbacks.insert(0, best)
        if not early_stopping.stopped_before(options.output_dir):
            schedule = Schedule(options.num_train_steps, options.num_warmup_steps, options.learning_rate_schedule,
                                config.hidden_size, options.adam_beta2)
            trainer = trainer_lib.train(options, schedule, strategy,
                                        translation_task(options, config, vocabulary, train[0], built, record),
                                        freezer, loop_callbacks)
    results = {}
    if "dev" in found or "test" in found:
        model, step = early_stopping.best_model(options, strategy, lambda: FAMILY.build_model(config), trainer)
        translator = Translator(model, vocabulary, options)
        for split, name in (("dev", "eval"), ("test", "test")):
            if split == "dev" and best and best.best_of_this_process and best.best_of_this_process[0] == step:
                # Translated at that step during training: the same weights give the same translations.
                _, results[split], translations = best.best_of_this_process
                outputs.write_text(os.path.join(options.output_dir, "translations.dev.txt"), translations)
            elif split in found:
                results[split], _ = score_split(options, translator, found[split][0], found[split][1], split,
                                                step, epochs_of(step))
            if split in found:
                # The early-stopping figures beside the scores; the curve stays in its own file.
                results[split].update({key: value for key, value in early_stopping.read_state(options.output_dir).items()
                                       if key != "history"})
                evaluation.write_eval_results(options.output_dir, results[split], "%s_results.txt" % name)
                evaluation.write_eval_summaries(options.output_dir, results[split], step, name=name)
    return results
