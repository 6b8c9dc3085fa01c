"""Translation throughput and peak memory: run_translation.py's model vs Model Garden and PyTorch.

Training (target tokens/s) and beam-search decoding (sentences/s), one table per --nmt_shape.
Usage, from the repository root:
  .venv/bin/python benchmarks/nmt_benchmark.py [--nmt_shape=small,base] [--nmt_dtypes=float32,bfloat16]
      [--nmt_parts=train,decode] [--nmt_norm_first] [--torch_python=/path/to/python] [--nmt_quick]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Translation".
"""

import dataclasses
import os
import re
import statistics
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app, flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from official.modeling import performance  # noqa: E402
from official.nlp.modeling.models import seq2seq_transformer as s2s  # noqa: E402

from nmt import presets  # noqa: E402
from nmt import task as translation  # noqa: E402
from nmt.config import NmtConfig  # noqa: E402
from nmt.family import FAMILY  # noqa: E402
from studies.freezing_nmt import experiments  # noqa: E402
from training import distribution  # noqa: E402
from training.presets import apply_preset  # noqa: E402
from training.training_options import Schedule  # noqa: E402

FLAGS = flags.FLAGS
OURS, OURS_XLA, MODEL_GARDEN, PYTORCH = "ours", "ours-xla", "model-garden", harness.PYTORCH
ALL, PEERS = (OURS, OURS_XLA, MODEL_GARDEN, PYTORCH), (MODEL_GARDEN, PYTORCH)
CONTENDERS = {"train": (OURS, OURS_XLA, MODEL_GARDEN), "decode": (OURS, MODEL_GARDEN)}
UNITS = {"train": "tgt tok/s", "decode": "sent/s"}
SEED, LENGTH_PENALTY = 1, 0.6
NO_EOS = -1  # outside the vocabulary: no hypothesis ever ends, every contender decodes the full length
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

harness.define_torch_python_flag()
harness.define_list_flag("nmt_shape", SHAPES, "small, base or both (one table each, in this order).")
harness.define_list_flag("nmt_dtypes", harness.DTYPES, "--dtype values.")
harness.define_list_flag("nmt_parts", UNITS, "What is measured: train, decode or both.")
flags.DEFINE_bool("nmt_norm_first", False, "Pre-norm instead of the presets' post-norm, in the TensorFlow "
                  "contenders (each stack then ends in a LayerNorm); the PyTorch peer (post-norm only) is skipped.")
flags.DEFINE_integer("nmt_steps_per_round", None, "Steps per loop call; default small 10, base 2.", lower_bound=1)
flags.DEFINE_integer("nmt_warmup_rounds", None, "Untimed rounds per contender; default 2.", lower_bound=1)
flags.DEFINE_integer("nmt_timed_rounds", None, "Timed rounds per contender; default small 7, base 3.", lower_bound=1)
flags.DEFINE_bool("nmt_quick", False, "A tiny model and batch, one warm-up and one timed round: checks that the "
                  "script runs; the figures mean nothing.")


def nmt_config(shape, quick, norm_first=False):
    """The shape's NmtConfig (the tiny model with `quick`), pre-norm with `norm_first`."""
    if quick:
        config = NmtConfig(**_QUICK_MODEL)
    elif shape == "small":  # freezing_nmt --scale=small's baseline row
        config = experiments.SMALL.config(experiments.rows(experiments.SMALL)[0]).replace(
            vocab_size=experiments.SMALL.vocab_size)
    else:
        config = presets.MODELS[_PRESETS[shape]].replace(vocab_size=presets.PRESETS[_PRESETS[shape]]["vocab_size"])
    if config.attention_head_size * config.num_attention_heads != config.hidden_size:
        raise ValueError("The peers' head size is d / heads; %s has d_p = %d." % (shape, config.attention_head_size))
    return config.replace(norm_first=norm_first)


