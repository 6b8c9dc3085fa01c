"""Tests for squad_data.examples on hand-built SQuAD JSON."""

import json
import os
import re

import pytest

from squad_data import examples as squad_examples

# Words: The(0) cat(1) sat(2) on(3) the(4) mat.(5) It(6) was(7) happy.(8)
# Separators: U+202F between cat/sat, a tab, a newline and a double space.
CONTEXT = "The cat\u202fsat on\tthe mat.\nIt was  happy."


def _write(tmp_path, obj, name="squad.json"):
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def _squad(qas, context=CONTEXT):
    return {"version": "x", "data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": qas}]}]}


def _qa(qid, text, start, **extra):
    qa = {"id": qid, "question": "where?", "answers": [{"text": text, "answer_start": start}]}
    qa.update(extra)
    return qa


def test_split_context_on_original_whitespace_only():
    tokens, offsets = squad_examples.split_context(CONTEXT)
    assert tokens == ["The", "cat", "sat", "on", "the", "mat.", "It", "was", "happy."]
    assert len(offsets) == len(CONTEXT)
    assert offsets[CONTEXT.index("sat")] == 2
    # A separator belongs to the word before it.
    assert offsets[CONTEXT.index("\u202f")] == 1
    # Other Unicode spaces (U+00A0) do not split, as in the original.
    assert squad_examples.split_context("a\u00a0b c")[0] == ["a\u00a0b", "c"]
    assert squad_examples.split_context("  x")[1] == [-1, -1, 0]


def test_answer_start_mapped_to_word_positions(tmp_path):
    path = _write(tmp_path, _squad([
        _qa("q-mat", "the mat", CONTEXT.index("the mat")),
        # A sub-word answer maps to the whole word, as in the original.
        _qa("q-at", "at", CONTEXT.index("cat") + 1),
        _qa("q-span", "sat on the", CONTEXT.index("sat")),
    ]))
    read = squad_examples.read_squad_examples(path, is_training=True,
                                              version_2_with_negative=False)
    assert read.num_skipped == 0
    by_id = {e.qas_id: e for e in read.examples}
    assert (by_id["q-mat"].start_position, by_id["q-mat"].end_position) == (4, 5)
    assert by_id["q-mat"].orig_answer_text == "the mat"
    assert (by_id["q-at"].start_position, by_id["q-at"].end_position) == (1, 1)
    assert (by_id["q-span"].start_position, by_id["q-span"].end_position) == (2, 4)
    assert by_id["q-mat"].doc_tokens[2] == "sat"
    assert by_id["q-mat"].question_text == "where?"


def test_unrecoverable_answer_skipped_and_counted(tmp_path):
    path = _write(tmp_path, _squad([
        _qa("good", "cat", CONTEXT.index("cat")),
        _qa("wrong-text", "dog", CONTEXT.index("cat")),
        _qa("past-end", "happy. and more", CONTEXT.index("happy")),
    ]))
    read = squad_examples.read_squad_examples(path, is_training=True,
                                              version_2_with_negative=False)
    assert [e.qas_id for e in read.examples] == ["good"]
    assert read.skipped_ids == ["wrong-text", "past-end"]
    assert read.num_skipped == 2
    # Prediction does not look at answers, so nothing is skipped.
    read = squad_examples.read_squad_examples(path, is_training=False,
                                              version_2_with_negative=False)
    assert len(read.examples) == 3 and read.num_skipped == 0
    assert read.examples[0].start_position is None


def test_v2_impossible_questions(tmp_path):
    qas = [
        {"id": "imp", "question": "why?", "answers": [], "is_impossible": True,
         "plausible_answers": [{"text": "cat", "answer_start": 4}]},
        _qa("pos", "cat", 4, is_impossible=False),
    ]
    path = _write(tmp_path, _squad(qas))
    read = squad_examples.read_squad_examples(path, is_training=True,
                                              version_2_with_negative=True)
    imp, pos = read.examples
    assert imp.is_impossible
    assert (imp.start_position, imp.end_position, imp.orig_answer_text) == (-1, -1, "")
    assert not pos.is_impossible and pos.start_position == 1
    # Without the v2 flag an impossible question is just one with no answer.
    with pytest.raises(ValueError, match="imp"):
        squad_examples.read_squad_examples(path, is_training=True,
                                           version_2_with_negative=False)


def test_training_needs_exactly_one_answer(tmp_path):
    two = {"id": "q-two-answers", "question": "?", "answers": [
        {"text": "cat", "answer_start": 4}, {"text": "the cat", "answer_start": 0}]}
    path = _write(tmp_path, _squad([_qa("ok", "cat", 4), two]))
    with pytest.raises(ValueError, match=r"q-two-answers has 2"):
        squad_examples.read_squad_examples(path, is_training=True,
                                           version_2_with_negative=False)
    # Dev files have several answers per question: fine for prediction.
    read = squad_examples.read_squad_examples(path, is_training=False,
                                              version_2_with_negative=False)
    assert len(read.examples) == 2


