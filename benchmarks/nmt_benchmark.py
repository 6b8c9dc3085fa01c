"""Translation throughput and peak memory: run_translation.py's model vs Model Garden and PyTorch.

Shapes (--nmt_shape, one table each; "small,base" runs both, one after the other):
  small  the model of `reproduce_paper_tables.py --experiment=freezing_nmt --scale=small`
         (studies/freezing_nmt/experiments.py: `SMALL.config` of the baseline row): transformer-tiny's
         shape at a quarter, d = 64, 8 heads of d_p = 8, FFN 384, 3 encoder + 1 decoder layers, V =
         4000; training batch 128 pairs of up to 24 + 24 tokens; decoding 64 sentences of up to 24
         tokens, beam 4, 48 steps.
  base   the transformer-base preset (nmt/presets.py): d = 512, 6 + 6 layers, 8 heads, FFN 2048, V =
         32000; training batch 32 pairs of up to 32 + 32 tokens; decoding 32 sentences of up to 32
         tokens, beam 4, 32 steps.
Both: post-norm (--nmt_norm_first: pre-norm, for the TensorFlow contenders), ReLU, tied
source/target/output embeddings, dropout 0.1 (embeddings, sub-layer outputs, attention
probabilities; none inside the FFN), label smoothing 0.1, untrained weights. Rounds: small 10
training steps per round, 2 warm-up + 7 timed rounds; base 2 steps, 2 + 3 rounds (the flags below
override them). Every contender reads the same random batches (child.translation_batches).

Contenders, in float32 and bfloat16 (mixed precision: bfloat16 compute, float32 variables; PyTorch:
torch.autocast):
  ours          training: the step run_translation.py runs, built as it builds it: the Task of
                `nmt.task.translation_task` (TransformerNmt, label-smoothed cross entropy),
                `training.trainer.Trainer` with the preset's options (Adam (0.9, 0.98, 1e-9), the
                inverse_sqrt schedule; at small, freezing_nmt's learning rate and warm-up), the freezing
                plan (nothing frozen), OneDeviceStrategy, and the compiled loop of
                `Trainer.make_loop()`, with make_dataset replaced by the random batches. Decoding:
                `nmt.task.Translator`'s compiled beam search (`TransformerNmt.translate` in a
                tf.function), what run_translation.py decodes the dev and test sets with.
  ours-xla      training only: the same with --jit_compile (TrainingOptions.jit_compile).
  model-garden  `official.nlp.modeling.models.Seq2SeqTransformer` with its TransformerEncoder and
                TransformerDecoder (use_bias=True in attention as ours, the same norm_first and
                dropout), tf_keras Adam (0.9, 0.98, 1e-9) at a constant learning rate, the same loss
                function (`nmt.task.translation_losses`) on the same batches, in a tf.function loop over
                tf.range. Decoding: the model called with `inputs` only (beam_size, alpha 0.6,
                decode_max_length, padded_decode=False) in a tf.function of ours' input signature.
  pytorch       Hugging Face `MarianMTModel` of the same shape (post-norm only: not run with
                --nmt_norm_first), torch.compile, torch Adam; decoding with `model.generate`
                (torch_peers.translation_step). Run by the interpreter of --torch_python; skipped with
                a note when there is none.
What differs between the networks: ours adds a trained output bias to the tied output layer
(Marian's is a fixed buffer of zeros, Model Garden has none); Seq2SeqTransformer normalises each
stack's output once more even post-norm (two LayerNorms more); the layer code, the initialisers, and
the LayerNorm epsilon (1e-6; Marian 1e-5). The head size is d / heads in all three.

Decoding decodes the full length in every contender: the TensorFlow contenders run Model Garden's
`sequence_beam_search` with an eos id outside the vocabulary (-1), so that no hypothesis ever ends;
the PyTorch peer's generate has no eos id at all. Each child checks that its output has that many
positions (a contender that stops early fails). The length penalty (0.6) then weighs every
hypothesis alike.

Rounds: each (contender, dtype) of a row (part, dtype) runs in its own child process, taking turns
(harness.py); the first untimed round (tracing, XLA and torch.compile compilation, mostly
single-threaded) runs in all the row's children at once. One round is one loop call of
--nmt_steps_per_round training steps or one decode of the batch. The figure is target tokens/s
(padding excluded) or sentences/s of the median timed round; ours/X is the paired ratio of X's round
time to ours', where "ours" is the faster of ours and ours-xla in that row (named in the table).

The last line gives the lowest ours/best peer over the rows, and the rows where ours failed. A
contender that cannot be built, traced or run (a TensorFlow error, or a TypeError or ValueError
while tracing; PyTorch's RuntimeError), or runs out of memory, is shown as failed or OOM, its reason
printed under the table. (Model Garden's post-norm TransformerDecoderBlock fails under mixed
bfloat16: it adds its float32 LayerNorm output to a bfloat16 sub-layer output. --nmt_norm_first
compares it in bfloat16.)

Usage, from the repository root:
  .venv/bin/python benchmarks/nmt_benchmark.py [--nmt_shape=small,base] [--nmt_dtypes=float32,bfloat16]
      [--nmt_parts=train,decode] [--nmt_norm_first] [--torch_python=/path/to/python] [--nmt_quick]
"""

