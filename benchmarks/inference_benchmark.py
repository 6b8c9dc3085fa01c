"""Inference throughput and peak memory: our prediction paths vs Model Garden and PyTorch.

The encoder's forward pass at BERT's inference shapes, outputs fetched to the host as float32.
Usage, from the repository root:
  .venv/bin/python benchmarks/inference_benchmark.py [--quick] [--torch_python=...]
Contenders, shapes and how rounds are timed: docs/performance.md, section "Inference".
"""

import gc
import os
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable=wrong-import-position
from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402  (harness first: it enables oneDNN before TensorFlow loads)
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  pylint: disable=unused-import  (the SavedModel's tokenizer ops)
import tf_keras  # noqa: E402

import modeling  # noqa: E402
from feature_extraction import feature_extractor  # noqa: E402
from serving import export  # noqa: E402
from training import inference, onednn  # noqa: E402

FLAGS = flags.FLAGS
OURS, TUNED, SAVEDMODEL, BASELINE, PYTORCH = "ours", "ours_tuned", "savedmodel", "baseline", "pytorch"
DTYPES = ("float32", "bfloat16")

harness.define_bert_shape_flags()
harness.define_torch_python_flag()
flags.DEFINE_integer("inference_batch_size", 32, "Sequences per forward call.", lower_bound=1)
flags.DEFINE_integer("forward_calls", 1, "Forward calls per timed round.", lower_bound=1)
flags.DEFINE_integer("inference_warmup_rounds", 1, "Untimed rounds per contender (the first traces).", lower_bound=1)
flags.DEFINE_integer("inference_timed_rounds", 7, "Timed rounds per contender.", lower_bound=1)
flags.DEFINE_list("inference_dtypes", list(DTYPES), "Compute dtypes to time.")
flags.register_validator("inference_dtypes", lambda values: set(values) <= set(DTYPES),
                         "--inference_dtypes must be among float32, bfloat16.")

_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length",
                "forward_calls", "model_seed")
_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000, seq_length=16,
              batch_size=4, forward_calls=1, warmup_rounds=1, timed_rounds=1)


def _settings():
    """The flag values in effect (with --quick applied) as a dict: the children's spec."""
    s = dict({name: FLAGS[name].value for name in _SHAPE_FLAGS}, batch_size=FLAGS.inference_batch_size,
             warmup_rounds=FLAGS.inference_warmup_rounds, timed_rounds=FLAGS.inference_timed_rounds)
    return dict(s, **_QUICK) if FLAGS.quick else s


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
    commands = {name: harness.child_command(__file__, name, dtype, s) for name in contenders(None)}
    if torch_python:
        commands[PYTORCH] = harness.peer_command(torch_python, "encoder_forward", dtype, s)
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"])


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.bench_child:
        return harness.serve_child(build_contender)
    torch_python, why_not = harness.torch_interpreter(FLAGS.torch_python)
    names = contenders(torch_python)
    harness.print_header(
        "Inference benchmark: the encoder forward pass of extract_features / --do_predict (ours), the exported "
        "SavedModel, Model Garden BertEncoderV2, PyTorch",
        "config: layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d "
        "intermediate=%(intermediate_size)d vocab=%(vocab_size)d seq=%(seq_length)d batch=%(batch_size)d" % s,
        "timing: one child process per contender and dtype; %(warmup_rounds)d warm-up + %(timed_rounds)d timed "
        "rounds of %(forward_calls)d forward call(s) each, taking turns" % s
        + (" [--quick: figures are meaningless]" if FLAGS.quick else ""),
        harness.torch_line(torch_python, why_not, "Hugging Face BertModel + torch.compile"))
    begin = time.perf_counter()
    rows, summaries = [], []
    for dtype in FLAGS.inference_dtypes:
        xla, start = inference.uses_xla("auto", dtype), time.perf_counter()
        results = measure(s, dtype, torch_python)
        auto = "--inference_xla=auto compiles with XLA: %s (ours_tuned: %s); " % (("no", "yes"), ("yes", "no"))[xla]
        print(harness.progress_line(dtype, time.perf_counter() - start, results, "first output", auto), flush=True)
        rows.append((dtype, results, names, s["batch_size"] * s["forward_calls"]))
        paired = {name: harness.paired_ratio(results[name]["seconds"], results[OURS]["seconds"]) for name in names}
        summaries.append("%s: ours/peer, the lowest over the peers (%s): %.3f; default vs the other --inference_xla: "
                         "%.3f" % (dtype, ", ".join(names[3:]), min(paired[name] for name in names[3:]), paired[TUNED]))
    harness.throughput_table("dtype", rows, OURS, " (savedmodel's includes the model it exported)")
    print("\n" + "\n".join(summaries))
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
