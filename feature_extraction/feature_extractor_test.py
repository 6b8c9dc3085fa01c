"""Tests for feature_extractor.py on a tiny model saved to a temporary dir."""

import json
import logging as std_logging
import os

import numpy as np
import pytest
import tensorflow as tf

import modeling
import tokenization
from feature_extraction import feature_extractor
from modeling import tf1_checkpoint

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "dog",
    "ran", "##s", "a", ".",
]  # fmt: skip

# head_size 12 != hidden / heads = 8: features must work for any head size.
TINY_CONFIG = dict(
    vocab_size=len(VOCAB),
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
    type_vocab_size=2,
    head_size=12,
)


def write_tiny_model(directory, head_size_in_config=True):
    """Writes vocab.txt, bert_config.json and a random model.ckpt into `directory`.

    Returns:
      dict of vocab_file, bert_config_file, init_checkpoint (paths) and model
      (the built `BertModel` whose weights the checkpoint holds).
    """
    vocab_file = os.path.join(directory, "vocab.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    config = modeling.BertConfig.from_dict(TINY_CONFIG)
    config_dict = config.to_dict()
    if not head_size_in_config:
        config_dict["head_size"] = None
    bert_config_file = os.path.join(directory, "bert_config.json")
    with open(bert_config_file, "w") as f:
        json.dump(config_dict, f)
    model = modeling.build_model(modeling.BertModel(config))
    init_checkpoint = modeling.save_checkpoint(model, os.path.join(directory, "model.ckpt"))
    return dict(
        vocab_file=vocab_file,
        bert_config_file=bert_config_file,
        init_checkpoint=init_checkpoint,
        model=model,
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_model(str(tmp_path_factory.mktemp("tiny_bert")))


@pytest.fixture(scope="module")
def tokenizer(tiny):
    return tokenization.FullTokenizer(tiny["vocab_file"], do_lower_case=True)


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    return str(path)


def run(tiny, tokenizer, input_file, output_file, **kwargs):
    kwargs.setdefault("layer_indexes", [-1])  # The default -1..-4 needs 4 layers.
    return feature_extractor.run(
        input_file=input_file,
        output_file=output_file,
        bert_config=tiny["model"].config,
        init_checkpoint=tiny["init_checkpoint"],
        tokenizer=tokenizer,
        **kwargs,
    )


def test_read_examples(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text("  The cat  \nthe dog ||| a cat\n\nx ||| y ||| z")
    assert feature_extractor.read_examples(str(path)) == [
        feature_extractor.InputExample(0, "The cat", None),
        feature_extractor.InputExample(1, "the dog", "a cat"),
        feature_extractor.InputExample(2, "", None),  # A blank line is an example.
        feature_extractor.InputExample(3, "x ||| y", "z"),  # Greedy: the last |||.
    ]


def test_truncate_seq_pair_pops_the_longer_then_b_on_ties():
    tokens_a, tokens_b = list("abcdef"), list("xyz")
    feature_extractor.truncate_seq_pair(tokens_a, tokens_b, 5)
    assert (tokens_a, tokens_b) == (list("abc"), list("xy"))


def test_convert_examples_to_features(tokenizer):
    examples = [
        feature_extractor.InputExample(7, "The cat", None),
        feature_extractor.InputExample(8, "the cat sat on the mat", None),
        feature_extractor.InputExample(9, "the cat sat on the mat", "dogs ran"),
    ]
    padded, single, pair = feature_extractor.convert_examples_to_features(
        examples, 8, tokenizer
    )
    ids = lambda tokens: [VOCAB.index(t) for t in tokens]  # noqa: E731

    assert padded.unique_id == 7
    assert padded.tokens == ["[CLS]", "the", "cat", "[SEP]"]
    assert padded.input_ids == ids(padded.tokens) + [0] * 4
    assert padded.input_mask == [1] * 4 + [0] * 4
    assert padded.input_type_ids == [0] * 8

    # Single: the first max_seq_length - 2 tokens.
    assert single.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    assert single.input_mask == [1] * 8

    # Pair: 6 + 3 tokens cut to max_seq_length - 3 = 5, longer side first.
    assert pair.tokens == ["[CLS]", "the", "cat", "sat", "[SEP]", "dog", "##s", "[SEP]"]
    assert pair.input_ids == ids(pair.tokens)
    assert pair.input_type_ids == [0] * 5 + [1] * 3


def expected_layers(model, tokens, type_ids):
    """all_encoder_layers of one unpadded example: list of [len(tokens), hidden]."""
    input_ids = tf.constant([[VOCAB.index(t) for t in tokens]], tf.int32)
    outputs = model(
        dict(
            input_ids=input_ids,
            input_mask=tf.ones_like(input_ids),
            token_type_ids=tf.constant([type_ids], tf.int32),
        ),
        training=False,
    )
    return [layer[0].numpy() for layer in outputs["all_encoder_layers"]]


def test_run_writes_the_model_features(tiny, tokenizer, tmp_path):
    input_file = write_lines(
        tmp_path / "input.txt",
        [
            "The cat sat on the mat.",
            "the dog ||| a cat sat",
            "dogs ran on the mat on the mat on the mat",  # Truncated to 10.
        ],
    )
    output_file = str(tmp_path / "output.jsonl")
    # batch_size 2: a full batch and a smaller last one. Layers unsorted, and
    # -2 is layer 0 again: the output follows the flag as given.
    count = run(
        tiny, tokenizer, input_file, output_file,
        layer_indexes=[-1, 0, -2], max_seq_length=10, batch_size=2,
    )  # fmt: skip
    assert count == 3

    expected = [
        ("[CLS] the cat sat on the mat . [SEP]".split(), [0] * 9),
        ("[CLS] the dog [SEP] a cat sat [SEP]".split(), [0] * 4 + [1] * 4),
        ("[CLS] dog ##s ran on the mat on the [SEP]".split(), [0] * 10),
    ]
    with open(output_file) as f:
        records = [json.loads(line) for line in f]
    assert len(records) == 3
    for line_index, (record, (tokens, type_ids)) in enumerate(zip(records, expected)):
        assert list(record) == ["linex_index", "features"]
        assert record["linex_index"] == line_index
        assert [feature["token"] for feature in record["features"]] == tokens
        layers = expected_layers(tiny["model"], tokens, type_ids)
        for position, feature in enumerate(record["features"]):
            assert list(feature) == ["token", "layers"]
            assert [layer["index"] for layer in feature["layers"]] == [-1, 0, -2]
            for layer in feature["layers"]:
                assert list(layer) == ["index", "values"]
                values = layer["values"]
                assert len(values) == 16
                assert all(type(v) is float and v == round(v, 6) for v in values)
                # Rounding moves a value by <= 5e-7; padding and batching by less.
                np.testing.assert_allclose(
                    values, layers[layer["index"]][position], rtol=0, atol=1e-6
                )


@pytest.mark.parametrize(
    "layers, message",
    [
        ("-1,2", r"--layers entry 2 is out of range.*\[-2, 1\]"),
        ("-3", r"--layers entry -3 is out of range.*\[-2, 1\]"),
        ("-1,last", r"--layers must be comma-separated integers"),
    ],
)
def test_parse_layers_errors(layers, message):
    with pytest.raises(ValueError, match=message):
        feature_extractor.parse_layers(layers, num_hidden_layers=2)


def test_parse_layers_keeps_flag_order():
    assert feature_extractor.parse_layers("0,-1,-2,1", num_hidden_layers=2) == [0, -1, -2, 1]


def test_run_rejects_bad_flags_before_reading(tiny, tokenizer, tmp_path):
    missing_input = str(tmp_path / "missing.txt")
    output_file = str(tmp_path / "output.jsonl")
    with pytest.raises(ValueError, match=r"--layers entry 2 .*\[-2, 1\]"):
        run(tiny, tokenizer, missing_input, output_file, layer_indexes=[2])
    with pytest.raises(
        ValueError, match=r"--max_seq_length=17 .*max_position_embeddings=16"
    ):
        run(tiny, tokenizer, missing_input, output_file, max_seq_length=17)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        run(tiny, tokenizer, missing_input, output_file, max_seq_length=16)
    assert not os.path.exists(output_file)


def test_empty_input_gives_empty_output_and_a_warning(tiny, tokenizer, tmp_path, caplog):
    input_file = write_lines(tmp_path / "empty.txt", [])
    output_file = str(tmp_path / "output.jsonl")
    with caplog.at_level(std_logging.WARNING):
        assert run(tiny, tokenizer, input_file, output_file, max_seq_length=16) == 0
    assert open(output_file).read() == ""
    assert any("empty.txt is empty" in r.getMessage() for r in caplog.records)


def test_load_encoder_needs_every_encoder_variable(tiny, tmp_path):
    tensors = tf1_checkpoint.model_tensors(tiny["model"])
    config = tiny["model"].config

    # No pooler: fine, features never use it.
    no_pooler = {k: v for k, v in tensors.items() if not k.startswith("bert/pooler/")}
    prefix = tf1_checkpoint.write_tensors(str(tmp_path / "no_pooler.ckpt"), no_pooler)
    feature_extractor.load_encoder(config, prefix)

    missing = "bert/encoder/layer_1/output/dense/kernel"
    partial = {k: v for k, v in tensors.items() if k != missing}
    prefix = tf1_checkpoint.write_tensors(str(tmp_path / "partial.ckpt"), partial)
    with pytest.raises(ValueError, match="lacks 1 of .* " + missing):
        feature_extractor.load_encoder(config, prefix)