import dataclasses
import os
import re
import statistics
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402

FLAGS = flags.FLAGS
harness.define_torch_python_flag()
flags.DEFINE_list("nmt_shape", ["small", "base"], "small, base or both (one table each, in this order).")
flags.DEFINE_list("nmt_dtypes", ["float32", "bfloat16"], "--dtype values.")
flags.DEFINE_list("nmt_parts", ["train", "decode"], "What is measured: train, decode or both.")
flags.DEFINE_bool("nmt_norm_first", False, "Pre-norm instead of the presets' post-norm, in the TensorFlow "
                  "contenders (each stack then ends in a LayerNorm); the PyTorch peer (post-norm only) is skipped.")
flags.DEFINE_integer("nmt_steps_per_round", None, "Training steps per round (one loop call); default: the "
                     "shape's (small 10, base 2).")
flags.DEFINE_integer("nmt_warmup_rounds", None, "Untimed rounds per contender, >= 1 (the first traces and "
                     "compiles); default 2.")
flags.DEFINE_integer("nmt_timed_rounds", None, "Timed rounds per contender; default: the shape's (small 7, "
                     "base 3).")
flags.DEFINE_bool("nmt_quick", False, "A tiny model and batch, one warm-up and one timed round: checks that the "
                  "script runs; the figures mean nothing.")

OURS, OURS_XLA, MODEL_GARDEN, PYTORCH = "ours", "ours-xla", "model-garden", "pytorch"
OUR_CONTENDERS = (OURS, OURS_XLA)
PEERS = (MODEL_GARDEN, PYTORCH)
CONTENDERS = {"train": (OURS, OURS_XLA, MODEL_GARDEN), "decode": (OURS, MODEL_GARDEN)}
SEED = 1
LENGTH_PENALTY = 0.6
NO_EOS = -1  # outside the vocabulary: no hypothesis ever ends (see the module docstring)
BOS_ID, EOS_ID = child.BOS_ID, child.EOS_ID
UNITS = {"train": "tgt tok/s", "decode": "sent/s"}

SHAPES = {
    "small": dict(batch=128, source=24, target=24, decode_batch=64, decode_length=48, beam=4, steps_per_round=10,
                  warmup_rounds=2, timed_rounds=7),
    "base": dict(batch=32, source=32, target=32, decode_batch=32, decode_length=32, beam=4, steps_per_round=2,
                 warmup_rounds=2, timed_rounds=3),
}
_QUICK = dict(batch=2, source=8, target=8, decode_batch=2, decode_length=4, beam=4, steps_per_round=1,
              warmup_rounds=1, timed_rounds=1)
_QUICK_MODEL = dict(vocab_size=100, hidden_size=32, num_encoder_layers=1, num_decoder_layers=1,
                    num_attention_heads=2, intermediate_size=64)
_PRESETS = {"small": "transformer-tiny", "base": "transformer-base"}


