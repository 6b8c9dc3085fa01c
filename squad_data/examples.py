"""Reading SQuAD v1.1 / v2.0 JSON files into `SquadExample`s.

The original run_squad's reader, with its errors made explicit:
  - the context is split into words on " ", "\\t", "\\r", "\\n" and U+202F
    only (not on every Unicode space, so word offsets match the original);
  - for training, `answer_start` (a character offset) is mapped to word
    positions, and every answerable question needs exactly one answer;
  - answers whose text cannot be found in the words they map to are skipped
    with a warning and reported in `SquadReadResult.skipped_ids`;
  - SQuAD 2.0 `is_impossible` questions get positions -1 and answer "";
  - a value the reading needs that is missing or of the wrong JSON type is
    an error naming the file and its JSON path, not a KeyError.

Examples are Model Garden's `squad_lib.SquadExample`, so that its feature
conversion and post-processing take them as they are.
"""

import collections
import json

import tensorflow as tf
from absl import logging
from official.nlp.data import squad_lib

import tokenization

SquadExample = squad_lib.SquadExample

# Exactly the original's word separators. U+202F (narrow no-break space)
# occurs in SQuAD contexts; other Unicode spaces stay inside words.
SQUAD_WHITESPACE = frozenset([" ", "\t", "\r", "\n", "\u202f"])


class SquadReadResult(collections.namedtuple("SquadReadResult", ["examples", "skipped_ids"])):
    """What `read_squad_examples` returns.

    Fields:
      examples: list of `SquadExample`, in file order.
      skipped_ids: list of str, ids of the (training) questions left out
        because their answer text is not in the context words it points at.
    """

    @property
    def num_skipped(self):
        """int, the number of questions left out."""
        return len(self.skipped_ids)


