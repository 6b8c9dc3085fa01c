"""Inference throughput and peak memory: our prediction paths vs Model Garden and PyTorch.

The encoder's forward pass at BERT's inference shapes, outputs fetched to the host as float32.
Usage, from the repository root:
  .venv/bin/python benchmarks/inference_benchmark.py [--quick] [--torch_python=...]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Inference".
"""

import functools
import gc
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app, flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  pylint: disable=unused-import  (the SavedModel's tokenizer ops)
import tf_keras  # noqa: E402

import modeling  # noqa: E402
from feature_extraction import feature_extractor  # noqa: E402
from serving import export  # noqa: E402
from training import inference, onednn  # noqa: E402

FLAGS = flags.FLAGS
OURS, TUNED, SAVEDMODEL, BASELINE, PYTORCH = "ours", "ours_tuned", "savedmodel", "baseline", harness.PYTORCH

harness.define_bert_shape_flags()
harness.define_torch_python_flag()
flags.DEFINE_integer("inference_batch_size", 32, "Sequences per forward call.", lower_bound=1)
flags.DEFINE_integer("forward_calls", 1, "Forward calls per timed round.", lower_bound=1)
flags.DEFINE_integer("inference_warmup_rounds", 1, "Untimed rounds per contender (the first traces).", lower_bound=1)
flags.DEFINE_integer("inference_timed_rounds", 7, "Timed rounds per contender.", lower_bound=1)
harness.define_list_flag("inference_dtypes", harness.DTYPES, "Compute dtypes to time.")

_QUICK = dict(batch_size=4, forward_calls=1, warmup_rounds=1, timed_rounds=1)


def _settings():
    """The flag values in effect (with --quick applied) as a dict: the children's spec."""
    return harness.bert_settings(["forward_calls"], _QUICK, batch_size=FLAGS.inference_batch_size,
                                 warmup_rounds=FLAGS.inference_warmup_rounds, timed_rounds=FLAGS.inference_timed_rounds)


def _inputs(s):
    """The batch every contender runs: three int32 arrays [batch, seq] (some padding, two segments)."""
    batch = child.pretraining_batches(s["model_seed"], s["batch_size"], s["seq_length"], 1, s["vocab_size"])
    return [batch[name][0] for name in ("input_ids", "input_mask", "segment_ids")]


def _bert(s, dtype):
    """Our BertModel under the --dtype policy, built (seeded weights) as the entry points build it."""
    with harness.dtype_policy(dtype):
        tf_keras.utils.set_random_seed(s["model_seed"])
        return modeling.build_model(modeling.BertModel(harness.bert_config(s)))


def _build_ours(s, dtype, jit_compile):
    """extract_features' and --do_predict's forward (FeatureExtractor): (forward, parameters)."""
    model = _bert(s, dtype)
    extractor = feature_extractor.FeatureExtractor(model, [-1], s["seq_length"], s["batch_size"], jit_compile)
    inputs = _inputs(s)
    return (lambda: extractor(*inputs)), model.count_params()


def _build_savedmodel(s, dtype):
    """export_model.py's encoder SavedModel, exported at the dtype, loaded, called through serving_default."""
    model = _bert(s, dtype)
    params, directory = model.count_params(), tempfile.mkdtemp()
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                          + ["w%d" % i for i in range(s["vocab_size"] - 5)]) + "\n")
    path = export.export_encoder(model, types.SimpleNamespace(
        vocab_file=vocab_file, do_lower_case=True, max_seq_length=s["seq_length"],
        export_dir=os.path.join(directory, "export"), export_version=None))
    del model
    gc.collect()
    serving_default = tf.saved_model.load(path).signatures["serving_default"]
    ids, mask, segments = (tf.constant(x) for x in _inputs(s))

    def forward():
        outputs = serving_default(input_word_ids=ids, input_mask=mask, input_type_ids=segments)
        return outputs["sequence_output"].numpy(), outputs["pooled_output"].numpy()

    return forward, params


def _build_baseline(s, dtype):
    """Model Garden's BertEncoderV2 in a tf.function: (forward, parameters)."""
    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = harness.garden_encoder(config, tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range))
        dummy = tf.zeros([1, 2], tf.int32)  # built as ours: one call on a [1, 2] batch
        encoder(dict(input_word_ids=dummy, input_mask=tf.ones_like(dummy), input_type_ids=dummy), training=False)
    inputs = dict(zip(("input_word_ids", "input_mask", "input_type_ids"), (tf.constant(x) for x in _inputs(s))))

    @tf.function
    def call(inputs):
        outputs = encoder(inputs, training=False)
        return tf.cast(outputs["sequence_output"], tf.float32), tf.cast(outputs["pooled_output"], tf.float32)

    def forward():
        sequence, pooled = call(inputs)
        return sequence.numpy(), pooled.numpy()

    return forward, encoder.count_params()


def build_contender(contender, dtype, s):
    """In a child process: (run one round of forward_calls calls -> a number of the output, parameters)."""
    if contender in (OURS, TUNED):
        onednn.assume_frozen_weights(dtype, trains=False)  # as run_classifier.py without --do_train, before the model
        xla = inference.uses_xla("auto", dtype)  # what --inference_xla=auto chooses on this machine
        forward, params = _build_ours(s, dtype, xla if contender == OURS else not xla)
    else:
        forward, params = (_build_savedmodel if contender == SAVEDMODEL else _build_baseline)(s, dtype)

    def calls():
        for _ in range(s["forward_calls"]):
            result = forward()
        return float((result[0] if isinstance(result, tuple) else result).reshape(-1)[0])

    return calls, params


def contenders(torch_python):
    return (OURS, TUNED, SAVEDMODEL, BASELINE) + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """Runs the contenders of one dtype in turns, each in its own process: {name: results} (harness.take_turns)."""
    commands = harness.contender_commands(__file__, contenders(None), dtype, s, torch_python, "encoder_forward")
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"])


def run(s, torch_python):
    """Measures and prints the rows, one per dtype, and the table; returns the ratio lines to print last."""
    names, rows, summaries = contenders(torch_python), [], []
    for dtype in FLAGS.inference_dtypes:
        xla = inference.uses_xla("auto", dtype)
        auto = "--inference_xla=auto compiles with XLA: %s (ours_tuned: %s); " % (("no", "yes"), ("yes", "no"))[xla]
        results = harness.run_row(dtype, measure, s, dtype, torch_python, value_name="first output", extra=auto)
        rows.append((dtype, results, names, s["batch_size"] * s["forward_calls"]))
        paired = {name: harness.paired_ratio(results[name]["seconds"], results[OURS]["seconds"]) for name in names}
        summaries.append("%s: ours/peer, the lowest over the peers (%s): %.3f; default vs the other --inference_xla: "
                         "%.3f" % (dtype, ", ".join(names[3:]), min(paired[name] for name in names[3:]), paired[TUNED]))
    harness.throughput_table("dtype", rows, OURS, " (savedmodel's includes the model it exported)")
    return summaries


def main(argv):
    del argv  # Unused.
    s = _settings()
    return harness.main_of(
        build_contender, "Inference benchmark: the encoder forward pass of extract_features / --do_predict (ours), "
        "the exported SavedModel, Model Garden BertEncoderV2, PyTorch",
        ["config: %s batch=%d" % (harness.bert_shape_text(s), s["batch_size"]),
         "timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
         "rounds of %(forward_calls)d forward call(s) each, taking turns" % s + harness.quick_note()],
        "Hugging Face BertModel + torch.compile", functools.partial(run, s))


if __name__ == "__main__":
    app.run(main)
