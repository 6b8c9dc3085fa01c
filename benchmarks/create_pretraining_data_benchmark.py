"""create_pretraining_data.py vs the original algorithm: instances/s and peak memory.

For each corpus size, two runs on the same input and flags, each in its own
process:
  reference  `pretraining_data.reference`: the original tool's main(), single
             process, pure-Python tokenizer, everything in memory;
  ours       `create_pretraining_data.py --num_workers=2` (streaming shards,
             TensorFlow Text tokenizer, worker processes).
instances/s counts from the start of the work, after Python and TensorFlow
are imported (~5 s that both pay once); the wall time with start-up is shown
too. "cpu s" is the user + system time of the run's whole process tree.
Peak memory is the largest sum of the resident set sizes of the process
tree, sampled every 50 ms from /proc.

The corpus is deterministic and English-like (`tokenization_benchmark`'s
generator): lines grouped into documents of 2-20 sentences; each smaller
corpus is a prefix of the larger. The vocab is a frequency-based WordPiece
vocab learned from the first lines.

The machine may be shared: the script first measures how much two
CPU-bound processes actually gain over one here ("parallelism"), which
bounds what 2 workers can do.

Goals: ours >= 10x the reference's instances/s with 2 workers, and ours' peak
memory flat (within 25%) as the corpus grows 4x.

Usage, from the repository root:
  .venv/bin/python benchmarks/create_pretraining_data_benchmark.py [--quick]
"""

from concurrent import futures
import multiprocessing
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

# Run as a script, Python puts benchmarks/ on sys.path, not the repository root.
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import benchmark_utils  # noqa: E402
from benchmarks import tokenization_benchmark  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("corpus_documents", ["1500", "6000"],
                  "Corpus sizes, in documents (~2.6 KB each); memory flatness compares the "
                  "first and the last.")
flags.DEFINE_integer("benchmark_documents_per_shard", 500,
                     "ours: --documents_per_shard; small enough that every corpus spans "
                     "several shards.")
flags.DEFINE_integer("benchmark_num_workers", 2, "ours: --num_workers.")
flags.DEFINE_integer("benchmark_dupe_factor", 10, "--dupe_factor of both runs.")
flags.DEFINE_integer("benchmark_vocab_size", 8000, "Target WordPiece vocab size.")
flags.DEFINE_string("benchmark_dir", None, "Where to write corpora and outputs (default: a "
                    "temporary directory, removed at the end).")
flags.DEFINE_bool("quick", False, "One tiny corpus, dupe_factor 2: checks that the benchmark "
                  "runs; its figures mean nothing.")

_SEED = 12345
_VOCAB_LINES = 5000
_SPEEDUP_GOAL = 10.0
_MEMORY_GOAL = 1.25  # Largest corpus' peak / smallest corpus' peak, for ours.

# The reference run, in a child process of its own; prints its figures.
_REFERENCE_CODE = """
import sys, time
from absl import logging
from pretraining_data import instances, reference
logging.set_verbosity(logging.WARNING)
start = time.monotonic()
count = reference.create_pretraining_data(
    [sys.argv[1]], [sys.argv[2]], instances.CreatePretrainingDataOptions(
        input_file=sys.argv[1], output_file=sys.argv[2], vocab_file=sys.argv[3],
        dupe_factor=int(sys.argv[4]), random_seed=12345))
print("instances=%d seconds=%.3f" % (count, time.monotonic() - start))
"""


def write_corpus(path, num_documents, seed):
    """Writes num_documents documents of generated lines; returns the lines used."""
    rng = random.Random(seed)
    sizes = [rng.randint(2, 20) for _ in range(num_documents)]
    lines = tokenization_benchmark.generate_corpus(sum(sizes), seed)
    with open(path, "w", encoding="utf-8") as f:
        start = 0
        for size in sizes:
            f.write("\n".join(lines[start:start + size]) + "\n\n")
            start += size
    return lines


def _spin(seconds):
    """Counts loop iterations for `seconds` of wall time (CPU-bound)."""
    end, count = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        count += 1
    return count


def parallelism(seconds=1.0):
    """How much more CPU-bound work 2 processes do than 1, now, on this machine."""
    with futures.ProcessPoolExecutor(2, multiprocessing.get_context("spawn")) as executor:
        list(executor.map(int, range(2)))  # Start both workers.
        single = executor.submit(_spin, seconds).result()
        double = sum(executor.map(_spin, [seconds, seconds]))
    return double / single


