"""Asks the demo's exported SavedModels, with TensorFlow and tensorflow-text alone.

  python -I demo/ask_saved_model.py REQUESTS.json

REQUESTS.json: {"squad": {"export": DIR, "questions": [{"question", "context", "gold"}]},
                "mnli": {"export": DIR, "pairs": [{"premise", "hypothesis", "gold"}]}}
Nothing of this repository is imported (python -I keeps it off sys.path), as
on a serving machine: the tokenizer and the answer selection are in the graph.
"""

import json
import sys

import tensorflow as tf
import tensorflow_text  # noqa: F401  pylint: disable=unused-import  (registers the tokenizer ops)


def _strings(values):
    return [v.decode("utf-8") for v in values.numpy()]


def main(requests_file):
    with open(requests_file, encoding="utf-8") as f:
        requests = json.load(f)
    squad = requests["squad"]
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
    mnli = requests["mnli"]
    classify = tf.saved_model.load(mnli["export"]).signatures["serving_default"]
    pairs = mnli["pairs"]
    got = classify(text_a=tf.constant([p["premise"] for p in pairs]),
                   text_b=tf.constant([p["hypothesis"] for p in pairs]))
    print("MNLI SavedModel %s:" % mnli["export"])
    for p, label, probabilities in zip(pairs, _strings(got["label"]), got["probabilities"].numpy()):
        print("  %s || %s -> %s (p=%.2f; gold: %s)" % (p["premise"][:80], p["hypothesis"], label,
                                                      probabilities.max(), p["gold"]))


if __name__ == "__main__":
    main(sys.argv[1])