def settings(shape):
    """The shape's settings (--nmt_quick's tiny ones, then the round flags given) as a dict."""
    if shape not in SHAPES:
        raise app.UsageError("--nmt_shape: %r is neither small nor base." % shape)
    s = dict(SHAPES[shape], shape=shape, quick=FLAGS.nmt_quick, norm_first=FLAGS.nmt_norm_first, seed=SEED,
             length_penalty=LENGTH_PENALTY)
    if FLAGS.nmt_quick:
        s.update(_QUICK)
    for name in ("steps_per_round", "warmup_rounds", "timed_rounds"):
        if FLAGS["nmt_" + name].value is not None:
            s[name] = FLAGS["nmt_" + name].value
    return s


def nmt_config(shape, quick, norm_first=False):
    """The shape's NmtConfig (the tiny model with `quick`), pre-norm with `norm_first`."""
    from studies.freezing_nmt import experiments
    from nmt import presets as nmt_presets
    from nmt.config import NmtConfig

    if quick:
        config = NmtConfig(**_QUICK_MODEL)
    elif shape == "small":
        scale = experiments.SMALL
        config = scale.config(experiments.rows(scale)[0]).replace(vocab_size=scale.vocab_size)
    else:
        config = nmt_presets.MODELS[_PRESETS[shape]].replace(
            vocab_size=nmt_presets.PRESETS[_PRESETS[shape]]["vocab_size"])
    if config.attention_head_size * config.num_attention_heads != config.hidden_size:
        raise ValueError("The peers' head size is d / heads; %s has d_p = %d." % (shape, config.attention_head_size))
    return config.replace(norm_first=norm_first)


def make_batches(vocab_size, batch_size, source_length, target_length, seed=SEED):
    """The training batches every contender reads (child.translation_batches), as numpy."""
    return child.translation_batches(seed, vocab_size, batch_size, source_length, target_length)


def make_dataset(batches):
    """An endless tf.data.Dataset of the batches."""
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(batches).repeat().prefetch(1)


def nmt_options(s, dtype, jit_compile=False):
    """run_translation's options for the shape's preset (freezing_nmt's at small), with this benchmark's sizes."""
    from studies.freezing_nmt import experiments
    from nmt import presets as nmt_presets
    from nmt.task import NmtOptions
    from training.presets import apply_preset

    given = dict(output_dir=tempfile.mkdtemp(prefix="nmt_benchmark_"), train_batch_size=s["batch"],
                 iterations_per_loop=s["steps_per_round"], dtype=dtype, beam_size=s["beam"],
                 length_penalty=LENGTH_PENALTY, max_decode_length=s["decode_length"], jit_compile=jit_compile,
                 random_seed=SEED)
    if s["shape"] == "small":
        scale = experiments.SMALL
        given.update(learning_rate=scale.learning_rate, num_warmup_steps=scale.num_warmup_steps,
                     num_train_steps=scale.num_train_steps)
    preset = _PRESETS[s["shape"]]
    options = NmtOptions(preset=preset, do_train=True, **given)
    return apply_preset(options, nmt_presets.PRESETS, set(given) | {"preset", "do_train"})


def build_ours_training(config, options, dataset, steps):
    """run_translation's training step: returns (a callable running `steps` steps -> mean loss, the model)."""
    import tensorflow as tf

    from nmt import task as translation
    from nmt.family import FAMILY
    from training import distribution
    from training import trainer as trainer_lib
    from training.training_options import Schedule

    task = dataclasses.replace(translation.translation_task(options, config, None, None, {}),
                               make_dataset=lambda batch, context: dataset)
    freezer = FAMILY.freezer(options, config)
    schedule = Schedule(options.num_train_steps, options.num_warmup_steps, options.learning_rate_schedule,
                        config.hidden_size, options.adam_beta2)
    trainer = trainer_lib.Trainer(options, schedule, distribution.get_strategy(options), task, freezer)
    loop = trainer.make_loop()
    num_steps = tf.constant(steps)
    return lambda: float(loop(trainer.iterator, num_steps).numpy()[0]), trainer.model


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
    """Seq2SeqTransformer's step on the same batches and loss: returns (a callable running `steps` steps, the model)."""
    import tensorflow as tf
    import tf_keras

    from nmt import task as translation

    model = model_garden_transformer(config, options)
    optimizer = tf_keras.optimizers.Adam(learning_rate=options.learning_rate, beta_1=0.9,
                                         beta_2=options.adam_beta2, epsilon=1e-9)
    iterator = iter(dataset)
    # The model reads its first batch when it builds (below), before the timed loop: so that every contender
    # starts its rounds at the first batch, the creation call gets a batch of its own.
    build_batch = next(iter(dataset))

    def loss_of(batch):
        logits = model(dict(inputs=batch["source_ids"], targets=batch["target_ids"]), training=True)
        return translation.translation_losses(dict(logits=logits), batch, options.label_smoothing)["loss"]

    loss_of(build_batch)  # Creates the variables (and the dropout generators) eagerly.
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

    num_steps = tf.constant(steps)
    return lambda: float(loop(num_steps).numpy()), model