def _descendants(pid):
    """pid and all its descendants, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    # After the parenthesized name come the state, then the ppid.
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _rss_bytes(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(command):
    """Runs `command` (one at a time).

    Returns:
      dict(output=stdout + stderr, wall=seconds, cpu=seconds of the process
      tree, peak=peak RSS of the process tree in bytes).
    """
    cpu_before = _children_cpu_seconds()
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=_REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def sample():
        while process.poll() is None:
            peak[0] = max(peak[0], sum(_rss_bytes(p) for p in _descendants(process.pid)))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    wall = time.monotonic() - start
    sampler.join()
    if process.returncode:
        raise RuntimeError("%s failed:\n%s" % (command[:3], output[-3000:]))
    return dict(output=output, wall=wall, cpu=_children_cpu_seconds() - cpu_before,
                peak=peak[0])


def run_reference(corpus, output, vocab, dupe_factor):
    """Returns dict(instances, seconds, wall, cpu, peak)."""
    run = run_measured(
        [sys.executable, "-c", _REFERENCE_CODE, corpus, output, vocab, str(dupe_factor)])
    match = re.search(r"instances=(\d+) seconds=([0-9.]+)", run["output"])
    return dict(run, instances=int(match.group(1)), seconds=float(match.group(2)))


def run_ours(corpus, output, vocab, dupe_factor, num_workers, documents_per_shard):
    """Returns dict(instances, seconds, wall, cpu, peak)."""
    run = run_measured([
        sys.executable, os.path.join(_REPO_ROOT, "create_pretraining_data.py"),
        "--input_file=%s" % corpus, "--output_file=%s" % output, "--vocab_file=%s" % vocab,
        "--dupe_factor=%d" % dupe_factor, "--num_workers=%d" % num_workers,
        "--documents_per_shard=%d" % documents_per_shard])
    match = re.search(r"Done: \d+ documents in \d+ shards, (\d+) instances in [0-9.]+ s "
                      r"\((\d+) instances/s\)", run["output"])
    # The rate is logged from the unrounded time; the seconds only to 0.1 s.
    instances = int(match.group(1))
    return dict(run, instances=instances, seconds=instances / max(int(match.group(2)), 1))


def _rate(run):
    return run["instances"] / run["seconds"]


def main(argv):
    del argv
    sizes = [int(n) for n in FLAGS.corpus_documents]
    dupe_factor, per_shard = FLAGS.benchmark_dupe_factor, FLAGS.benchmark_documents_per_shard
    if FLAGS.quick:
        sizes, dupe_factor, per_shard = [40], 2, 20
    from importlib import metadata
    for line in benchmark_utils.machine_lines(metadata.version("tensorflow")):
        print(line)
    print("parallelism: 2 CPU-bound processes do %.2fx the work of 1 right now"
          % parallelism(0.3 if FLAGS.quick else 1.0))
    print("flags: dupe_factor=%d, other create_pretraining_data flags at their defaults; ours: "
          "--num_workers=%d --documents_per_shard=%d"
          % (dupe_factor, FLAGS.benchmark_num_workers, per_shard))

    with tempfile.TemporaryDirectory() as scratch:
        directory = FLAGS.benchmark_dir or scratch
        os.makedirs(directory, exist_ok=True)
        corpora = {}
        for size in sizes:
            corpora[size] = os.path.join(directory, "corpus-%d.txt" % size)
            lines = write_corpus(corpora[size], size, _SEED)
        vocab = os.path.join(directory, "vocab.txt")
        vocab_lines = lines[:200] if FLAGS.quick else lines[:_VOCAB_LINES]
        vocab_size = 2000 if FLAGS.quick else FLAGS.benchmark_vocab_size
        with open(vocab, "w", encoding="utf-8") as f:
            f.write("\n".join(tokenization_benchmark.frequency_vocab(vocab_lines, vocab_size,
                                                                     True)) + "\n")

        rows, results = [], {}
        for size in sizes:
            megabytes = os.path.getsize(corpora[size]) / 1e6
            results[size] = {
                "reference": run_reference(corpora[size], os.path.join(directory, "ref.tfrecord"),
                                           vocab, dupe_factor),
                "ours": run_ours(corpora[size], os.path.join(directory, "ours.tfrecord"), vocab,
                                 dupe_factor, FLAGS.benchmark_num_workers, per_shard),
            }
            for name, run in results[size].items():
                rows.append([str(size), "%.1f" % megabytes, name, str(run["instances"]),
                             "%.1f" % run["seconds"], "%.0f" % _rate(run), "%.1f" % run["wall"],
                             "%.1f" % run["cpu"], "%.0f" % (run["peak"] / 2**20)])
    print(benchmark_utils.format_table(
        ["documents", "MB", "run", "instances", "seconds", "instances/s", "wall s", "cpu s",
         "peak MB"], rows))

    for size in sizes:
        runs = results[size]
        print("speed-up at %d documents: %.1fx instances/s (wall time with start-up: %.1fx; "
              "cpu time reference/ours: %.1fx)"
              % (size, _rate(runs["ours"]) / _rate(runs["reference"]),
                 runs["reference"]["wall"] / runs["ours"]["wall"],
                 runs["reference"]["cpu"] / runs["ours"]["cpu"]))
    print("load average at the end (1/5/15 min): %.2f %.2f %.2f" % os.getloadavg())
    if FLAGS.quick:
        print("quick: a smoke test, the goals are not checked")
        return 0
    first, last = results[sizes[0]], results[sizes[-1]]
    speedup = _rate(last["ours"]) / _rate(last["reference"])
    print("goal >= %.0fx instances/s with %d workers: %s (%.1fx at %d documents)"
          % (_SPEEDUP_GOAL, FLAGS.benchmark_num_workers,
             "met" if speedup >= _SPEEDUP_GOAL else "NOT met", speedup, sizes[-1]))
    for name in ("reference", "ours"):
        print("peak memory of %s: %.0f MB -> %.0f MB (x%.2f) as the corpus grows x%.1f"
              % (name, first[name]["peak"] / 2**20, last[name]["peak"] / 2**20,
                 last[name]["peak"] / first[name]["peak"], sizes[-1] / sizes[0]))
    growth = last["ours"]["peak"] / first["ours"]["peak"]
    print("goal flat memory (ours within x%.2f): %s"
          % (_MEMORY_GOAL, "met" if growth <= _MEMORY_GOAL else "NOT met"))
    return 0


if __name__ == "__main__":
    app.run(main)