def test_missing_data_list_names_file_and_expectation(tmp_path):
    for i, bad in enumerate([{"version": "1.1"}, {"data": {"paragraphs": []}}, [1, 2]]):
        path = _write(tmp_path, bad, name="bad%d.json" % i)
        with pytest.raises(ValueError) as info:
            squad_examples.read_squad_examples(path, True, False)
        assert path in str(info.value) and '"data" list' in str(info.value)
    path = os.path.join(str(tmp_path), "broken.json")
    with open(path, "w") as f:
        f.write("{not json")
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        squad_examples.load_squad_data(path)


def test_missing_file_names_path(tmp_path):
    path = os.path.join(str(tmp_path), "nowhere", "train-v1.1.json")
    with pytest.raises(FileNotFoundError, match="nowhere/train-v1.1.json"):
        squad_examples.read_squad_examples(path, True, False)


def test_blank_or_leading_whitespace_answers(tmp_path):
    context = " cat sat"
    path = _write(tmp_path, _squad([
        _qa("leading", " cat", 0),  # starts on the space before word 0
        _qa("blank", "  ", 0),
    ], context=context))
    read = squad_examples.read_squad_examples(path, True, False)
    assert [(e.qas_id, e.start_position, e.end_position) for e in read.examples] == [
        ("leading", 0, 0)]
    assert read.skipped_ids == ["blank"]


def test_byte_that_is_not_utf8_names_file_line_and_column(tmp_path):
    path = os.path.join(str(tmp_path), "train.json")
    with open(path, "wb") as f:
        f.write('{"data": [\n  {"title": "t",\n   "paragraphs": ["é'.encode("utf-8") + b"\xfe" + b'"]}]}')
    # Column 21 in characters: "é" is two bytes but one column.
    with pytest.raises(ValueError) as info:
        squad_examples.read_squad_examples(path, True, False)
    assert str(info.value) == "SQuAD file %s line 3: not valid UTF-8 (byte 0xfe at column 21)." % path


def _without(obj, key):
    del obj[key]


# (change to a valid one-question file, the JSON path and what the message says of it).
_MALFORMED = [
    (lambda d: d["data"].append(3), "data[1] is 3; expected an object"),
    (lambda d: _without(d["data"][0], "paragraphs"), "data[0].paragraphs is missing; expected a list"),
    (lambda d: _without(d["data"][0]["paragraphs"][0], "context"),
     "data[0].paragraphs[0].context is missing; expected a string"),
    (lambda d: _without(d["data"][0]["paragraphs"][0], "qas"), "data[0].paragraphs[0].qas is missing; expected a list"),
    (lambda d: _without(d["data"][0]["paragraphs"][0]["qas"][0], "id"),
     "data[0].paragraphs[0].qas[0].id is missing; expected a string"),
    (lambda d: _without(d["data"][0]["paragraphs"][0]["qas"][0], "question"),
     "data[0].paragraphs[0].qas[0].question is missing; expected a string"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(answers=None),
     "data[0].paragraphs[0].qas[0].answers is null; expected a list"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start="4"),
     'data[0].paragraphs[0].qas[0].answers[0].answer_start is "4"; expected an integer'),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=True),
     "data[0].paragraphs[0].qas[0].answers[0].answer_start is true; expected an integer"),
    (lambda d: _without(d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0], "text"),
     "data[0].paragraphs[0].qas[0].answers[0].text is missing; expected a string"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(answers=["cat"]),
     'data[0].paragraphs[0].qas[0].answers[0] is "cat"; expected an object'),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(is_impossible="no"),
     'data[0].paragraphs[0].qas[0].is_impossible is "no"; expected true or false'),
]


@pytest.mark.parametrize("change, message", _MALFORMED)
def test_malformed_structure_names_file_and_json_path(tmp_path, change, message):
    data = _squad([_qa("q", "cat", 4)])
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(ValueError, match="^%s$" % re.escape("SQuAD file %s: %s." % (path, message))):
        squad_examples.read_squad_examples(path, is_training=True, version_2_with_negative=True)


def test_prediction_checks_what_it_and_evaluation_read(tmp_path):
    # Test-style files carry no answers; an answer's offset is not read.
    qas = [{"id": "a", "question": "?"}, _qa("b", "cat", "not read"), _qa("c", "cat", 4)]
    path = _write(tmp_path, _squad(qas))
    assert len(squad_examples.read_squad_examples(path, False, False).examples) == 3
    qas[2]["answers"].append({"answer_start": 4})  # Evaluation reads each answer's text.
    path = _write(tmp_path, _squad(qas))
    message = "SQuAD file %s: data[0].paragraphs[0].qas[2].answers[1].text is missing; expected a string." % path
    with pytest.raises(ValueError, match="^%s$" % re.escape(message)):
        squad_examples.read_squad_examples(path, False, False)
    path = _write(tmp_path, _squad([{"id": 7, "question": "?"}]))
    with pytest.raises(ValueError, match=r"qas\[0\]\.id is 7; expected a string\.$"):
        squad_examples.read_squad_examples(path, False, False)