def settings(shape):
    """The children's spec of a shape: its sizes (--nmt_quick's, then the round flags given) and its NmtConfig."""
    s = dict(SHAPES[shape], shape=shape, seed=SEED, length_penalty=LENGTH_PENALTY)
    s.update(_QUICK if FLAGS.nmt_quick else {})
    s.update({name: FLAGS["nmt_" + name].value for name in ("steps_per_round", "warmup_rounds", "timed_rounds")
              if FLAGS["nmt_" + name].value is not None})
    return dict(s, config=dataclasses.asdict(nmt_config(shape, FLAGS.nmt_quick, FLAGS.nmt_norm_first)))


def nmt_options(s, dtype, jit_compile=False):
    """run_translation's options for the shape's preset (freezing_nmt's at small), with this benchmark's sizes."""
    given = dict(output_dir=tempfile.mkdtemp(prefix="nmt_benchmark_"), train_batch_size=s["batch"],
                 iterations_per_loop=s["steps_per_round"], dtype=dtype, beam_size=s["beam"],
                 length_penalty=LENGTH_PENALTY, max_decode_length=s["decode_length"], jit_compile=jit_compile,
                 random_seed=SEED)
    if s["shape"] == "small":
        scale = experiments.SMALL
        given.update(learning_rate=scale.learning_rate, num_warmup_steps=scale.num_warmup_steps,
                     num_train_steps=scale.num_train_steps)
    options = translation.NmtOptions(preset=_PRESETS[s["shape"]], do_train=True, **given)
    return apply_preset(options, presets.PRESETS, set(given) | {"preset", "do_train"})


def build_ours(config, options, s, dataset, source_ids):
    """run_translation's compiled training loop, or its Translator's compiled beam search: (run, parameters)."""
    if s["part"] == "decode":
        model = FAMILY.build_model(config)
        vocabulary = types.SimpleNamespace(bos_id=child.BOS_ID, eos_id=NO_EOS, processor=lambda: None)
        translate = translation.Translator(model, vocabulary, options)._translate  # pylint: disable=protected-access
        return lambda: _decoded_length(translate(source_ids).numpy(), True, options, "ours"), model.count_params()
    schedule = Schedule(options.num_train_steps, options.num_warmup_steps, options.learning_rate_schedule,
                        config.hidden_size, options.adam_beta2)
    task = translation.translation_task(options, config, None, None, {})
    return harness.trainer_round(options, schedule, distribution.get_strategy(options), task,
                                 FAMILY.freezer(options, config), dataset)


def build_model_garden(config, options, s, dataset, source_ids):
    """Seq2SeqTransformer (attention biases, eos never emitted): (run its training loop or beam search, parameters)."""
    def stack(cls, layers):
        return cls(num_layers=layers, num_attention_heads=config.num_attention_heads,
                   intermediate_size=config.intermediate_size, activation=config.hidden_act,
                   dropout_rate=config.hidden_dropout_prob, attention_dropout_rate=config.attention_probs_dropout_prob,
                   use_bias=True, norm_first=config.norm_first, norm_epsilon=1e-6)

    model = s2s.Seq2SeqTransformer(
        vocab_size=config.vocab_size, embedding_width=config.hidden_size, dropout_rate=config.hidden_dropout_prob,
        padded_decode=False, decode_max_length=options.max_decode_length, beam_size=options.beam_size,
        alpha=options.length_penalty, encoder_layer=stack(s2s.TransformerEncoder, config.num_encoder_layers),
        decoder_layer=stack(s2s.TransformerDecoder, config.num_decoder_layers), eos_id=NO_EOS)

    def loss_of(batch):
        logits = model(dict(inputs=batch["source_ids"], targets=batch["target_ids"]), training=True)
        return translation.translation_losses(dict(logits=logits), batch, options.label_smoothing)["loss"]

    # Creates the variables (and the dropout generators) eagerly, on a batch of its own: every contender's
    # timed loop starts at the first batch.
    loss_of(next(iter(dataset)))
    if s["part"] == "decode":
        translate = tf.function(lambda ids: model(dict(inputs=ids))["outputs"],
                                input_signature=[tf.TensorSpec([None, None], tf.int32)])  # ours' signature
        return (lambda: _decoded_length(translate(source_ids).numpy(), False, options, "Model Garden"),
                model.count_params())
    optimizer = tf_keras.optimizers.Adam(learning_rate=options.learning_rate, beta_1=0.9, beta_2=options.adam_beta2,
                                         epsilon=1e-9)
    return (harness.training_round(loss_of, model.trainable_variables, optimizer, dataset, s["steps_per_round"]),
            model.count_params())


