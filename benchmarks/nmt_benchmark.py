"""Translation throughput: run_translation.py's model vs Model Garden's Seq2SeqTransformer, transformer-base.

The transformer-base preset (nmt/presets.py: d = 512, 6 + 6 layers,
8 heads, FFN 2048, post-norm, dropout 0.1, V = 32000), in float32 and
bfloat16 (mixed precision, float32 variables), on random batches of 32
sentence pairs padded to 32 source and 32 target tokens, each side's real
length drawn from half to the full length (the last real token is eos).

Training (target tokens/s, padding excluded):
  "ours" is the step run_translation.py runs: the Task of
  `training.translation.translation_task` (TransformerNmt, label-smoothed
  cross-entropy with smoothing 0.1) built by `training.trainer.Trainer` (the
  preset's options: Adam (0.9, 0.98, 1e-9), the inverse_sqrt schedule, the
  freezing plan, OneDeviceStrategy, the compiled loop of
  `Trainer.make_loop()`), with make_dataset replaced by the random batches.
  Model Garden's is `official.nlp.modeling.models.Seq2SeqTransformer` with
  its TransformerEncoder and TransformerDecoder (norm_first=False,
  use_bias=True in attention as ours has, dropout 0.1 on embeddings,
  sub-layer outputs and attention probabilities), tf_keras Adam (0.9, 0.98,
  1e-9) at a constant learning rate, the same loss function
  (`translation.translation_losses`) on the same batches (Seq2SeqTransformer
  shifts target_ids right itself), in a tf.function loop over tf.range.
  What differs in the networks: ours adds an output bias to the tied output
  layer; Seq2SeqTransformer normalises each stack's output once more even
  post-norm (two LayerNorms in all); the layer code (our DecoderBlock, Model
  Garden's TransformerDecoderBlock; both use CachedAttention and
  MultiHeadAttention) and initialisers.

Decoding (sentences/s): the first batch's 32 source sentences translated by
beam search (beam 4, length penalty 0.6, at most 32 target tokens), with
untrained random weights. "ours" is `training.translation.Translator`'s
compiled `TransformerNmt.translate` (what run_translation.py decodes the
dev and test sets with); Model Garden's is Seq2SeqTransformer called with
only `inputs` (beam_size 4, alpha 0.6, decode_max_length 32,
padded_decode=False), in a tf.function with the same input signature. Both
run Model Garden's `sequence_beam_search`. So that both decode the full
32 steps whatever the random weights pick, both get an eos id outside the
vocabulary (-1): no hypothesis ever ends, the search stops at the maximum
length only; the script checks that both outputs have that length.

Contenders are built in this one process and run in alternation (ours,
Model Garden, ours, ...), one loop call each per round, so that load drift
on a shared machine affects both alike; the first round (which traces) is not
timed, the figure is the median of the timed rounds. As run_translation.py,
dropout draws from tf.random.Generator objects
(`enable_tf_random_generator`), for both contenders. The goal reported
against: ours / Model Garden >= 0.95, for training and for decoding, in each
dtype. A contender that runs out of memory (TensorFlow's
ResourceExhaustedError) is shown as OOM; one that cannot be built, traced or
run otherwise (another TensorFlow error, or a TypeError or ValueError while
tracing) as failed; the reasons are printed under the table, and ours failing
misses the goal.

--nmt_norm_first compares the pre-norm variant instead (both contenders).

Usage, from the repository root:
  .venv/bin/python benchmarks/nmt_benchmark.py [--nmt_dtypes=float32,bfloat16] [--nmt_parts=train,decode]
      [--nmt_norm_first] [--nmt_quick]
"""

import dataclasses
import gc
import os
import re
import statistics
import sys
import tempfile
import time
import types

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from training import onednn  # noqa: E402