class DecodedLengthError(AssertionError):
    """A contender's beam search stopped before the maximum length."""


def _check_length(ids, expected, name):
    if ids.shape[1] != expected:
        raise DecodedLengthError("%s decoded %d positions, not %d: the search stopped early."
                                 % (name, ids.shape[1], expected))


def build_ours_decoding(config, options, source_ids):
    """Translator's compiled translate (beam search), eos never emitted: returns (a callable decoding, the model)."""
    from nmt import task as translation
    from nmt.family import FAMILY

    model = FAMILY.build_model(config)
    vocabulary = types.SimpleNamespace(bos_id=BOS_ID, eos_id=NO_EOS, processor=lambda: None)
    translate = translation.Translator(model, vocabulary, options)._translate  # pylint: disable=protected-access

    def run():
        ids = translate(source_ids).numpy()  # bos + max_decode_length tokens
        _check_length(ids, options.max_decode_length + 1, "ours")
        return ids.shape[1] - 1

    return run, model


def build_model_garden_decoding(config, options, source_ids, batches):
    """Seq2SeqTransformer's own beam search: returns (a callable decoding the batch, the model)."""
    import tensorflow as tf

    model = model_garden_transformer(config, options)
    model(dict(inputs=batches["source_ids"][0], targets=batches["target_ids"][0]))  # Creates the variables.

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def translate(ids):
        return model(dict(inputs=ids))["outputs"]

    def run():
        ids = translate(source_ids).numpy()  # max_decode_length tokens, bos dropped
        _check_length(ids, options.max_decode_length, "Model Garden")
        return ids.shape[1]

    return run, model


def classify(error):
    """("OOM" or "failed", a short reason) of what building or running a contender raised; None: a bug, raised.

    TensorFlow's errors at run time; TypeError and ValueError are what tracing
    a tf.function raises for an ill-typed graph; DecodedLengthError a search
    that stopped early.
    """
    import tensorflow as tf

    if not isinstance(error, (tf.errors.OpError, TypeError, ValueError, MemoryError, DecodedLengthError)):
        return None
    message = getattr(error, "message", None) or str(error)
    found = re.search(r"OOM when allocating tensor with shape\s*\[[^\]]*\]", message)
    if found:
        return "OOM", found.group(0)
    lines = [line.strip() for line in message.splitlines() if line.strip()] or [""]
    if lines[0] == "in user code:":
        reason = lines[-1]  # autograph's trace; the error ("TypeError: ...") is last
    else:
        reason = "%s: %s" % (type(error).__name__, " ".join(lines[:2]))
    oom = isinstance(error, (tf.errors.ResourceExhaustedError, MemoryError))
    return "OOM" if oom else "failed", reason[:300]



def build_contender(contender, dtype, s):
    """In a child process: builds one contender of a row, as process.prepare does for run_translation.py.

    Seeds, dropout from tf.random.Generator objects, and the dtype's policy for the process's lifetime
    (some layers create sub-layers on their first call, in the first round).
    """
    import tensorflow as tf
    import tf_keras
    from official.modeling import performance

    tf_keras.utils.set_random_seed(SEED)
    tf_keras.backend.experimental.enable_tf_random_generator()
    performance.set_mixed_precision_policy(tf.as_dtype(dtype))
    config = nmt_config(s["shape"], s["quick"], s["norm_first"])
    options = nmt_options(s, dtype, jit_compile=contender == OURS_XLA)
    batches = make_batches(config.vocab_size, s["batch"], s["source"], s["target"])
    if s["part"] == "train":
        dataset = make_dataset(batches)
        build_training = build_model_garden_training if contender == MODEL_GARDEN else build_ours_training
        run, model = build_training(config, options, dataset, s["steps_per_round"])
    else:
        source_ids = tf.constant(child.decode_sources(SEED, config.vocab_size, s["decode_batch"], s["source"]))
        if contender == MODEL_GARDEN:
            run, model = build_model_garden_decoding(config, options, source_ids, batches)
        else:
            run, model = build_ours_decoding(config, options, source_ids)
    return run, model.count_params()


