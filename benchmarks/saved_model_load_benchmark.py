"""How much smaller, and how much slower to load, a SavedModel is when it draws its frozen weights at load.

For each size, a randomly initialised BERT classifier (3 labels) whose
feed-forward groups are frozen at their seeded initialisation (as
--freeze=ffn --reinit=ffn leaves them) is exported twice by export_model.py:
--save_frozen=seed (the FFN drawn at load) and --save_frozen=values (every
weight stored). Each export is then loaded by `tf.saved_model.load` in a
fresh `python -I` process (TensorFlow and tensorflow-text only, as a server
has), the two in turns, a round each, so that load drift on a shared machine
affects both alike; the time counted is the load alone (imports excluded).
Every load answers the same pair of texts, and the two exports' logits must be
bitwise equal.

  python benchmarks/saved_model_load_benchmark.py --load_sizes=minilm,bert_base --load_rounds=5
"""

import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import benchmark_utils  # noqa: E402
from freezing import seeded_values  # noqa: E402
from modeling.testing import frozen_exports  # noqa: E402

FLAGS = flags.FLAGS
# all-MiniLM-L6-v2's and BERT-Base's sizes, with BERT-Base's 30,522-token vocabulary; tiny is the tests'.
SIZES = {
    "tiny": (dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64), 50),
    "minilm": (dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536), 30517),
    "bert_base": (dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072), 30517),
}
flags.DEFINE_list("load_sizes", ["minilm", "bert_base"], "The model sizes: %s." % ", ".join(SIZES))
flags.DEFINE_integer("load_rounds", 5, "Loads of each export, in turns.")
flags.DEFINE_string("load_work_dir", None, "Where the checkpoints and exports go (kept). Default: a temporary "
                    "directory, removed afterwards.")

TEXTS = dict(text_a=["the cat sat on the mat .", "where is the gold"], text_b=["a dog , a cat", "w1 w2 w3"])
# Run with `python -I`: TensorFlow and tensorflow-text only. Prints the load's seconds and the logits, as JSON.
_LOADER = """
import json, sys, time
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer ops)
start = time.perf_counter()
model = tf.saved_model.load(sys.argv[1])
seconds = time.perf_counter() - start
inputs = json.loads(sys.argv[2])
logits = model.signatures["serving_default"](**{k: tf.constant(v) for k, v in inputs.items()})["logits"]
print(json.dumps(dict(seconds=seconds, logits=logits.numpy().tolist())))
"""


def export_both(root, size):
    """Checkpoints a seeded-FFN classifier of `size` under root; returns ({way: export path}, parameters, drawn)."""
    sizes, words = SIZES[size]
    config = dict(sizes, max_position_embeddings=512, type_vocab_size=2)
    prefixes, _ = frozen_exports.write_checkpoints(
        root, kinds=["classifier"], config=config, words=["w%d" % i for i in range(words)])
    stored = sum(int(np.prod(shape)) for name, shape in tf.train.list_variables(prefixes["classifier"])
                 if not name.startswith("global_step"))
    manifest = seeded_values.read_manifest(prefixes["classifier"])
    drawn = sum(int(np.prod(entry["shape"])) for entry in manifest["variables"].values())
    paths = {way: frozen_exports.export(root, prefixes["classifier"], "classifier", way, max_seq_length=128)
             for way in ("values", "seed")}
    return paths, stored + drawn, drawn


def load_once(path):
    """(seconds, logits) of one load in a fresh `python -I` process."""
    result = subprocess.run([sys.executable, "-I", "-c", _LOADER, path, json.dumps(TEXTS)], capture_output=True,
                            text=True, check=False, cwd="/")
    if result.returncode != 0:
        raise RuntimeError("Loading %s failed:\n%s" % (path, result.stderr[-3000:]))
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return answer["seconds"], answer["logits"]


def megabytes(path):
    return sum(f.stat().st_size for f in pathlib.Path(path).rglob("*") if f.is_file()) / 1e6


def measure(root, size, rounds):
    """One table row for `size`."""
    paths, parameters, drawn = export_both(root, size)
    seconds = {way: [] for way in paths}
    logits = {}
    for _ in range(rounds):
        for way, path in paths.items():
            elapsed, logits[way] = load_once(path)
            seconds[way].append(elapsed)
    if logits["seed"] != logits["values"]:
        raise RuntimeError("%s: the seed export's logits %s differ from the full export's %s."
                           % (size, logits["seed"], logits["values"]))
    ratios = [seed / values for seed, values in zip(seconds["seed"], seconds["values"])]
    row = [size, "{:,}".format(parameters), "{:,}".format(drawn)]
    for way in ("values", "seed"):
        median, spread = benchmark_utils.median_and_spread(seconds[way])
        row += ["%.1f" % megabytes(paths[way]), "%.2f" % median, "%.0f%%" % (100 * spread)]
    return row + ["%.2f" % statistics.median(ratios), "bitwise"]


def main(argv):
    del argv
    unknown = [size for size in FLAGS.load_sizes if size not in SIZES]
    if unknown:
        raise app.UsageError("--load_sizes: unknown %s; expected some of %s." % (", ".join(unknown), ", ".join(SIZES)))
    for line in benchmark_utils.machine_lines(tf.__version__):
        print(line)
    print("float32; load = tf.saved_model.load in a fresh python -I process, median of %d, the two exports in turns; "
          "seed/values = median of the paired ratios" % FLAGS.load_rounds)
    work_dir = FLAGS.load_work_dir or tempfile.mkdtemp(prefix="saved_model_load_")
    try:
        rows = []
        for size in FLAGS.load_sizes:
            root = pathlib.Path(work_dir) / size
            root.mkdir(parents=True, exist_ok=True)
            rows.append(measure(root, size, FLAGS.load_rounds))
            print("%s done" % size, flush=True)
        print(benchmark_utils.format_table(
            ["size", "parameters", "drawn at load", "values MB", "values load s", "spread", "seed MB", "seed load s",
             "spread", "seed/values", "outputs"], rows))
    finally:
        if not FLAGS.load_work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    app.run(main)
