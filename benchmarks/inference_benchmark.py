"""Inference throughput and peak memory: our prediction paths vs Model Garden and PyTorch.

The encoder's forward pass at BERT's inference shapes (4 layers, hidden 512, 8 heads, batch 32,
sequence 128 by default), dropout off, outputs fetched to the host as float32:

  ours         the forward function of extract_features.py, --do_predict and evaluation
               (`training.inference.BatchForward`, through `feature_extraction.FeatureExtractor`) with
               the default --inference_xla=auto: XLA unless bfloat16 on a CPU with native bfloat16; in a
               process set up as run_classifier.py's and run_squad.py's are without --do_train (in
               bfloat16, oneDNN's weights kept in its blocked layout: training/onednn.py).
  ours_tuned   the same with the other --inference_xla setting, printed beside the default (the
               default should be the faster of the two).
  savedmodel   export_model.py's encoder SavedModel (serving/encoder_export.py), exported at the dtype,
               loaded with tf.saved_model.load, called through serving_default (no XLA: it takes any
               shape), in a process with TensorFlow's defaults (a serving process is the user's to set up).
  baseline     Model Garden's BertEncoderV2 in a tf.function, as a user of Model Garden would call it.
  pytorch      Hugging Face BertModel with torch.compile under torch.inference_mode
               (torch_peers.encoder_forward), given an interpreter with torch and transformers
               (--torch_python); skipped with a note otherwise.

Each (contender, dtype) runs in its own child process, all taking turns (harness.py). The figure is
sequences/s of the median round; ours/X is the paired ratio of X's round time to ours'.

Usage, from the repository root:
  .venv/bin/python benchmarks/inference_benchmark.py [--quick] [--torch_python=...]
"""

import gc
import os
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import child, harness  # noqa: E402
from training import onednn  # noqa: E402

FLAGS = flags.FLAGS
harness.define_bert_shape_flags()
harness.define_torch_python_flag()
flags.DEFINE_integer("inference_batch_size", 32, "Sequences per forward call.")
flags.DEFINE_integer("forward_calls", 1, "Forward calls per timed round.")
flags.DEFINE_integer("inference_warmup_rounds", 1, "Untimed rounds per contender (>= 1; the first one traces and "
                     "compiles).")
flags.DEFINE_integer("inference_timed_rounds", 7, "Timed rounds per contender.")
flags.DEFINE_list("inference_dtypes", ["float32", "bfloat16"], "Compute dtypes to time.")

OURS, TUNED, SAVEDMODEL, BASELINE, PYTORCH = "ours", "ours_tuned", "savedmodel", "baseline", "pytorch"
TENSORFLOW_CONTENDERS = (OURS, TUNED, SAVEDMODEL, BASELINE)
_SHAPE_FLAGS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length",
                "forward_calls", "model_seed")
_QUICK = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000, seq_length=16,
              batch_size=4, forward_calls=1, warmup_rounds=1, timed_rounds=1)


def _settings():
    """The flag values in effect (with --quick applied) as a dict: the children's spec."""
    s = {name: FLAGS[name].value for name in _SHAPE_FLAGS}
    s.update(batch_size=FLAGS.inference_batch_size, warmup_rounds=FLAGS.inference_warmup_rounds,
             timed_rounds=FLAGS.inference_timed_rounds)
    if FLAGS.quick:
        s.update(_QUICK)
    return s


def default_xla(dtype):
    """What --inference_xla=auto chooses on this machine."""
    from training import inference

    return inference.uses_xla("auto", dtype)


def _inputs(s):
    """The batch every contender runs: three int32 arrays [batch, seq] (some padding, two segments)."""
    batch = child.pretraining_batches(s["model_seed"], s["batch_size"], s["seq_length"], 1, s["vocab_size"])
    return [batch[name][0] for name in ("input_ids", "input_mask", "segment_ids")]


def _bert(s, dtype):
    """Our BertModel under the --dtype policy, built (seeded weights) as the entry points build it."""
    import tf_keras

    import modeling

    with harness.dtype_policy(dtype):
        tf_keras.utils.set_random_seed(s["model_seed"])
        return modeling.build_model(modeling.BertModel(harness.bert_config(s)))


def _build_ours(s, dtype, jit_compile):
    from feature_extraction import feature_extractor

    model = _bert(s, dtype)
    extractor = feature_extractor.FeatureExtractor(model, [-1], s["seq_length"], s["batch_size"], jit_compile)
    inputs = _inputs(s)
    return (lambda: extractor(*inputs)), model.count_params()


