"""create_pretraining_data.py against the original script: whole processes, default flags, growing corpora.

Usage, from the repository root:
  .venv/bin/python benchmarks/create_pretraining_data_benchmark.py [--cpd_rounds=3] [--cpd_quick]
Contenders, corpora, vocab, how rounds are timed and memory sampled: docs/performance.md, section
"create_pretraining_data".
"""

import collections
from concurrent import futures
import importlib.util
import itertools
import multiprocessing
import os
import pathlib
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks import tokenization_benchmark  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("corpus_documents", ["420", "1680", "6720"],
                  "Corpus sizes, in documents (~2.6 KB each: 1.1, 4.3 and 17 MB).")
flags.register_validator("corpus_documents", lambda sizes: all(size.isdigit() and int(size) > 0 for size in sizes),
                         "--corpus_documents must be positive integers.")
flags.DEFINE_integer("cpd_rounds", 3, "Interleaved rounds; medians are reported.", lower_bound=1)
flags.DEFINE_string("benchmark_dir", None, "Where to write corpora and outputs (default: a temporary directory).")
flags.DEFINE_string("benchmark_vocab_file", None, "A vocab to use instead of BERT-Base uncased's.")
flags.DEFINE_bool("cpd_quick", False, "One tiny corpus, one round: checks that it runs; the figures mean nothing.")


def write_corpus(path, num_documents, seed=12345):
    """Writes `num_documents` documents of 2 to 20 generated lines each; returns the lines used."""
    rng = random.Random(seed)
    sizes = [rng.randint(2, 20) for _ in range(num_documents)]
    lines = tokenization_benchmark.generate_corpus(sum(sizes), seed)
    starts = itertools.accumulate(sizes, initial=0)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join("\n".join(lines[start:start + size]) + "\n\n" for start, size in zip(starts, sizes)))
    return lines


def _spin(seconds):
    """Counts loop iterations for `seconds` of wall time (CPU-bound)."""
    end, count = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        count += 1
    return count


def parallelism(seconds):
    """How much more CPU-bound work 2 processes do than 1, now, on this machine."""
    with futures.ProcessPoolExecutor(2, multiprocessing.get_context("spawn")) as executor:
        list(executor.map(int, range(2)))  # Start both workers.
        single = executor.submit(_spin, seconds).result()
        return sum(executor.map(_spin, [seconds, seconds])) / single


def group_rss_bytes(group):
    """The summed VmRSS of the processes of process group `group`, from /proc."""
    total = 0
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % entry) as stat:  # After the parenthesized name: state, ppid, pgrp, ...
                if int(stat.read().rsplit(")", 1)[1].split()[2]) != group:
                    continue
            with open("/proc/%s/status" % entry) as status:
                total += next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
        except (OSError, IndexError, ValueError):
            pass
    return total