def split_context(text):
    """Splits a context into words the way the original reader does.

    Args:
      text: str, a paragraph's "context".

    Returns:
      (doc_tokens, char_to_word_offset): doc_tokens is a list of str (the
      words); char_to_word_offset is a list of int [len(text)], the index of
      the word each character belongs to (a separator belongs to the word
      before it, -1 before the first word).
    """
    doc_tokens = []
    char_to_word_offset = []
    prev_is_whitespace = True
    for char in text:
        if char in SQUAD_WHITESPACE:
            prev_is_whitespace = True
        else:
            if prev_is_whitespace:
                doc_tokens.append(char)
            else:
                doc_tokens[-1] += char
            prev_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def _decode_utf8(data, input_file):
    """`data` as str; a bad byte is an error giving its line and column, as an editor counts them."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start:error.start].decode("utf-8")) + 1
        raise ValueError("SQuAD file %s line %d: not valid UTF-8 (byte 0x%02x at column %d)."
                         % (input_file, line, data[error.start], column)) from None


def load_squad_data(input_file):
    """Loads the top-level "data" list of a SQuAD JSON file.

    Args:
      input_file: str, any path `tf.io.gfile` can open (including gs://).

    Returns:
      list of article dicts ({"title", "paragraphs": [{"context", "qas"}]}),
      the input of the official evaluation scripts.

    Raises:
      FileNotFoundError: if `input_file` does not exist.
      ValueError: if it is not UTF-8 (naming the line and column), not JSON
        or has no top-level "data" list.
    """
    if not tf.io.gfile.exists(input_file):
        raise FileNotFoundError("SQuAD file not found: %s" % input_file)
    with tf.io.gfile.GFile(input_file, "rb") as reader:
        text = _decode_utf8(reader.read(), input_file)
    try:
        dataset = json.loads(text)
    except ValueError as error:
        raise ValueError("SQuAD file %s is not valid JSON: %s" % (input_file, error)) from None
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise ValueError(
            'SQuAD file %s: expected a JSON object with a top-level "data" list of articles '
            '({"data": [{"paragraphs": [{"context": ..., "qas": [...]}]}]}), as in '
            "train-v1.1.json / dev-v2.0.json." % input_file
        )
    return dataset["data"]


_EXPECTED = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false"}
_MISSING = object()


def _checked(value, kind, path, input_file):
    """`value` when it is of JSON type `kind` (dict, list, str, int or bool); else a ValueError naming the
    file, the JSON path (data[0].paragraphs[2].context) and the type expected."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    found = "missing" if value is _MISSING else json.dumps(value, ensure_ascii=False)
    found = found if len(found) <= 60 else found[:57] + "..."
    raise ValueError("SQuAD file %s: %s is %s; expected %s." % (input_file, path, found, _EXPECTED[kind]))


def _field(parent, key, kind, path, input_file, default=_MISSING):
    """parent[key] (`default` when absent, if given), checked as `_checked` does; `path` is the parent's."""
    return _checked(parent.get(key, default), kind, "%s.%s" % (path, key), input_file)


def _items(value, kind, path, input_file):
    """(path of the item, item) for each item of the list `value`, each checked to be a `kind`."""
    for i, item in enumerate(value):
        item_path = "%s[%d]" % (path, i)
        yield item_path, _checked(item, kind, item_path, input_file)


def _answer_positions(qa_id, answer_text, start_char, doc_tokens, char_to_word_offset):
    """Maps an answer (its text and character offset) to word positions.

    Returns:
      (answer_text, start_word, end_word), or None when the answer text is
      not found in the words its offsets point at.
    """
    end_char = start_char + len(answer_text) - 1
    # Offsets outside the context cannot be recovered either (the original
    # crashes on them with an IndexError).
    if not answer_text.strip() or start_char < 0 or end_char >= len(char_to_word_offset):
        logging.warning("Answer of question %s is empty or outside its context: %r at %d.",
                        qa_id, answer_text, start_char)
        return None
    # An answer starting on whitespace before the first word starts at word
    # 0 (-1 would index the last word).
    start_word = max(char_to_word_offset[start_char], 0)
    end_word = char_to_word_offset[end_char]
    # A substring test: the answer may cover only part of its first or last
    # word ("Japan" in "Japanese"); its spacing is normalised first.
    actual_text = " ".join(doc_tokens[start_word:end_word + 1])
    cleaned_answer = " ".join(tokenization.whitespace_tokenize(answer_text))
    if actual_text.find(cleaned_answer) == -1:
        logging.warning("Could not find answer of question %s: %r vs. %r",
                        qa_id, actual_text, cleaned_answer)
        return None
    return answer_text, start_word, end_word


def read_squad_examples(input_file, is_training, version_2_with_negative):
    """Reads a SQuAD JSON file into examples: `examples_from_data` of `load_squad_data`.

    Raises:
      FileNotFoundError, ValueError: see `load_squad_data` and `examples_from_data`.
    """
    return examples_from_data(load_squad_data(input_file), input_file, is_training, version_2_with_negative)


def examples_from_data(dataset, input_file, is_training, version_2_with_negative):
    """The examples of a SQuAD file's "data" list, its structure checked on the way.

    Args:
      dataset: the "data" list of input_file (`load_squad_data`).
      input_file: str, path of train-v1.1.json, dev-v2.0.json, ...; named in errors.
      is_training: bool; True reads the answers (positions, is_impossible),
        False reads only ids, questions and contexts (as the original), and
        checks the answers that evaluation reads, when there are any.
      version_2_with_negative: bool, whether questions may carry
        `"is_impossible": true` (SQuAD 2.0). Read only when training; a
        missing key means answerable.

    Returns:
      `SquadReadResult` (examples, skipped_ids). Each example's doc_tokens
      are the context words; when training, start_position/end_position are
      word indexes (inclusive), -1 for impossible questions.

    Raises:
      ValueError: a value the reading needs is missing or of the wrong JSON
        type: every article needs a "paragraphs" list, every paragraph a
        "context" string and a "qas" list, every question an "id" and a
        "question" string and, when training and answerable, an "answers"
        list of exactly one {"text": string, "answer_start": integer}; when
        predicting, "answers", if present, must be a list of {"text":
        string} (what evaluation reads). The message names the file and the
        JSON path (data[0].paragraphs[2].qas[1].answers[0].answer_start), or,
        for a wrong number of answers, the question id.
    """
    examples = []
    skipped_ids = []
    for article_path, article in _items(dataset, dict, "data", input_file):
        paragraphs = _field(article, "paragraphs", list, article_path, input_file)
        for paragraph_path, paragraph in _items(paragraphs, dict, article_path + ".paragraphs", input_file):
            context = _field(paragraph, "context", str, paragraph_path, input_file)
            doc_tokens, char_to_word_offset = split_context(context)
            qas = _field(paragraph, "qas", list, paragraph_path, input_file)
            for qa_path, qa in _items(qas, dict, paragraph_path + ".qas", input_file):
                qa_id = _field(qa, "id", str, qa_path, input_file)
                question = _field(qa, "question", str, qa_path, input_file)
                example = SquadExample(qas_id=qa_id, question_text=question, doc_tokens=doc_tokens)
                if is_training:
                    if version_2_with_negative:
                        example.is_impossible = _field(qa, "is_impossible", bool, qa_path, input_file, default=False)
                    if example.is_impossible:
                        example.start_position = -1
                        example.end_position = -1
                        example.orig_answer_text = ""
                    else:
                        answers = _field(qa, "answers", list, qa_path, input_file, default=[])
                        if len(answers) != 1:
                            raise ValueError(
                                "SQuAD file %s: for training, each answerable question needs "
                                "exactly 1 answer; question %s has %d."
                                % (input_file, qa_id, len(answers))
                            )
                        answer_path = qa_path + ".answers[0]"
                        answer = _checked(answers[0], dict, answer_path, input_file)
                        found = _answer_positions(
                            qa_id, _field(answer, "text", str, answer_path, input_file),
                            _field(answer, "answer_start", int, answer_path, input_file),
                            doc_tokens, char_to_word_offset)
                        if found is None:
                            skipped_ids.append(qa_id)
                            continue
                        (example.orig_answer_text, example.start_position,
                         example.end_position) = found
                elif "answers" in qa:  # Evaluation reads each answer's text.
                    answers = _field(qa, "answers", list, qa_path, input_file)
                    for answer_path, answer in _items(answers, dict, qa_path + ".answers", input_file):
                        _field(answer, "text", str, answer_path, input_file)
                examples.append(example)

    if skipped_ids:
        logging.warning(
            "%s: skipped %d of %d questions whose answer text is not in the context "
            "(ids: %s).", input_file, len(skipped_ids), len(skipped_ids) + len(examples),
            ", ".join(skipped_ids[:20]) + (" ..." if len(skipped_ids) > 20 else ""))
    _warn_duplicate_ids(input_file, examples)
    return SquadReadResult(examples, skipped_ids)


def _warn_duplicate_ids(input_file, examples):
    # Predictions are keyed by id: a repeated id would overwrite another
    # question's answer in predictions.json.
    counts = collections.Counter(example.qas_id for example in examples)
    repeated = sorted(qas_id for qas_id, count in counts.items() if count > 1)
    if repeated:
        logging.warning("%s: %d question ids occur more than once; only one prediction "
                        "per id is written (ids: %s).", input_file, len(repeated),
                        ", ".join(repeated[:20]))
