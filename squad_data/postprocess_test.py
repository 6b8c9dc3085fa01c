"""Tests for squad_data.postprocess on hand-built logits."""

import json
import math
import os

import numpy as np
import pytest
from official.nlp.tools import tokenization as model_garden_tokenization

import file_system
import tokenization
from squad_data import examples as squad_examples
from squad_data import features as squad_features
from squad_data import postprocess

NUMBERS = "zero one two three four five six seven eight nine"
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "what", "who", "the", "quick", "brown", "fox",
         "jumps", ","] + NUMBERS.split()
LOW = -10.0  # logit of every position a test does not set

# Words: The(0) Quick(1) Brown(2) Fox(3) jumps,(4). Tokens of its one window:
# [CLS](0) what(1) [SEP](2) the(3) quick(4) brown(5) fox(6) jumps(7) ,(8) [SEP](9)
FOX = "The Quick Brown Fox jumps,"
SEQ = 16


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.txt")
    with open(path, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    return tokenization.FullTokenizer(path, do_lower_case=True)


def _prepare(tokenizer, context, question="what", max_seq_length=SEQ, doc_stride=8):
    tokens, _ = squad_examples.split_context(context)
    example = squad_examples.SquadExample(qas_id="q1", question_text=question, doc_tokens=tokens)
    features = squad_features.convert_examples_to_features(
        [example], tokenizer, max_seq_length=max_seq_length, doc_stride=doc_stride,
        max_query_length=4, is_training=False)
    return [example], features


def _logits(length, **values):
    """A list of `length` LOW logits with {position: value} set."""
    logits = [LOW] * length
    for position, value in values.items():
        logits[int(position[1:])] = value
    return logits


def _run(examples, features, starts, ends, n_best_size=3, max_answer_length=30, **kwargs):
    results = [postprocess.RawResult(f.unique_id, s, e)
               for f, s, e in zip(features, starts, ends)]
    return postprocess.postprocess_predictions(
        examples, features, results, n_best_size=n_best_size,
        max_answer_length=max_answer_length, do_lower_case=True, **kwargs)


def test_best_span_nbest_order_and_probabilities(tokenizer):
    examples, features = _prepare(tokenizer, FOX)
    assert features[0].tokens[5:7] == ["brown", "fox"]
    # Top-3 starts: 5, 4, 0 ([CLS], invalid); ends: 6, 5, 0. Valid spans:
    # (5,6)=10, (4,6)=8, (5,5)=7, (4,5)=5; three are kept.
    starts = [_logits(SEQ, p5=5.0, p4=3.0)]
    ends = [_logits(SEQ, p6=5.0, p5=2.0)]
    out = _run(examples, features, starts, ends)
    # Original casing comes back through get_final_text.
    assert out.predictions == {"q1": "Brown Fox"}
    assert out.null_odds is None
    nbest = out.nbest["q1"]
    assert [e["text"] for e in nbest] == ["Brown Fox", "Quick Brown Fox", "Brown"]
    assert [(e["start_logit"], e["end_logit"]) for e in nbest] == [(5, 5), (3, 5), (5, 2)]
    norm = 1 + math.exp(-2) + math.exp(-3)
    assert [e["probability"] for e in nbest] == pytest.approx(
        [1 / norm, math.exp(-2) / norm, math.exp(-3) / norm], abs=1e-12)
    assert sum(e["probability"] for e in nbest) == pytest.approx(1.0, abs=1e-12)


def test_text_aligned_back_without_trailing_punctuation(tokenizer):
    examples, features = _prepare(tokenizer, FOX)
    # "jumps" is token 7 of the word "jumps,": the comma is not predicted.
    out = _run(examples, features, [_logits(SEQ, p7=1.0)], [_logits(SEQ, p7=1.0)])
    assert out.predictions["q1"] == "jumps"


def test_max_answer_length(tokenizer):
    examples, features = _prepare(tokenizer, FOX)
    starts = [_logits(SEQ, p5=5.0, p4=3.0)]
    ends = [_logits(SEQ, p6=5.0, p5=2.0)]
    out = _run(examples, features, starts, ends, max_answer_length=1)
    assert [e["text"] for e in out.nbest["q1"]] == ["Brown"]
    assert out.nbest["q1"][0]["probability"] == 1.0
    out = _run(examples, features, starts, ends, max_answer_length=2)
    assert [e["text"] for e in out.nbest["q1"]] == ["Brown Fox", "Brown", "Quick Brown"]


def _number_windows(tokenizer):
    # Same windows as features_test: doc tokens [0-5], [3-8], [6-9], a doc
    # token i at position 3 + i - window start. "five" (5) is not max context
    # in window 0; "six" and "seven" are in window 1.
    examples, features = _prepare(tokenizer, NUMBERS, question="who", max_seq_length=10,
                                  doc_stride=3)
    assert len(features) == 3 and features[0].token_is_max_context[8] is False
    return examples, features


def test_start_outside_max_context_ignored(tokenizer):
    examples, features = _number_windows(tokenizer)
    starts = [_logits(10, p8=10.0), _logits(10, p6=3.0), _logits(10)]
    ends = [_logits(10, p8=10.0), _logits(10, p7=3.0), _logits(10)]
    out = _run(examples, features, starts, ends)
    # "five" in window 0 would score 20 but its start lacks max context.
    assert out.predictions["q1"] == "six seven"
    assert "five" not in [e["text"] for e in out.nbest["q1"]]


def test_v2_null_decision_at_threshold(tokenizer):
    examples, features = _prepare(tokenizer, FOX)
    # Null score 1 + 1 = 2; best non-null "Brown Fox" 0.75 + 0.75 = 1.5.
    starts = [_logits(SEQ, p0=1.0, p5=0.75)]
    ends = [_logits(SEQ, p0=1.0, p6=0.75)]
    for threshold, answer in [(0.5 - 1e-6, ""), (0.5, "Brown Fox"), (0.5 + 1e-6, "Brown Fox")]:
        out = _run(examples, features, starts, ends, version_2_with_negative=True,
                   null_score_diff_threshold=threshold)
        assert out.predictions["q1"] == answer, threshold
        assert out.null_odds["q1"] == 0.5
        texts = [e["text"] for e in out.nbest["q1"]]
        assert texts[0] == "" and "Brown Fox" in texts


def test_v2_null_score_is_min_over_windows(tokenizer):
    examples, features = _number_windows(tokenizer)
    # [CLS] scores per window: 4, 1, 3 -> null 1; best answer "six" 0.5.
    starts = [_logits(10, p0=2.0), _logits(10, p0=0.5, p6=0.25), _logits(10, p0=1.0)]
    ends = [_logits(10, p0=2.0), _logits(10, p0=0.5, p6=0.25), _logits(10, p0=2.0)]
    out = _run(examples, features, starts, ends, version_2_with_negative=True,
               null_score_diff_threshold=0.0)
    assert out.null_odds["q1"] == 0.5
    assert out.predictions["q1"] == ""
    null_entry = [e for e in out.nbest["q1"] if e["text"] == ""][0]
    assert (null_entry["start_logit"], null_entry["end_logit"]) == (0.5, 0.5)
    out = _run(examples, features, starts, ends, version_2_with_negative=True,
               null_score_diff_threshold=0.6)
    assert out.predictions["q1"] == "six"


def test_no_valid_span_does_not_crash(tokenizer):
    examples, features = _prepare(tokenizer, FOX)
    # With n_best_size=1 the only candidate is [CLS]-[CLS]: no non-null span.
    starts = [_logits(SEQ, p0=3.0)]
    ends = [_logits(SEQ, p0=4.0)]
    out = _run(examples, features, starts, ends, n_best_size=1)
    assert out.predictions == {"q1": "empty"}
    assert out.nbest["q1"] == [
        {"text": "empty", "probability": 1.0, "start_logit": 0.0, "end_logit": 0.0}]
    # The original crashes here (best non-null entry is None).
    out = _run(examples, features, starts, ends, n_best_size=1, version_2_with_negative=True)
    assert out.predictions == {"q1": ""}
    assert [e["text"] for e in out.nbest["q1"]] == [""]
    assert out.null_odds == {"q1": 7.0}


def test_missing_results_and_batches(tokenizer):
    examples, features = _number_windows(tokenizer)
    ids = np.array([f.unique_id for f in features[1:]], dtype=np.int32)
    starts = np.full((2, 10), LOW, dtype=np.float32)
    ends = np.full((2, 10), LOW, dtype=np.float32)
    starts[0, 6] = ends[0, 7] = 3.0
    results = postprocess.results_from_batch(ids, starts, ends)
    assert type(results[0].start_logits[0]) is float and type(results[0].unique_id) is int
    # Window 0 has no result (a dropped batch): the others still answer.
    out = postprocess.postprocess_predictions(examples, features, results, n_best_size=3,
                                              max_answer_length=30, do_lower_case=True)
    assert out.predictions["q1"] == "six seven"
    json.dumps(out.nbest)  # float32 logits would not serialise


def test_json_files(tokenizer, tmp_path):
    examples, features = _prepare(tokenizer, FOX)
    starts = [_logits(SEQ, p0=1.0, p5=0.75)]
    ends = [_logits(SEQ, p0=1.0, p6=0.75)]
    for version_2 in (False, True):
        out_dir = str(tmp_path / ("v2" if version_2 else "v1"))
        os.makedirs(out_dir)
        out = _run(examples, features, starts, ends, version_2_with_negative=version_2)
        paths = postprocess.write_prediction_files(out_dir, out)
        names = sorted(["predictions.json", "nbest_predictions.json"] + (
            ["null_odds.json"] if version_2 else []))
        assert sorted(os.listdir(out_dir)) == names
        assert sorted(os.path.basename(p) for p in paths.values()) == names
        for path, obj in [(paths["predictions"], out.predictions), (paths["nbest"], out.nbest)]:
            with open(path) as f:
                assert f.read() == json.dumps(obj, indent=4) + "\n"
        with open(paths["predictions"]) as f:
            assert json.load(f) == {"q1": "" if version_2 else "Brown Fox"}
        with open(paths["nbest"]) as f:
            nbest = json.load(f)
        assert list(nbest) == ["q1"]
        for entry in nbest["q1"]:
            assert list(entry) == ["text", "probability", "start_logit", "end_logit"]
        if version_2:
            with open(paths["null_odds"]) as f:
                assert f.read() == json.dumps({"q1": 0.5}, indent=4) + "\n"


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_model_garden_basic_tokenizer_matches_ours(do_lower_case):
    # get_final_text aligns with Model Garden's BasicTokenizer; it must split
    # like ours for the alignment to hold.
    ours = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    theirs = model_garden_tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    for text in ["Steve Smith's (1895-1943).", "Café NAÏVE\u00a0x\u202fy", "北京大学 $5^2",
                 "a\u0000b\ufffdc\u200bd\te", "«Ωμέγα»—done…"]:
        assert ours.tokenize(text) == theirs.tokenize(text)


def test_interrupted_writes_leave_no_prediction_file(tokenizer, tmp_path, monkeypatch):
    examples, features = _prepare(tokenizer, FOX)
    out = _run(examples, features, [_logits(SEQ, p5=5.0)], [_logits(SEQ, p6=5.0)],
               version_2_with_negative=True)

    real_open = file_system.open_file

    class DiskFull:
        """Every write lands, then fails: an interrupted run."""

        def __init__(self, path, mode="r"):
            self._file = real_open(path, mode)

        def write(self, data):
            self._file.write(data)
            raise OSError("disk full")

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            self._file.close()

    monkeypatch.setattr(file_system, "open_file", DiskFull)
    with pytest.raises(OSError, match="disk full"):
        postprocess.write_prediction_files(str(tmp_path), out)
    assert os.listdir(str(tmp_path)) == []