def _decoded_length(ids, with_bos, options, name):
    """max_decode_length once `ids` [batch, positions] (bos first if with_bos) are that long; else AssertionError."""
    if ids.shape[1] != options.max_decode_length + with_bos:
        raise AssertionError("%s decoded %d positions, not %d: the search stopped early."
                             % (name, ids.shape[1], options.max_decode_length + with_bos))
    return options.max_decode_length


def classify(error):
    """("OOM" or "failed", a short reason) of what building or running a contender raised; None: a bug, raised.

    TensorFlow's errors; TypeError and ValueError: tracing an ill-typed graph; AssertionError: an early stop.
    """
    if not isinstance(error, (tf.errors.OpError, TypeError, ValueError, MemoryError, AssertionError)):
        return None
    message = getattr(error, "message", None) or str(error)
    found = re.search(r"OOM when allocating tensor with shape\s*\[[^\]]*\]", message)
    if found:
        return "OOM", found.group(0)
    lines = [line.strip() for line in message.splitlines() if line.strip()] or [""]
    # In autograph's trace ("in user code:") the error ("TypeError: ...") is last.
    reason = lines[-1] if lines[0] == "in user code:" else "%s: %s" % (type(error).__name__, " ".join(lines[:2]))
    return "OOM" if isinstance(error, (tf.errors.ResourceExhaustedError, MemoryError)) else "failed", reason[:300]


def build_contender(contender, dtype, s):
    """In a child process: one contender of a row, in a process set up as process.prepare sets run_translation's.

    Seeds, dropout from tf.random.Generator objects, and the dtype's policy for the process's lifetime
    (some layers create sub-layers on their first call, in the first round).
    """
    tf_keras.utils.set_random_seed(SEED)
    tf_keras.backend.experimental.enable_tf_random_generator()
    performance.set_mixed_precision_policy(tf.as_dtype(dtype))
    config = NmtConfig(**s["config"])
    batches = child.translation_batches(SEED, config.vocab_size, s["batch"], s["source"], s["target"])
    dataset = tf.data.Dataset.from_tensor_slices(batches).repeat().prefetch(1)  # the same batches in every contender
    source_ids = tf.constant(child.decode_sources(SEED, config.vocab_size, s["decode_batch"], s["source"]))
    build = build_model_garden if contender == MODEL_GARDEN else build_ours
    return build(config, nmt_options(s, dtype, jit_compile=contender == OURS_XLA), s, dataset, source_ids)


def measure(s, part, dtype, torch_python=None):
    """Runs a row's contenders in turns, the first round all at once, a failing one dropping out (take_turns)."""
    commands = harness.contender_commands(__file__, CONTENDERS[part], dtype, dict(s, part=part), torch_python,
                                          "translation_step")
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"], together_first=True, tolerate=True)


def table_row(part, dtype, results, per_round, all_names):
    """(the printed cells of a row, best ours or None, {peer: paired ours/peer}, best peer or None)."""
    rates = {name: per_round / statistics.median(result["seconds"])
             for name, result in results.items() if result["failure"] is None}
    ours = max([n for n in (OURS, OURS_XLA) if n in rates], key=rates.get, default=None)
    peer = max([n for n in PEERS if n in rates], key=rates.get, default=None)
    ratios = {n: harness.paired_ratio(results[n]["seconds"], results[ours]["seconds"])
              for n in PEERS if n in rates and ours}
    row = [part, dtype, UNITS[part]] + [
        "-" if n not in results else results[n]["failure"][0] if results[n]["failure"] else "%.2f" % rates[n]
        for n in all_names]
    row += ["%.0f" % (results[n]["peak_kb"] / 1024) if "peak_kb" in results.get(n, {}) else "-" for n in all_names]
    row += [ours or "-"] + ["%.3f" % ratios[n] if n in ratios else "-" for n in all_names if n in PEERS]
    return row + ["%.3f (%s)" % (ratios[peer], peer) if peer in ratios else "-"], ours, ratios, peer


