"""The demo's baselines and the probe's verdict, against hand-worked values."""

import json

import pytest

from demo import report


def _tsv(path, labels, header=("index", "sentence1", "sentence2", "gold_label")):
    rows = ["\t".join(header)] + ["%d\ta\tb\t%s" % (i, label) for i, label in enumerate(labels)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_majority_rate_counts_the_gold_label_column(tmp_path):
    labels = ["neutral", "entailment", "entailment", "contradiction", "entailment"]
    assert report.majority_rate(_tsv(tmp_path / "dev.tsv", labels)) == (0.6, "entailment")
    # A tie goes to the first label in sorted order, whatever the file order.
    assert report.majority_rate(_tsv(tmp_path / "tie.tsv", ["neutral", "contradiction"])) == (0.5, "contradiction")


def test_majority_rate_names_the_file_and_the_missing_column(tmp_path):
    path = _tsv(tmp_path / "dev.tsv", ["neutral"], header=("index", "s1", "s2", "label"))
    with pytest.raises(ValueError, match=r"dev.tsv: expected a header with a 'gold_label' column"):
        report.majority_rate(path)
    with pytest.raises(ValueError, match=r"empty.tsv has no row under its header"):
        report.majority_rate(_tsv(tmp_path / "empty.tsv", []))


def _squad(path, questions):
    data = [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": str(i), "question": "q", "answers": [{"text": answer, "answer_start": context.index(answer)}]}]}]}
            for i, (context, answer) in enumerate(questions)]
    path.write_text(json.dumps({"version": "1.1", "data": data}))
    return str(path)


def test_random_word_squad_is_the_expected_score_of_a_random_word(tmp_path):
    # One-word contexts: the random word is the answer, EM = F1 = 100.
    assert report.random_word_squad(_squad(tmp_path / "a.json", [("Paris", "Paris")])) == (100.0, 100.0)
    # Four words, one of them the answer: EM and F1 are 100 with probability 1/4.
    em, f1 = report.random_word_squad(_squad(tmp_path / "b.json", [("red green blue Paris", "Paris")] * 50),
                                      draws=40)
    assert 20 < em < 30 and em == f1
    # A two-word answer: the matching word scores F1 2/3 (precision 1, recall 1/2), never an exact match.
    em, f1 = report.random_word_squad(_squad(tmp_path / "c.json", [("New York", "New York")]), draws=20)
    assert em == 0 and f1 == pytest.approx(100 * 2 / 3)


def test_checkpoint_bytes_sums_every_file_of_the_prefix(tmp_path):
    (tmp_path / "model.ckpt-5.index").write_bytes(b"x" * 10)
    (tmp_path / "model.ckpt-5.data-00000-of-00001").write_bytes(b"x" * 100)
    (tmp_path / "model.ckpt-5.frozen.json").write_bytes(b"x" * 3)
    (tmp_path / "model.ckpt-50.index").write_bytes(b"x" * 1000)  # another checkpoint
    assert report.checkpoint_bytes(str(tmp_path / "model.ckpt-5")) == 113
    with pytest.raises(ValueError, match=r"No checkpoint files at .*model.ckpt-7\.\*"):
        report.checkpoint_bytes(str(tmp_path / "model.ckpt-7"))


def _summary(rows, head_size=32):
    return {"head_size": head_size, "num_layers": 6, "num_heads": 12, "by_length": [
        {"num_tokens": n, "num_examples": k, "bound": min(head_size, n), "mean_rank": lo, "min_rank": lo,
         "max_rank": hi} for n, k, lo, hi in rows]}


def test_bottleneck_verdict_reads_the_ranks():
    met = report.bottleneck_verdict(_summary([(10, 2, 10, 10), (20, 1, 19, 20), (64, 3, 32, 32), (128, 2, 32, 32)]))
    assert met == ("Up to n = 32 tokens every head's rank is n in 2 of 3 inputs; on all 5 longer inputs "
                   "(n = 64-128) all 72 heads stop at rank d_p = 32, however long the input: the low-rank "
                   "bottleneck.")
    below = report.bottleneck_verdict(_summary([(64, 3, 30, 32)]))
    assert below == ("On 3 longer inputs (n = 64-64) no head exceeds rank d_p = 32 (lowest 30): the low-rank "
                     "bottleneck.")
    broken = report.bottleneck_verdict(_summary([(64, 3, 32, 40)]))
    assert "some head reached rank 40 > d_p = 32, which Theorem 1 rules out" in broken


def test_against_unigram_reads_each_models_last_accuracy():
    curve = [("unfrozen", 0, 0.001, 7.2), ("unfrozen", 600, 0.038, 5.9), ("freeze=ffn", 600, 0.112, 5.6)]
    assert report.against_unigram(curve, 0.045) == [
        "unfrozen 0.038, about the unigram rate: word frequencies, not yet context",
        "freeze=ffn 0.112, 2.5x the unigram rate: it uses context"]


def test_unless_above_warns_only_when_the_baseline_is_not_beaten():
    assert report.unless_above(0.61, 0.40, "majority class") == ""
    assert report.unless_above(0.40, 0.40, "majority class") == "   <- NOT above the majority class"
    assert report.unless_above(1.0, 2.2, "random word") == "   <- NOT above the random word"