def _build_savedmodel(s, dtype):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  pylint: disable=unused-import  (the SavedModel's tokenizer ops)

    from serving import export

    model = _bert(s, dtype)
    params = model.count_params()
    directory = tempfile.mkdtemp()
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                          + ["w%d" % i for i in range(s["vocab_size"] - 5)]) + "\n")
    options = types.SimpleNamespace(vocab_file=vocab_file, do_lower_case=True, max_seq_length=s["seq_length"],
                                    export_dir=os.path.join(directory, "export"), export_version=None)
    path = export.export_encoder(model, options)
    del model
    gc.collect()
    serving_default = tf.saved_model.load(path).signatures["serving_default"]
    ids, mask, segments = (tf.constant(x) for x in _inputs(s))

    def forward():
        outputs = serving_default(input_word_ids=ids, input_mask=mask, input_type_ids=segments)
        return outputs["sequence_output"].numpy(), outputs["pooled_output"].numpy()

    return forward, params


def _build_baseline(s, dtype):
    import tensorflow as tf
    import tf_keras

    with harness.dtype_policy(dtype):
        config = harness.bert_config(s)
        tf_keras.utils.set_random_seed(s["model_seed"])
        encoder = harness.garden_encoder(config, tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range))
        dummy = tf.zeros([1, 2], tf.int32)  # built as ours: one call on a [1, 2] batch
        encoder(dict(input_word_ids=dummy, input_mask=tf.ones_like(dummy), input_type_ids=dummy), training=False)
        ids, mask, segments = (tf.constant(x) for x in _inputs(s))
        inputs = dict(input_word_ids=ids, input_mask=mask, input_type_ids=segments)

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
        xla = default_xla(dtype)
        forward, params = _build_ours(s, dtype, xla if contender == OURS else not xla)
    elif contender == SAVEDMODEL:
        forward, params = _build_savedmodel(s, dtype)
    else:
        forward, params = _build_baseline(s, dtype)

    def calls():
        for _ in range(s["forward_calls"]):
            result = forward()
        first = result[0] if isinstance(result, tuple) else result
        return float(first.reshape(-1)[0])

    return calls, params


def child_command(s, contender, dtype, torch_python=None):
    if contender == PYTORCH:
        return harness.peer_command(torch_python, "encoder_forward", dtype, s)
    return harness.child_command(__file__, contender, dtype, s)


def contenders(torch_python):
    return TENSORFLOW_CONTENDERS + ((PYTORCH,) if torch_python else ())


def measure(s, dtype, torch_python=None):
    """{name: results (harness.take_turns)} of one dtype."""
    commands = {name: child_command(s, name, dtype, torch_python) for name in contenders(torch_python)}
    return harness.take_turns(commands, s["warmup_rounds"], s["timed_rounds"])


def main(argv):
    del argv  # Unused.
    s = _settings()
    if FLAGS.bench_child:
        return harness.serve_child(build_contender)
    harness.check_rounds(inference_warmup_rounds=s["warmup_rounds"], inference_timed_rounds=s["timed_rounds"],
                         forward_calls=s["forward_calls"])
    harness.check_among("inference_dtypes", FLAGS.inference_dtypes, ("float32", "bfloat16"))
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
        xla = default_xla(dtype)
        start = time.perf_counter()
        results = measure(s, dtype, torch_python)
        print(harness.progress_line(dtype, time.perf_counter() - start, results, "first output", extra=(
            "--inference_xla=auto compiles with XLA: %s (ours_tuned: %s); " % (
                "yes" if xla else "no", "no" if xla else "yes"))), flush=True)
        rows.append((dtype, results, names, s["batch_size"] * s["forward_calls"]))
        paired = {name: harness.paired_ratio(results[name]["seconds"], results[OURS]["seconds"]) for name in names}
        peers = [name for name in names if name not in (OURS, TUNED, SAVEDMODEL)]
        summaries.append((dtype, ", ".join(peers), min(paired[name] for name in peers), paired[TUNED]))
    harness.throughput_table("dtype", rows, OURS, " (savedmodel's includes the model it exported)")
    print()
    for summary in summaries:
        print("%s: ours/peer, the lowest over the peers (%s): %.3f; default vs the other --inference_xla: %.3f"
              % summary)
    print("total time: %.0f s" % (time.perf_counter() - begin))
    return 0


if __name__ == "__main__":
    app.run(main)