def child_command(s, config, part, contender, dtype, torch_python=None):
    """The command line of one contender's child process."""
    spec = dict(s, part=part)
    if contender == PYTORCH:
        spec["model"] = dict(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
                             num_encoder_layers=config.num_encoder_layers,
                             num_decoder_layers=config.num_decoder_layers, num_heads=config.num_attention_heads,
                             intermediate_size=config.intermediate_size)
        return harness.peer_command(torch_python, "translation_step", dtype, spec)
    return harness.child_command(__file__, contender, dtype, spec)


def contenders(part, torch_python):
    return CONTENDERS[part] + ((PYTORCH,) if torch_python else ())


def measure(s, config, part, dtype, torch_python=None):
    """Runs a row's contenders in turns, a failing one dropping out: {name: results} (harness.take_turns)."""
    commands = {name: child_command(s, config, part, name, dtype, torch_python)
                for name in contenders(part, torch_python)}
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"], together_first=True, tolerate=True)


def summarize(results, names, per_round):
    """The row's figures and ratios.

    Returns dict(rates {name: work per second of the median round}, best_ours (name or None), ratios
    {peer: paired ours/peer}, best_peer (name or None)).
    """
    rates = {name: per_round / statistics.median(results[name]["seconds"])
             for name in names if results[name]["failure"] is None}
    ours = [name for name in OUR_CONTENDERS if name in rates]
    peers = [name for name in PEERS if name in rates]
    best_ours = max(ours, key=rates.get) if ours else None
    best_peer = max(peers, key=rates.get) if peers else None
    ratios = {peer: harness.paired_ratio(results[peer]["seconds"], results[best_ours]["seconds"])
              for peer in peers} if best_ours else {}
    return dict(rates=rates, best_ours=best_ours, ratios=ratios, best_peer=best_peer)


def table_row(part, dtype, results, names, all_names, summary):
    """The printed cells of a row: figures, peak MB, ours' name and the ratios."""
    def figure(name):
        if name not in names:
            return "-"
        if results[name]["failure"]:
            return results[name]["failure"][0]
        return "%.2f" % summary["rates"][name]

    def peak(name):
        return "%.0f" % (results[name]["peak_kb"] / 1024) if name in names and "peak_kb" in results[name] else "-"

    ratios, best_peer = summary["ratios"], summary["best_peer"]
    row = [part, dtype, UNITS[part]] + [figure(name) for name in all_names] + [peak(name) for name in all_names]
    row.append(summary["best_ours"] or "-")
    row += ["%.3f" % ratios[peer] if peer in ratios else "-" for peer in all_names if peer in PEERS]
    return row + ["%.3f (%s)" % (ratios[best_peer], best_peer) if best_peer in ratios else "-"]


def describe(shape, s, config):
    """The lines that say what a shape's table measures."""
    name = {"small": "freezing_nmt --scale=small's model (transformer-tiny at 1/4)", "base": "transformer-base"}[shape]
    return [
        "model: %s: d=%d, %d+%d layers, %d heads of d_p=%d, FFN %d, V=%d, %s" % (
            "tiny (--nmt_quick: figures mean nothing)" if FLAGS.nmt_quick else name, config.hidden_size,
            config.num_encoder_layers, config.num_decoder_layers, config.num_attention_heads,
            config.attention_head_size, config.intermediate_size, config.vocab_size,
            "pre-norm" if config.norm_first else "post-norm"),
        "train: batch %(batch)d pairs x %(source)d source / %(target)d target tokens (real lengths from half to "
        "full), %(steps_per_round)d steps per round; decode: %(decode_batch)d sentences, beam %(beam)d, "
        "%(decode_length)d tokens (eos never emitted)" % s,
        "rounds: one child process per contender and row, %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
        "rounds each, the first in all at once, the others taking turns" % s,
    ]


