"""TextInputs packs raw text exactly as run_classifier.py's features do."""

import itertools
import random

import numpy as np
import pytest
import tensorflow as tf

import tokenization
from classifier_data import features
from classifier_data.data_processor import InputExample
from serving.text_inputs import TextInputs, truncated_lengths

WORDS = ["the", "cat", "dog", "sat", "##s", "ran", "on", "a", "mat", ",", "."]
POOL = ["the", "cat", "cats", "Dog", "sat,", "ran.", "zebra", "\x00", "on a mat", "Café"]


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    return str(path)


def test_truncated_lengths_is_the_original_pop_loop():
    lengths = list(itertools.product(range(12), range(12), range(10)))
    a, b, budget = (tf.constant(column, tf.int64) for column in zip(*lengths))
    kept_a, kept_b = truncated_lengths(a, b, budget)
    for (length_a, length_b, limit), got_a, got_b in zip(lengths, kept_a.numpy(), kept_b.numpy()):
        tokens_a, tokens_b = list(range(length_a)), list(range(length_b))
        features.truncate_seq_pair(tokens_a, tokens_b, limit)
        assert (got_a, got_b) == (len(tokens_a), len(tokens_b)), (length_a, length_b, limit)


@pytest.mark.parametrize("max_seq_length", [3, 5, 11])
def test_pack_equals_run_classifier_features(vocab_file, max_seq_length):
    rng = random.Random(max_seq_length)
    texts_a = [" ".join(rng.choice(POOL) for _ in range(rng.randrange(0, 9))) for _ in range(200)]
    texts_b = [" ".join(rng.choice(POOL) for _ in range(rng.randrange(0, 9))) for _ in range(200)]
    texts_b[:3] = ["", "\x00", " "]  # empty, and b texts that tokenize to nothing: single-text packing
    text_inputs = TextInputs(vocab_file, True, max_seq_length)
    tokenizer = tokenization.FullTokenizer(vocab_file, True)
    pairs = text_inputs.encode(tf.constant(texts_a), tf.constant(texts_b))
    singles = text_inputs.encode(tf.constant(texts_a))
    for i, (text_a, text_b) in enumerate(zip(texts_a, texts_b)):
        for packed, b in ((pairs, text_b or None), (singles, None)):
            expected = features.convert_single_example(10, InputExample("x", text_a, b), None, max_seq_length,
                                                       tokenizer)
            np.testing.assert_array_equal(packed["input_word_ids"][i], expected.input_ids, err_msg=text_a)
            np.testing.assert_array_equal(packed["input_mask"][i], expected.input_mask)
            np.testing.assert_array_equal(packed["input_type_ids"][i], expected.segment_ids)
    assert pairs["input_word_ids"].dtype == tf.int32 and pairs["input_word_ids"].shape == (200, max_seq_length)


def test_errors_name_the_problem(vocab_file, tmp_path):
    with pytest.raises(ValueError, match="max_seq_length must be at least 3"):
        TextInputs(vocab_file, True, 2)
    no_cls = tmp_path / "vocab.txt"
    no_cls.write_text("[PAD]\n[UNK]\n[SEP]\nthe\n")
    with pytest.raises(ValueError, match=r"Vocab file .*vocab.txt lacks \[CLS\]"):
        TextInputs(str(no_cls), True, 8)
