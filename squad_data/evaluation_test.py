"""Tests for squad_data.evaluation: hand-computed official metrics."""

import json
import os

import pytest
from official.nlp.tools import squad_evaluate_v1_1
from official.nlp.tools import squad_evaluate_v2_0

from squad_data import evaluation


def _dataset(qas):
    return [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]


def _qa(qid, *answers, **extra):
    qa = {"id": qid, "question": "?",
          "answers": [{"text": a, "answer_start": 0} for a in answers]}
    qa.update(extra)
    return qa


V1 = _dataset([
    _qa("a", "the cat"),
    _qa("b", "big red dog", "dog"),
    _qa("c", "Paris"),
])
# a: "cat" == "the cat" after removing articles -> EM 1, F1 1.
# b: "red dog" vs "big red dog": P 1, R 2/3 -> F1 0.8 (vs "dog": 2/3) -> EM 0.
# c: wrong -> 0, 0.
V1_PREDICTIONS = {"a": "Cat.", "b": "red dog", "c": "London"}

V2 = _dataset([
    _qa("h1", "blue sky"),
    _qa("h2", "green"),
    _qa("n1", is_impossible=True),
    _qa("n2", is_impossible=True),
])
V2_PREDICTIONS = {"h1": "the blue sky today", "h2": "", "n1": "", "n2": "red"}
V2_NULL_ODDS = {"h1": -2.0, "h2": 3.0, "n1": 1.5, "n2": -1.0}


def test_v1_percent_hand_computed():
    metrics = evaluation.evaluate_v1_1(V1, V1_PREDICTIONS)
    assert list(metrics) == ["exact_match", "f1"]
    assert metrics["exact_match"] == pytest.approx(100.0 / 3)
    assert metrics["f1"] == pytest.approx(100.0 * 1.8 / 3)
    # Same numbers as Model Garden's fractions, in percent.
    fractions = squad_evaluate_v1_1.evaluate(V1, V1_PREDICTIONS)
    assert metrics["exact_match"] == pytest.approx(100 * fractions["exact_match"], abs=1e-12)
    assert metrics["f1"] == pytest.approx(100 * fractions["final_f1"], abs=1e-12)
    # A missing prediction scores 0 over the same total.
    assert evaluation.evaluate(V1, {"a": "cat"}, False)["exact_match"] == pytest.approx(100 / 3)


def test_v2_hand_computed_with_null_odds():
    # Odds > 1.0 count as "no answer" (official na_prob_thresh): h2 (3.0) ->
    # 0 as it has an answer, n1 (1.5) -> 1. h1: "blue sky today" vs "blue
    # sky": EM 0, F1 0.8. n2 answers "red" to an impossible question -> 0.
    metrics = evaluation.evaluate_v2_0(V2, V2_PREDICTIONS, V2_NULL_ODDS)
    expected = {
        "exact": 25.0, "f1": 45.0, "total": 4,
        "HasAns_exact": 0.0, "HasAns_f1": 40.0, "HasAns_total": 2,
        "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2,
        # Sweep thresholds over odds h1 -2, n2 -1, n1 1.5, h2 3 from "all
        # null" (2 of 4): answering h1 adds its score (EM 0, F1 0.8), n2
        # subtracts 1. Best F1 is 2.8 / 4 at threshold -2; EM never beats 2.
        "best_exact": 50.0, "best_exact_thresh": 0.0,
        "best_f1": 70.0, "best_f1_thresh": -2.0,
    }
    assert list(metrics) == list(expected)
    assert metrics == pytest.approx(expected, abs=1e-9)


def test_v2_matches_model_garden_and_official_keys():
    metrics = evaluation.evaluate(V2, V2_PREDICTIONS, True, V2_NULL_ODDS)
    raw = squad_evaluate_v2_0.evaluate(V2, V2_PREDICTIONS, na_probs=V2_NULL_ODDS)
    for key in ["exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                "NoAns_exact", "NoAns_f1", "NoAns_total"]:
        assert metrics[key] == raw[key]
    for ours, theirs in [("best_exact", "final_exact"), ("best_f1", "final_f1"),
                         ("best_exact_thresh", "final_exact_thresh"),
                         ("best_f1_thresh", "final_f1_thresh")]:
        assert metrics[ours] == raw[theirs]
    # Without null odds (official script without --na-prob-file): no best_*.
    metrics = evaluation.evaluate_v2_0(V2, V2_PREDICTIONS)
    assert "best_f1" not in metrics and not any(k.startswith("pr_") for k in metrics)
    # Nothing thresholded: n1 and h2 keep their raw scores.
    assert metrics["exact"] == 25.0 and metrics["f1"] == 45.0
    # Only answerable questions: no NoAns_* keys, as the official script;
    # predictions for other ids are ignored.
    answerable = _dataset(V2[0]["paragraphs"][0]["qas"][:2])
    only_has = evaluation.evaluate_v2_0(answerable, V2_PREDICTIONS, V2_NULL_ODDS)
    assert "NoAns_total" not in only_has and only_has["total"] == 2
    assert only_has["HasAns_f1"] == pytest.approx(40.0)


def test_has_answers():
    assert evaluation.has_answers(V1, version_2_with_negative=False)
    assert evaluation.has_answers(V2, version_2_with_negative=True)
    # Empty answers on a v2 impossible question only.
    assert not evaluation.has_answers(V2, version_2_with_negative=False)
    test_style = _dataset([{"id": "x", "question": "?"}])
    assert not evaluation.has_answers(test_style, True)
    all_empty = _dataset([_qa("x"), _qa("y")])
    assert not evaluation.has_answers(all_empty, True)
    assert not evaluation.has_answers(_dataset([]), False)


def test_write_eval_results(tmp_path):
    metrics = evaluation.evaluate_v2_0(V2, V2_PREDICTIONS, V2_NULL_ODDS)
    path = evaluation.write_eval_results(str(tmp_path), metrics)
    assert path == os.path.join(str(tmp_path), "eval_results.json")
    with open(path) as f:
        text = f.read()
    assert text == json.dumps(metrics, indent=4) + "\n"
    assert list(json.loads(text)) == list(metrics)
    other = evaluation.write_eval_results(str(tmp_path / "v1.json"),
                                          evaluation.evaluate_v1_1(V1, V1_PREDICTIONS))
    with open(other) as f:
        assert sorted(json.load(f)) == ["exact_match", "f1"]