def run_shape(shape, torch_python):
    """Measures and prints one shape's table and its lowest ours/best peer."""
    s = settings(shape)
    c = s["config"]
    name = {"small": "freezing_nmt --scale=small's model (transformer-tiny at 1/4)", "base": "transformer-base"}[shape]
    print("\n== --nmt_shape=%s" % shape)
    print("model: %s: d=%d, %d+%d layers, %d heads of d_p=%d, FFN %d, V=%d, %s" % (
        "tiny (--nmt_quick: figures mean nothing)" if FLAGS.nmt_quick else name, c["hidden_size"],
        c["num_encoder_layers"], c["num_decoder_layers"], c["num_attention_heads"],
        c["hidden_size"] // c["num_attention_heads"], c["intermediate_size"], c["vocab_size"],
        "pre-norm" if c["norm_first"] else "post-norm"))
    print("train: batch %(batch)d pairs x %(source)d source / %(target)d target tokens (real lengths from half to "
          "full), %(steps_per_round)d steps per round; decode: %(decode_batch)d sentences, beam %(beam)d, "
          "%(decode_length)d tokens (eos never emitted)" % s)
    print("rounds: one child process per contender and row, %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
          "rounds each, the first in all at once, the others taking turns" % s)
    target_ids = child.translation_batches(SEED, c["vocab_size"], s["batch"], s["source"], s["target"])["target_ids"]
    per_round = {"train": float((target_ids != child.PAD_ID).sum()) / child.NUM_BATCHES * s["steps_per_round"],
                 "decode": float(s["decode_batch"])}
    all_names = [n for n in ALL if n == PYTORCH and torch_python or any(n in CONTENDERS[p] for p in FLAGS.nmt_parts)]
    rows, notes, lowest, ours_failed = [], [], [], []
    for dtype in FLAGS.nmt_dtypes:
        for part in FLAGS.nmt_parts:
            results = harness.run_row("%s %s" % (dtype, part), measure, s, part, dtype, torch_python,
                                      value_name="loss" if part == "train" else "decoded length")
            row, ours, ratios, peer = table_row(part, dtype, results, per_round[part], all_names)
            rows.append(row)
            if ours is None:
                ours_failed.append("%s %s" % (part, dtype))
            elif peer in ratios:
                lowest.append((ratios[peer], "%s %s" % (part, dtype)))
            notes += ["%s %s, %s %s: %s" % ((part, dtype, n) + result["failure"])
                      for n, result in results.items() if result["failure"]]
    peers = [n for n in all_names if n in PEERS]
    harness.print_table([
        "%s: target tokens/s (training) or sentences/s (decoding) of the median round; peak MB = VmHWM of each "
        "contender's own process;" % shape,
        "ours = the faster of ours and ours-xla in the row (\"ours is\"); ours/X = median over rounds of X's round "
        "time / ours' (> 1: ours faster)"],
        ["part", "dtype", "unit"] + all_names + ["%s MB" % n for n in all_names] + ["ours is"]
        + ["ours/%s" % peer for peer in peers] + ["ours/best peer"], rows)
    for note in notes:
        print(note)
    print("%s: the lowest ours/best peer over the rows: %s%s" % (
        shape, ("%.3f (%s)" % min(lowest)) if lowest else "none (no row where ours and a peer both ran)",
        "; ours failed in: %s" % ", ".join(ours_failed) if ours_failed else ""), flush=True)


def run_shapes(torch_python):
    for shape in FLAGS.nmt_shape:
        run_shape(shape, torch_python)


def main(argv):
    del argv  # Unused.
    return harness.main_of(
        build_contender, "NMT throughput: run_translation.py's step and beam search (ours, ours-xla) vs Model Garden's "
        "Seq2SeqTransformer and Hugging Face's MarianMTModel", [],
        "Hugging Face MarianMTModel + torch.compile (training), generate (decoding)", run_shapes, classify,
        peer_refused="MarianMTModel is post-norm only (--nmt_norm_first)" if FLAGS.nmt_norm_first else None)


if __name__ == "__main__":
    app.run(main)