onednn.enable()  # before TensorFlow loads, as the entry points do

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("nmt_dtypes", ["float32", "bfloat16"], "--dtype values.")
flags.DEFINE_list("nmt_parts", ["train", "decode"], "What is measured: train, decode or both.")
flags.DEFINE_integer("nmt_batch_size", 32, "Sentence pairs per training step, sentences per decoded batch.")
flags.DEFINE_integer("nmt_source_length", 32, "Source tokens per sentence (padded length).")
flags.DEFINE_integer("nmt_target_length", 32, "Target tokens per sentence (padded length).")
flags.DEFINE_integer("nmt_beam_size", 4, "Beam size of decoding.")
flags.DEFINE_float("nmt_length_penalty", 0.6, "alpha of the length penalty of decoding.")
flags.DEFINE_integer("nmt_max_decode_length", 32, "Target tokens decoded per sentence (all of them: "
                     "see the module docstring).")
flags.DEFINE_bool("nmt_norm_first", False, "Pre-norm instead of the preset's post-norm, in both contenders "
                  "(each stack then ends in a LayerNorm in both).")
flags.DEFINE_integer("nmt_steps_per_round", 2, "Training steps per timed loop call.")
flags.DEFINE_integer("nmt_timed_rounds", 3, "Timed rounds per contender (after one untimed round).")
flags.DEFINE_bool("nmt_quick", False, "A tiny model and batch, one timed round: checks that the script runs; "
                  "the figures mean nothing.")

GOAL = 0.95
PRESET = "transformer-base"
NO_EOS = -1  # outside the vocabulary: no hypothesis ever ends (see the module docstring)
BOS_ID, EOS_ID = 2, 3  # the learned SentencePiece vocabulary's (tokenization/sentencepiece_vocabulary.py); 0 is padding
_NUM_BATCHES = 4
_QUICK_MODEL = dict(vocab_size=100, hidden_size=32, num_encoder_layers=1, num_decoder_layers=1,
                    num_attention_heads=2, intermediate_size=64)
_QUICK_SHAPES = dict(batch=2, source=8, target=8, decode=4)


def nmt_config(quick):
    """transformer-base with the preset's vocabulary (the tiny model with --nmt_quick), with --nmt_norm_first."""
    from nmt.config import NmtConfig
    from nmt import presets as nmt_presets

    if quick:
        config = NmtConfig(**_QUICK_MODEL)
    else:
        config = nmt_presets.MODELS[PRESET].replace(vocab_size=nmt_presets.PRESETS[PRESET]["vocab_size"])
    return config.replace(norm_first=FLAGS.nmt_norm_first)