def run_shape(shape, torch_python):
    """Measures and prints one shape's table and its lowest ours/best peer."""
    s = settings(shape)
    config = nmt_config(shape, FLAGS.nmt_quick, FLAGS.nmt_norm_first)
    print()
    print("== --nmt_shape=%s" % shape)
    for line in describe(shape, s, config):
        print(line)
    batches = make_batches(config.vocab_size, s["batch"], s["source"], s["target"])
    per_round = {"train": float((batches["target_ids"] != child.PAD_ID).sum()) / child.NUM_BATCHES
                 * s["steps_per_round"], "decode": float(s["decode_batch"])}
    all_names = [name for name in (OURS, OURS_XLA, MODEL_GARDEN, PYTORCH)
                 if any(name in contenders(part, torch_python) for part in FLAGS.nmt_parts)]
    rows, notes, ratios, ours_failed = [], [], [], []
    for dtype in FLAGS.nmt_dtypes:
        for part in FLAGS.nmt_parts:
            start = time.perf_counter()
            names = contenders(part, torch_python)
            results = measure(s, config, part, dtype, torch_python)
            print(harness.progress_line("%s %s" % (dtype, part), time.perf_counter() - start, results,
                                        "loss" if part == "train" else "decoded length"), flush=True)
            summary = summarize(results, names, per_round[part])
            rows.append(table_row(part, dtype, results, names, all_names, summary))
            if summary["best_ours"] is None:
                ours_failed.append("%s %s" % (part, dtype))
            elif summary["best_peer"] is not None:
                ratios.append((summary["ratios"][summary["best_peer"]], "%s %s" % (part, dtype)))
            notes += ["%s %s, %s %s: %s" % ((part, dtype, name) + results[name]["failure"])
                      for name in names if results[name]["failure"]]
    peers = [name for name in all_names if name in PEERS]
    harness.print_table([
        "%s: target tokens/s (training) or sentences/s (decoding) of the median round; peak MB = VmHWM of each "
        "contender's own process;" % shape,
        "ours = the faster of ours and ours-xla in the row (\"ours is\"); ours/X = median over rounds of X's round "
        "time / ours' (> 1: ours faster)"],
        ["part", "dtype", "unit"] + all_names + ["%s MB" % name for name in all_names] + ["ours is"]
        + ["ours/%s" % peer for peer in peers] + ["ours/best peer"], rows)
    for note in notes:
        print(note)
    lowest = ("%.3f (%s)" % min(ratios)) if ratios else "none (no row where ours and a peer both ran)"
    print("%s: the lowest ours/best peer over the rows: %s%s" % (
        shape, lowest, "; ours failed in: %s" % ", ".join(ours_failed) if ours_failed else ""), flush=True)


def main(argv):
    del argv  # Unused.
    if FLAGS.bench_child:
        return harness.serve_child(build_contender, classify)
    harness.check_among("nmt_parts", FLAGS.nmt_parts, UNITS)
    harness.check_among("nmt_dtypes", FLAGS.nmt_dtypes, ("float32", "bfloat16"))
    for s in [settings(shape) for shape in FLAGS.nmt_shape]:
        harness.check_rounds(nmt_warmup_rounds=s["warmup_rounds"], nmt_timed_rounds=s["timed_rounds"],
                             nmt_steps_per_round=s["steps_per_round"])
    torch_python, why_not = harness.torch_interpreter(FLAGS.torch_python)
    if torch_python and FLAGS.nmt_norm_first:
        torch_python, why_not = None, "MarianMTModel is post-norm only (--nmt_norm_first)"
    harness.print_header(
        "NMT throughput: run_translation.py's step and beam search (ours, ours-xla) vs Model Garden's "
        "Seq2SeqTransformer and Hugging Face's MarianMTModel",
        harness.torch_line(torch_python, why_not, "Hugging Face MarianMTModel + torch.compile (training), generate "
                           "(decoding)"))
    begin = time.perf_counter()
    for shape in FLAGS.nmt_shape:
        run_shape(shape, torch_python)
    print()
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
