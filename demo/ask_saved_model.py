"""Asks the demo's exported SavedModels, with TensorFlow and tensorflow-text alone.

  python -I demo/ask_saved_model.py REQUESTS.json

REQUESTS.json: {"squad": {"export": DIR, "questions": [{"question", "context", "gold"}]},
                "mnli": {"export": DIR, "pairs": [{"premise", "hypothesis", "gold"}]},
                "frozen": {"seed": DIR, "full": DIR, "pairs": [...], "loads": N}}
(each key optional; "loads" defaults to LOADS)
Nothing of this repository is imported (python -I keeps it off sys.path), as
on a serving machine: the tokenizer and the answer selection are in the graph.

"frozen" compares two exports of one checkpoint: "seed" draws its frozen random
weights when loaded (--save_frozen=seed), "full" stores them. Printed: their
sizes on disk, their load times (alternated, the median of LOADS each), and
whether their outputs on the pairs are bitwise equal; exits 1 if they are not.
"""

import json
import os
import statistics
import sys
import time

import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import  (registers the tokenizer ops)

LOADS = 3


def _strings(values):
    return [v.decode("utf-8") for v in values.numpy()]


def ask_squad(squad):
    answer = tf.saved_model.load(squad["export"]).signatures["serving_default"]
    questions = squad["questions"]
    got = answer(question=tf.constant([q["question"] for q in questions]),
                 context=tf.constant([q["context"] for q in questions]))
    print("SQuAD SavedModel %s:" % squad["export"])
    impossible = got["is_impossible"].numpy() if "is_impossible" in got else [False] * len(questions)
    context = None
    for q, text, impossible in zip(questions, _strings(got["answer"]), impossible):
        if q["context"] != context:
            context = q["context"]
            print("  context:  %s" % context[:160] + ("..." if len(context) > 160 else ""))
        print("  question: %s" % q["question"])
        print("  answer:   %r%s  (gold: %r)" % (text, " (no answer)" if impossible else "", q["gold"]))


def ask_mnli(mnli):
    classify = tf.saved_model.load(mnli["export"]).signatures["serving_default"]
    pairs = mnli["pairs"]
    got = classify(text_a=tf.constant([p["premise"] for p in pairs]),
                   text_b=tf.constant([p["hypothesis"] for p in pairs]))
    print("MNLI SavedModel %s:" % mnli["export"])
    for p, label, probabilities in zip(pairs, _strings(got["label"]), got["probabilities"].numpy()):
        print("  %s || %s -> %s (p=%.2f; gold: %s)" % (p["premise"][:80], p["hypothesis"], label,
                                                      probabilities.max(), p["gold"]))


def main(requests_file):
    """Asks each SavedModel of the requests file; 1 if the frozen exports' outputs differ, else 0."""
    with open(requests_file, encoding="utf-8") as f:
        requests = json.load(f)
    if "squad" in requests:
        ask_squad(requests["squad"])
    if "mnli" in requests:
        ask_mnli(requests["mnli"])
    if "frozen" in requests and not compare_frozen(requests["frozen"]):
        return 1
    return 0


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(path) for name in names)


def _bitwise_equal(a, b):
    if a.dtype.kind == "O":  # strings: equal values (their bytes would be pointers)
        return a.shape == b.shape and a.tolist() == b.tolist()
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def compare_frozen(frozen):
    """The seeded export beside the full one: size, load time, bitwise outputs; False if they differ."""
    seconds = {"seed": [], "full": []}
    outputs = {}
    pairs = frozen["pairs"]
    loads = frozen.get("loads", LOADS)
    for _ in range(loads):
        for kind in ("full", "seed"):
            start = time.perf_counter()
            loaded = tf.saved_model.load(frozen[kind])
            seconds[kind].append(time.perf_counter() - start)
            got = loaded.signatures["serving_default"](text_a=tf.constant([p["premise"] for p in pairs]),
                                                       text_b=tf.constant([p["hypothesis"] for p in pairs]))
            outputs[kind] = {key: value.numpy() for key, value in got.items()}
    size = {kind: directory_bytes(frozen[kind]) for kind in seconds}
    load = {kind: statistics.median(values) for kind, values in seconds.items()}
    differing = sorted(key for key in outputs["full"] if not _bitwise_equal(outputs["full"][key], outputs["seed"][key]))
    print("MNLI SavedModel of the frozen run, its frozen weights drawn from their seed at load %s:" % frozen["seed"])
    change = 1 - size["seed"] / size["full"]
    print("  on disk:  %.2f MB, against %.2f MB with them stored (%s): %.0f%% %s"
          % (size["seed"] / 1e6, size["full"] / 1e6, frozen["full"], 100 * abs(change),
             "smaller" if change >= 0 else "larger"))
    print("  load:     %.2f s, against %.2f s (%+.2f s; %s each, alternated)"
          % (load["seed"], load["full"], load["seed"] - load["full"],
             "median of %d loads" % loads if loads > 1 else "one load"))
    print("  outputs on the %d pairs: %s" % (
        len(pairs), "bitwise equal to the full export's (%s)" % ", ".join(sorted(outputs["full"]))
        if not differing else "DIFFERENT from the full export's in %s" % ", ".join(differing)))
    return not differing


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