def make_batches(vocab_size, batch_size, source_length, target_length, seed=1):
    """_NUM_BATCHES random batches in run_translation's schema (nmt/dataset.py), as numpy.

    Each side's real length is drawn from half to the full padded length; its
    last real token is eos, target_input_ids is bos + target_ids shifted right.
    """
    import numpy as np

    rng = np.random.default_rng(seed)

    def side(length):
        lengths = rng.integers(max(length // 2, 1), length + 1, size=(_NUM_BATCHES, batch_size, 1))
        positions = np.arange(length)[None, None, :]
        ids = rng.integers(4, vocab_size, size=(_NUM_BATCHES, batch_size, length), dtype=np.int32)
        ids = np.where(positions == lengths - 1, EOS_ID, ids)
        mask = (positions < lengths).astype(np.int32)
        return ids * mask, mask

    source_ids, _ = side(source_length)
    target_ids, target_mask = side(target_length)
    target_input_ids = np.concatenate([np.full_like(target_ids[..., :1], BOS_ID), target_ids[..., :-1]], -1)
    return dict(source_ids=source_ids, target_input_ids=target_input_ids * target_mask, target_ids=target_ids)


def make_dataset(batches):
    """(endless tf.data.Dataset of the batches, mean real target tokens per batch)."""
    import tensorflow as tf

    tokens = int((batches["target_ids"] != 0).sum()) / _NUM_BATCHES
    return tf.data.Dataset.from_tensor_slices(batches).repeat().prefetch(1), tokens


def nmt_options(dtype, batch_size, steps):
    """run_translation's options under --preset=transformer-base, with this benchmark's shapes."""
    from training.presets import apply_preset
    from nmt import presets as nmt_presets
    from nmt.task import NmtOptions

    given = dict(output_dir=tempfile.mkdtemp(prefix="nmt_benchmark_"), train_batch_size=batch_size,
                 iterations_per_loop=steps, dtype=dtype, beam_size=FLAGS.nmt_beam_size,
                 length_penalty=FLAGS.nmt_length_penalty, max_decode_length=FLAGS.nmt_max_decode_length)
    options = NmtOptions(preset=PRESET, do_train=True, **given)
    return apply_preset(options, nmt_presets.PRESETS, set(given) | {"preset", "do_train"})


def build_ours_training(config, options, dataset, steps):
    """run_translation's training step: returns a callable running `steps` steps."""
    import tensorflow as tf

    from nmt import model as transformer_nmt
    from nmt.parameter_groups import PARAMETER_GROUPS
    from training import distribution, run_setup
    from nmt import task as translation
    from training import trainer as trainer_lib
    from training.training_options import Schedule

    task = dataclasses.replace(translation.translation_task(options, config, None, None, {}),
                               make_dataset=lambda batch, context: dataset)
    freezer = run_setup.make_freezer(options, PARAMETER_GROUPS, config.num_layers,
                                     transformer_nmt.initializers(config))
    schedule = Schedule(options.num_train_steps, options.num_warmup_steps, options.learning_rate_schedule,
                        config.hidden_size, options.adam_beta2)
    trainer = trainer_lib.Trainer(options, schedule, distribution.get_strategy(options), task, freezer)
    loop = trainer.make_loop()
    return lambda: loop(trainer.iterator, tf.constant(steps)).numpy()


def model_garden_transformer(config, options):
    """Seq2SeqTransformer of the config's shape, norm_first and dropout, attention biases, eos never emitted."""
    from official.nlp.modeling.models import seq2seq_transformer as s2s

    def stack(cls, layers):
        return cls(num_layers=layers, num_attention_heads=config.num_attention_heads,
                   intermediate_size=config.intermediate_size, activation=config.hidden_act,
                   dropout_rate=config.hidden_dropout_prob,
                   attention_dropout_rate=config.attention_probs_dropout_prob, use_bias=True,
                   norm_first=config.norm_first, norm_epsilon=1e-6)

    return s2s.Seq2SeqTransformer(
        vocab_size=config.vocab_size, embedding_width=config.hidden_size,
        dropout_rate=config.hidden_dropout_prob, padded_decode=False, decode_max_length=options.max_decode_length,
        beam_size=options.beam_size, alpha=options.length_penalty,
        encoder_layer=stack(s2s.TransformerEncoder, config.num_encoder_layers),
        decoder_layer=stack(s2s.TransformerDecoder, config.num_decoder_layers), eos_id=NO_EOS)


def build_model_garden_training(config, options, dataset, steps):
    """Seq2SeqTransformer's training step on the same batches and loss: returns a callable running `steps` steps."""
    import tensorflow as tf
    import tf_keras

    from nmt import task as translation

    model = model_garden_transformer(config, options)
    optimizer = tf_keras.optimizers.Adam(learning_rate=options.learning_rate, beta_1=0.9,
                                         beta_2=options.adam_beta2, epsilon=1e-9)
    iterator = iter(dataset)

    def loss_of(batch):
        logits = model(dict(inputs=batch["source_ids"], targets=batch["target_ids"]), training=True)
        return translation.translation_losses(dict(logits=logits), batch, options.label_smoothing)["loss"]

    loss_of(next(iterator))  # Creates the variables (and the dropout generators) eagerly.
    variables = model.trainable_variables
    optimizer.build(variables)

    @tf.function
    def loop(num_steps):
        total = 0.0
        for _ in tf.range(num_steps):
            with tf.GradientTape() as tape:
                loss = loss_of(next(iterator))
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            total += loss
        return total / tf.cast(num_steps, tf.float32)

    return lambda: loop(tf.constant(steps)).numpy()


def _check_length(ids, expected, name):
    if ids.shape[1] != expected:
        raise AssertionError("%s decoded %d positions, not %d: the search stopped early."
                             % (name, ids.shape[1], expected))


def build_ours_decoding(config, options, source_ids):
    """Translator's compiled translate (beam search), eos never emitted: returns a callable decoding the batch."""
    from nmt import task as translation

    model = translation.build_model(config)
    vocabulary = types.SimpleNamespace(bos_id=BOS_ID, eos_id=NO_EOS, processor=lambda: None)
    translate = translation.Translator(model, vocabulary, options)._translate  # pylint: disable=protected-access

    def run():
        ids = translate(source_ids).numpy()  # bos + max_decode_length tokens
        _check_length(ids, options.max_decode_length + 1, "ours")

    return run


def build_model_garden_decoding(config, options, source_ids, batches):
    """Seq2SeqTransformer's own beam search: returns a callable decoding the batch."""
    import tensorflow as tf

    model = model_garden_transformer(config, options)
    model(dict(inputs=batches["source_ids"][0], targets=batches["target_ids"][0]))  # Creates the variables.

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def translate(ids):
        return model(dict(inputs=ids))["outputs"]

    def run():
        ids = translate(source_ids).numpy()  # max_decode_length tokens, bos dropped
        _check_length(ids, options.max_decode_length, "Model Garden")

    return run


def _errors():
    """What building or running a contender may raise that the table reports (the others propagate).

    TensorFlow's errors at run time; TypeError and ValueError are what tracing
    a tf.function raises for an ill-typed graph.
    """
    import tensorflow as tf

    return tf.errors.OpError, TypeError, ValueError


def _failure(error):
    """("OOM" or "failed", a short reason) of an error: the allocation refused, or the message's start."""
    import tensorflow as tf

    message = getattr(error, "message", None) or str(error)
    found = re.search(r"OOM when allocating tensor with shape\s*\[[^\]]*\]", message)
    if found:
        return "OOM", found.group(0)
    lines = [line.strip() for line in message.splitlines() if line.strip()] or [""]
    if lines[0] == "in user code:":
        reason = lines[-1]  # autograph's trace; the error ("TypeError: ...") is last
    else:
        reason = "%s: %s" % (type(error).__name__, " ".join(lines[:2]))
    tag = "OOM" if isinstance(error, tf.errors.ResourceExhaustedError) else "failed"
    return tag, reason[:300]


def alternate(runs, rounds, failures):
    """{name: median seconds per call}: one call each per round, in turn, the first round untimed.

    A contender whose call raises one of `_errors()` is entered in `failures`
    (name -> (tag, reason)) and left out of the later rounds; the others go on.
    """
    import tensorflow as tf

    times = {name: [] for name in runs}
    for round_index in range(rounds + 1):
        for name, run in runs.items():
            if name in failures:
                continue
            start = time.perf_counter()
            try:
                run()
            except _errors() as error:
                failures[name] = _failure(error)
                continue
            if round_index:  # The first round traces.
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items() if name not in failures}


def measure(part, dtype, config, shapes, rounds):
    """({contender: target tokens/s or sentences/s}, {contender: (tag, reason)}) of `part` in `dtype`.

    A contender that cannot be built or run (`_errors()`) has no figure, and
    its failure instead.
    """
    import tensorflow as tf

    from benchmarks import benchmark_utils

    steps = FLAGS.nmt_steps_per_round
    batches = make_batches(config.vocab_size, shapes["batch"], shapes["source"], shapes["target"])
    runs, failures = {}, {}
    with benchmark_utils.dtype_policy(dtype):
        options = nmt_options(dtype, shapes["batch"], steps)
        options = dataclasses.replace(options, max_decode_length=shapes["decode"])
        if part == "train":
            dataset, tokens = make_dataset(batches)
            builders = {"ours": lambda: build_ours_training(config, options, dataset, steps),
                        "model_garden": lambda: build_model_garden_training(config, options, dataset, steps)}
            per_item = tokens * steps
        else:
            source_ids = tf.constant(batches["source_ids"][0])
            builders = {"ours": lambda: build_ours_decoding(config, options, source_ids),
                        "model_garden": lambda: build_model_garden_decoding(config, options, source_ids, batches)}
            per_item = shapes["batch"]
        for name, build in builders.items():
            try:
                runs[name] = build()
            except _errors() as error:
                failures[name] = _failure(error)
        per_call = alternate(runs, rounds, failures)
    del runs
    gc.collect()
    return {name: per_item / seconds for name, seconds in per_call.items()}, failures


_UNITS = {"train": "tgt tok/s", "decode": "sent/s"}
_NAMES = {"ours": "ours", "model_garden": "Model Garden"}


def main(_):
    import tf_keras

    from benchmarks import benchmark_utils

    quick = FLAGS.nmt_quick
    for part in FLAGS.nmt_parts:
        if part not in _UNITS:
            raise app.UsageError("--nmt_parts: %r is neither train nor decode." % part)
    shapes = dict(_QUICK_SHAPES) if quick else dict(
        batch=FLAGS.nmt_batch_size, source=FLAGS.nmt_source_length, target=FLAGS.nmt_target_length,
        decode=FLAGS.nmt_max_decode_length)
    rounds = 1 if quick else FLAGS.nmt_timed_rounds
    config = nmt_config(quick)
    # As run_setup.prepare does for run_translation.py: dropout draws from tf.random.Generator objects.
    tf_keras.backend.experimental.enable_tf_random_generator()
    print("NMT throughput, ours vs Model Garden's Seq2SeqTransformer, %s, %d usable CPUs (%s)" % (
        benchmark_utils.cpu_model(), benchmark_utils.usable_cpus(), ", ".join(benchmark_utils.cpu_flags())))
    print("model: %s (d=%d, %d+%d layers, %d heads, FFN %d, V=%d, %s)%s" % (
        "tiny" if quick else PRESET, config.hidden_size, config.num_encoder_layers, config.num_decoder_layers,
        config.num_attention_heads, config.intermediate_size, config.vocab_size,
        "pre-norm" if config.norm_first else "post-norm", " (--nmt_quick: figures mean nothing)" if quick else ""))
    print("train: batch %d pairs x %d source / %d target tokens, %d steps per round; decode: batch %d, beam %d, "
          "%d tokens (eos never emitted); median of %d rounds" % (
              shapes["batch"], shapes["source"], shapes["target"], FLAGS.nmt_steps_per_round, shapes["batch"],
              FLAGS.nmt_beam_size, shapes["decode"], rounds))
    print("%-9s %-7s %-10s %12s %13s %9s  %s" % ("dtype", "what", "unit", "ours", "Model Garden", "ratio",
                                                "goal (ratio >= %.2f)" % GOAL))
    verdicts, notes = [], []
    for dtype in FLAGS.nmt_dtypes:
        for part in FLAGS.nmt_parts:
            rates, failures = measure(part, dtype, config, shapes, rounds)
            ours, garden = ("%.2f" % rates[name] if name in rates else failures[name][0]
                            for name in ("ours", "model_garden"))
            if len(rates) == 2:
                ratio = "%.3f" % (rates["ours"] / rates["model_garden"])
                verdict = "n/a" if quick else ("met" if float(ratio) >= GOAL else "missed")
            else:
                ratio, verdict = "-", "n/a" if quick or "ours" in rates else "missed"
            verdicts.append(verdict)
            notes += ["%s %s, %s %s: %s" % (dtype, part, _NAMES[name], failures[name][0], failures[name][1])
                      for name in ("ours", "model_garden") if name in failures]
            print("%-9s %-7s %-10s %12s %13s %9s  %s" % (dtype, part, _UNITS[part], ours, garden, ratio, verdict),
                  flush=True)
    for note in notes:
        print(note)
    if quick:
        print("goal not judged with --nmt_quick")
    else:
        judged = [verdict for verdict in verdicts if verdict != "n/a"]
        print("goal met in %d of %d rows%s" % (
            judged.count("met"), len(judged), "; %d not judged (Model Garden failed)" % (len(verdicts) - len(judged))
            if len(judged) < len(verdicts) else ""))


if __name__ == "__main__":
    app.run(main)
