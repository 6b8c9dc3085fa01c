"""How much smaller, and how much slower to load, a SavedModel is when it draws its frozen weights at load.

  python benchmarks/saved_model_load_benchmark.py --load_sizes=minilm,bert_base --load_rounds=5

Contenders, sizes and timing: docs/performance.md, section "Loading a SavedModel that draws its frozen weights".
"""

import contextlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402
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
flags.register_validator("load_sizes", lambda sizes: set(sizes) <= set(SIZES), "expected some of " + ", ".join(SIZES))
flags.DEFINE_integer("load_rounds", 5, "Loads of each export, in turns.", lower_bound=1)
flags.DEFINE_string("load_work_dir", None, "Where the checkpoints and exports go (kept). Default: a temporary "
                    "directory, removed afterwards.")

TEXTS = dict(text_a=["the cat sat on the mat .", "where is the gold"], text_b=["a dog , a cat", "w1 w2 w3"])
_LOADER = """
import json, sys, time, tensorflow as tf, tensorflow_text  # tensorflow_text registers the tokenizer ops.
start = time.perf_counter()
model = tf.saved_model.load(sys.argv[1])
seconds = time.perf_counter() - start
logits = model.signatures["serving_default"](**{k: tf.constant(v) for k, v in json.loads(sys.argv[2]).items()})
print(json.dumps(dict(seconds=seconds, logits=logits["logits"].numpy().tolist())))
"""


def load_once(path):
    """(seconds of the load alone, logits of TEXTS) in a fresh `python -I` process (TensorFlow and tensorflow-text
    only, as a server has)."""
    result = subprocess.run([sys.executable, "-I", "-c", _LOADER, path, json.dumps(TEXTS)], capture_output=True,
                            text=True, check=False, cwd="/")
    if result.returncode != 0:
        raise RuntimeError("Loading %s failed:\n%s" % (path, result.stderr[-3000:]))
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    return answer["seconds"], answer["logits"]


def measure(root, size, rounds):
    """One table row for `size`: checkpoints a seeded-FFN classifier, exports it both ways, loads each in turns."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel  (after harness: oneDNN set first)
    root.mkdir(parents=True, exist_ok=True)
    prefix = frozen_exports.write_checkpoints(root, ["classifier"], words=["w%d" % i for i in range(SIZES[size][1])],
                                              config=dict(SIZES[size][0], max_position_embeddings=512,
                                                          type_vocab_size=2))[0]["classifier"]
    drawn = sum(int(np.prod(entry["shape"])) for entry in seeded_values.read_manifest(prefix)["variables"].values())
    parameters = drawn + sum(int(np.prod(shape)) for name, shape in tf.train.list_variables(prefix)
                             if not name.startswith("global_step"))
    paths = {way: frozen_exports.export(root, prefix, "classifier", way, max_seq_length=128)
             for way in ("values", "seed")}
    seconds = {way: [] for way in paths}  # the loads' own, not the processes'
    last = harness.interleave({way: lambda path=path: load_once(path) for way, path in paths.items()}, rounds,
                              each=lambda _, way, answer: seconds[way].append(answer[0]))[1]
    if last["seed"][1] != last["values"][1]:
        raise RuntimeError("%s: the seed export's logits %s differ from the full export's %s."
                           % (size, last["seed"][1], last["values"][1]))
    row = [size, "{:,}".format(parameters), "{:,}".format(drawn)]
    for way in ("values", "seed"):
        megabytes = sum(f.stat().st_size for f in pathlib.Path(paths[way]).rglob("*") if f.is_file()) / 1e6
        row += ["%.1f" % megabytes, "%.2f" % harness.median_and_spread(seconds[way])[0], harness.spread(seconds[way])]
    print("%s done" % size, flush=True)
    return row + ["%.2f" % harness.paired_ratio(seconds["seed"], seconds["values"]), "bitwise"]


def main(argv):
    del argv
    harness.print_header("SavedModel load benchmark: frozen weights drawn at load (seed) vs stored (values)",
                         "float32; load = tf.saved_model.load in a fresh python -I process, median of %d, the two "
                         "exports in turns; seed/values = median of the paired ratios" % FLAGS.load_rounds)
    with (contextlib.nullcontext(FLAGS.load_work_dir) if FLAGS.load_work_dir else
          tempfile.TemporaryDirectory(prefix="saved_model_load_", ignore_cleanup_errors=True)) as work_dir:
        rows = [measure(pathlib.Path(work_dir) / size, size, FLAGS.load_rounds) for size in FLAGS.load_sizes]
    harness.print_table([], ["size", "parameters", "drawn at load", "values MB", "values load s", "spread", "seed MB",
                             "seed load s", "spread", "seed/values", "outputs"], rows)
    return 0


if __name__ == "__main__":
    app.run(main)
