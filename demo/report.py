"""What the demo prints beside its numbers: the chance and majority rates, sizes, the probe's verdict.

Every score the demo prints comes with the score of a guess that knows nothing
(the majority class, a random word of the context), so a reader sees at once
that the model learned something; the head-rank probe's summary is turned into
the one sentence it supports, worked out from the measured ranks.
"""

import csv
import glob
import json
import os
import random

from official.nlp.tools import squad_evaluate_v1_1


def majority_rate(tsv_path, label_column="gold_label"):
    """(share of the most frequent label, that label) in an MNLI-format TSV with a header.

    Raises:
      ValueError: naming the file when it has no `label_column` or no row.
    """
    with open(tsv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows or label_column not in rows[0]:
        raise ValueError("%s: expected a header with a %r column." % (tsv_path, label_column))
    column = rows[0].index(label_column)
    labels = [row[column] for row in rows[1:]]
    if not labels:
        raise ValueError("%s has no row under its header." % tsv_path)
    label = max(sorted(set(labels)), key=labels.count)
    return labels.count(label) / len(labels), label


def random_word_squad(json_path, draws=10, seed=12345):
    """SQuAD v1.1 exact match and F1 (0-100) of answering a random word of the context.

    The mean over `draws` seeded draws, scored by Model Garden's SQuAD v1.1
    evaluation (the one run_squad.py reports with).
    """
    with open(json_path, encoding="utf-8") as f:
        dataset = json.load(f)["data"]
    rng = random.Random(seed)
    totals = {"exact_match": 0.0, "final_f1": 0.0}
    for _ in range(draws):
        predictions = {qa["id"]: rng.choice(paragraph["context"].split())
                       for article in dataset for paragraph in article["paragraphs"] for qa in paragraph["qas"]}
        scores = squad_evaluate_v1_1.evaluate(dataset, predictions)
        for key in totals:
            totals[key] += scores[key]
    return 100 * totals["exact_match"] / draws, 100 * totals["final_f1"] / draws


def unless_above(score, baseline, name):
    """"" when score beats the baseline; otherwise a warning to print beside the score."""
    return "" if score > baseline else "   <- NOT above the %s" % name


def checkpoint_bytes(checkpoint_prefix):
    """Bytes of every file of a checkpoint (data shards, index, seed manifest)."""
    files = glob.glob(glob.escape(checkpoint_prefix) + ".*")
    if not files:
        raise ValueError("No checkpoint files at %s.*" % checkpoint_prefix)
    return sum(os.path.getsize(path) for path in files)


def megabytes(size):
    return "%.1f MB" % (size / 1e6)


def bottleneck_verdict(summary):
    """The sentence a head-rank probe summary supports (analysis/attention_rank.summarize's dict).

    Rank up to n for n <= d_p and rank d_p beyond is Theorem 1's bound met; a rank
    above min(d_p, n) would contradict it and is reported as such.
    """
    head_size = summary["head_size"]
    rows = summary["by_length"]
    heads = summary["num_layers"] * summary["num_heads"]
    short = [row for row in rows if row["num_tokens"] <= head_size]
    long = [row for row in rows if row["num_tokens"] > head_size]
    parts = []
    if short:
        full = sum(row["num_examples"] for row in short if row["min_rank"] == row["num_tokens"])
        parts.append("up to n = %d tokens every head's rank is n in %d of %d inputs" % (
            head_size, full, sum(row["num_examples"] for row in short)))
    if long:
        highest = max(row["max_rank"] for row in long)
        lowest = min(row["min_rank"] for row in long)
        inputs = sum(row["num_examples"] for row in long)
        span = "n = %d-%d" % (long[0]["num_tokens"], long[-1]["num_tokens"])
        if highest > head_size:
            parts.append("on %d longer inputs (%s) some head reached rank %d > d_p = %d, which Theorem 1 rules "
                         "out: check the probe" % (inputs, span, highest, head_size))
        elif lowest == head_size:
            parts.append("on all %d longer inputs (%s) all %d heads stop at rank d_p = %d, however long the "
                         "input: the low-rank bottleneck" % (inputs, span, heads, head_size))
        else:
            parts.append("on %d longer inputs (%s) no head exceeds rank d_p = %d (lowest %d): the low-rank "
                         "bottleneck" % (inputs, span, head_size, lowest))
    sentence = "; ".join(parts)
    return sentence[:1].upper() + sentence[1:] + "."


def against_unigram(curve, unigram_share, margin=1.5):
    """Each model's last held-out masked-LM accuracy read against the unigram rate.

    Args:
      curve: [(model label, step, accuracy, loss)], in training order.
      unigram_share: the share of the most frequent masked token, what a model that
        only learned word frequencies scores.
      margin: how many times the unigram rate counts as using context.

    Returns:
      One phrase per model, in first-seen order.
    """
    finals = {}
    for label, _, accuracy, _ in curve:
        finals[label] = accuracy
    return ["%s %.3f, %s" % (label, accuracy, "%.1fx the unigram rate: it uses context" % (accuracy / unigram_share)
                             if accuracy > margin * unigram_share
                             else "about the unigram rate: word frequencies, not yet context")
            for label, accuracy in finals.items()]