def run_measured(command):
    """Runs `command`, alone, in a process group of its own; raises a RuntimeError with its output's end if it fails.

    Returns dict(wall=seconds, cpu=user + system seconds of its processes, peak=the largest summed RSS of its process
    group in bytes, sampled every 50 ms).
    """
    cpu = lambda: sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])  # noqa: E731  (ru_utime + ru_stime)
    cpu_before, start, peak = cpu(), time.monotonic(), [0]
    process = subprocess.Popen(command, cwd=harness.REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, process_group=0)

    def sample():
        while process.poll() is None:
            peak[0] = max(peak[0], group_rss_bytes(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = process.communicate()[0]
    wall = time.monotonic() - start
    sampler.join()
    if process.returncode:
        raise RuntimeError("%s failed:\n%s" % (command[:3], output[-3000:]))
    return dict(wall=wall, cpu=cpu() - cpu_before, peak=peak[0])


def original_installed():
    """Whether bert-tensorflow (the original scripts) is importable here."""
    return importlib.util.find_spec("bert") is not None and (
        importlib.util.find_spec("bert.create_pretraining_data") is not None)


def main(argv):
    del argv  # Unused.
    quick = FLAGS.cpd_quick
    sizes, rounds = ([12], 1) if quick else ([int(n) for n in FLAGS.corpus_documents], FLAGS.cpd_rounds)
    harness.print_header("create_pretraining_data benchmark: ours vs the original script, whole processes",
                         "parallelism: 2 CPU-bound processes do %.2fx the work of 1 right now"
                         % parallelism(0.3 if quick else 1.0))
    have_original = original_installed()
    if not have_original:
        print("original: bert-tensorflow is not installed (pip install -r benchmarks/requirements.txt); the original "
              "is not measured")
    ours = [sys.executable, os.path.join(harness.REPO_ROOT, "create_pretraining_data.py")]
    commands = {**({"original": [sys.executable, "-m", "bert.create_pretraining_data"]} if have_original else {}),
                "ours": ours, "ours -w2": ours + ["--num_workers=2"]}  # The paths are appended.
    with tempfile.TemporaryDirectory() as scratch:
        directory = FLAGS.benchmark_dir or scratch
        os.makedirs(directory, exist_ok=True)
        corpora = {size: os.path.join(directory, "corpus-%d.txt" % size) for size in sizes}
        lines = [write_corpus(corpora[size], size) for size in sizes][-1]
        vocab, vocab_description = tokenization_benchmark.benchmark_vocab(
            directory, lines[:5000], FLAGS.benchmark_vocab_file, "frequency" if quick else "bert")
        print("vocab: %s" % vocab_description)
        print("flags: all at their defaults (dupe_factor 10, max_seq_length 128, ...) but the paths; ours -w2 adds "
              "--num_workers=2")

        runs = collections.defaultdict(list)
        outputs = {(size, name): pathlib.Path(directory, "%s-%d.tfrecord" % (name.replace(" ", ""), size))
                   for size in sizes for name in commands}

        def record(round_index, key, result):
            size, name = key
            runs[key].append(result)
            print("round %d, %d documents, %-8s %6.2f s, %5.0f MB peak"
                  % (round_index + 1, size, name, result["wall"], result["peak"] / 2**20), flush=True)
            if name != "original" and len(runs[size, "ours"]) == len(runs[size, "ours -w2"]) and (
                    outputs[size, "ours"].read_bytes() != outputs[size, "ours -w2"].read_bytes()):
                raise RuntimeError("ours wrote different bytes with 1 and 2 workers at %d documents" % size)

        harness.interleave({(size, name): lambda size=size, name=name: run_measured(commands[name] + [
            "--input_file=%s" % corpora[size], "--output_file=%s" % outputs[size, name], "--vocab_file=%s" % vocab])
            for size in sizes for name in commands}, rounds, rotate=True, each=record)
        megabytes = {size: os.path.getsize(corpora[size]) / 1e6 for size in sizes}

    medians = {key: {field: statistics.median(run[field] for run in values) for field in ("wall", "cpu", "peak")}
               for key, values in runs.items()}
    rows = [[str(size), "%.1f" % megabytes[size], name, "%.2f" % medians[size, name]["wall"],
             "%.1fx" % (medians[size, "original"]["wall"] / medians[size, name]["wall"]) if have_original else "-",
             "%.1f" % medians[size, name]["cpu"], "%.0f" % (medians[size, name]["peak"] / 2**20)]
            for size in sizes for name in commands]
    print("medians of %d round(s); same bytes from ours with 1 and 2 workers: yes" % rounds)
    print(harness.format_table(["documents", "MB", "run", "wall s", "vs original", "cpu s", "peak MB"], rows))
    print("load average at the end (1/5/15 min): " + harness.load_average())
    if quick or not have_original:
        print("quick: a smoke test, figures are meaningless" if quick else "no comparison without the original")
        return 0
    for name in ("ours", "ours -w2"):
        worst = min(medians[size, "original"]["wall"] / medians[size, name]["wall"] for size in sizes)
        print("%s vs the original, lowest over the sizes: %.1fx" % (name, worst))
    faster = all(medians[size, "ours -w2"]["wall"] < medians[size, "ours"]["wall"] for size in sizes)
    print("2 workers faster than 1 at every size: %s" % ("yes" if faster else "no"))
    for name in ("ours", "ours -w2"):
        share = max(medians[size, name]["peak"] / medians[size, "original"]["peak"] for size in sizes)
        growth = medians[sizes[-1], name]["peak"] / medians[sizes[0], name]["peak"]
        print("%s peak memory: at most %.2f of the original's; x%.2f from %d to %d documents"
              % (name, share, growth, sizes[0], sizes[-1]))
    return 0


if __name__ == "__main__":
    app.run(main)
