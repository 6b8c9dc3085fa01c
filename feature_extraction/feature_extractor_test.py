"""Tests for feature_extractor.py on a tiny model saved to a temporary dir."""

import json
import logging as std_logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf
from absl import flags

import modeling
import tokenization
from checkpoints import seeded_init, tf1_checkpoint
from feature_extraction import feature_extractor
from freezing import seeded_values
from modeling import bert_model
from options.declaration import define_flags, flags_parser

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
    kwargs.setdefault("init_checkpoint", tiny["init_checkpoint"])
    return feature_extractor.run(
        input_file=input_file,
        output_file=output_file,
        bert_config=tiny["model"].config,
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


@pytest.mark.parametrize("layer_indexes", [[-1], [0], [0, -1, 0]])
def test_feature_extractor_gives_the_chosen_layers_in_flag_order(tiny, layer_indexes):
    # One layer takes a reshape instead of a stack (no copy); the values are the same.
    model = tiny["model"]
    ids = np.array([[2, 5, 6, 3, 0, 0], [2, 9, 3, 12, 3, 0]], np.int32)
    mask = (ids > 0).astype(np.int32)
    segments = np.array([[0] * 6, [0, 0, 0, 1, 1, 0]], np.int32)
    extractor = feature_extractor.FeatureExtractor(model, layer_indexes, seq_length=6, batch_size=2)
    features = extractor(ids, mask, segments)
    layers = model(dict(input_ids=ids, input_mask=mask, token_type_ids=segments),
                   training=False)["all_encoder_layers"]
    assert features.shape == (2, len(layer_indexes), 6, TINY_CONFIG["hidden_size"])
    for j, index in enumerate(layer_indexes):
        np.testing.assert_allclose(features[:, j], layers[index].numpy(), rtol=1e-5, atol=1e-6)


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


def test_lines_with_a_malformed_pair_separator_are_read_as_the_original_and_named(tmp_path, caplog):
    path = tmp_path / "input.txt"
    path.write_text("a ||| b\nc|||d\ne ||| f ||| g\nh ||| |||\nplain\n")
    with caplog.at_level(std_logging.WARNING):
        examples = feature_extractor.read_examples(str(path))
    assert [(e.text_a, e.text_b) for e in examples] == [
        ("a", "b"), ("c|||d", None), ("e ||| f", "g"), ("h", "|||"), ("plain", None)]
    assert [r.getMessage() for r in caplog.records if r.levelno == std_logging.WARNING] == [
        "3 line(s) of %s hold '|||' but not as one ' ||| ' (spaces around it) between two texts: line(s) 2, 3, 4. "
        "They are read as the original reads them: a line without ' ||| ' is one text, and the last ' ||| ' of a "
        "line splits it." % path]


def test_non_utf8_lines_are_named_in_a_warning_and_their_bytes_dropped(tmp_path, caplog):
    path = tmp_path / "input.txt"
    path.write_bytes(b"the cat\na \xff dog\nok\n\xe2\x82 sat\n")
    with caplog.at_level(std_logging.WARNING):
        examples = feature_extractor.read_examples(str(path))
    # The output is the original's: the bad bytes dropped, the lines kept.
    assert [e.text_a for e in examples] == ["the cat", "a  dog", "ok", "sat"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == std_logging.WARNING]
    assert warnings == [
        "Dropped the bytes that are not valid UTF-8 from 2 line(s) of %s, as the original does: "
        "line(s) 2, 4." % path
    ]

    many = tmp_path / "many.txt"
    many.write_bytes(b"fine\n" + b"bad \xff\n" * 12)
    caplog.clear()
    with caplog.at_level(std_logging.WARNING):
        assert len(feature_extractor.read_examples(str(many))) == 13
    assert [r.getMessage() for r in caplog.records] == [
        "Dropped the bytes that are not valid UTF-8 from 12 line(s) of %s, as the original does: "
        "line(s) 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more." % many
    ]


def test_missing_or_unreadable_init_checkpoint_names_the_flag(tiny, tokenizer, tmp_path):
    input_file = write_lines(tmp_path / "input.txt", ["the cat"])
    output_file = str(tmp_path / "output.jsonl")
    (tmp_path / "empty_dir").mkdir()
    # An index without its data file, and a damaged index.
    prefix = tiny["init_checkpoint"]
    no_data = tmp_path / "no_data.ckpt"
    no_data.with_suffix(".ckpt.index").write_bytes(open(prefix + ".index", "rb").read())
    damaged = tmp_path / "damaged.ckpt"
    damaged.with_suffix(".ckpt.index").write_bytes(open(prefix + ".index", "rb").read()[:100])
    cases = [
        ("", r"^--init_checkpoint is empty; give a checkpoint prefix or directory\.$"),
        (str(tmp_path / "nope.ckpt"),
         r"^--init_checkpoint: Checkpoint .*/nope\.ckpt not found: expected the file .*/nope\.ckpt\.index\.$"),
        (str(tmp_path / "empty_dir"), r"^--init_checkpoint: No checkpoint found in directory .*/empty_dir\.$"),
        (str(no_data), r"^--init_checkpoint: cannot read checkpoint .*/no_data\.ckpt: "
                       r".*/no_data\.ckpt\.data-00000-of-00001; No such file or directory$"),
        (str(damaged), r"^--init_checkpoint: cannot read checkpoint .*/damaged\.ckpt: not an sstable"),
    ]
    for init_checkpoint, message in cases:
        with pytest.raises(ValueError, match=message):
            run(tiny, tokenizer, input_file, output_file, max_seq_length=16, init_checkpoint=init_checkpoint)
        assert not os.path.exists(output_file)


SEEDED_NAMES = ["bert/encoder/layer_0/intermediate/dense/kernel", "bert/encoder/layer_0/intermediate/dense/bias"]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A tiny checkpoint saved as --save_frozen=seed does: SEEDED_NAMES left out, in its manifest.

    Returns:
      (checkpoint prefix, the manifest as a dict, the config).
    """
    config = modeling.BertConfig.from_dict(TINY_CONFIG)
    model = modeling.build_model(modeling.BertModel(config))
    seeded_init.initialize(model, 5, SEEDED_NAMES)
    prefix = modeling.save_checkpoint(
        model, str(tmp_path_factory.mktemp("seeded") / "model.ckpt"), omit=SEEDED_NAMES)
    content = seeded_values.manifest(
        modeling.original_variables(model), SEEDED_NAMES, 5, bert_model.initializers(config))
    seeded_values.write_manifest(prefix, content)
    return prefix, content, config


def _edited(content, path, change):
    """`content` as JSON, with the value at `path` (a list of keys) set to `change`, or deleted if None."""
    content = json.loads(json.dumps(content))
    target = content
    for key in path[:-1]:
        target = target[key]
    if change is None:
        del target[path[-1]]
    else:
        target[path[-1]] = change
    return json.dumps(content)


KERNEL = SEEDED_NAMES[0]
MANIFEST = r"^Manifest .*/model\.ckpt\.frozen\.json "
ENTRY = r"^Manifest .*/model\.ckpt\.frozen\.json: the entry of " + KERNEL + " "


@pytest.mark.parametrize("edit, message", [
    (lambda c: "{", MANIFEST + r"is not valid JSON: .*line 1 column 2 \(char 1\)\.$"),
    (lambda c: "[]", MANIFEST + r"is not a JSON object\.$"),
    (lambda c: _edited(c, ["random_seed"], None), MANIFEST + r'lacks "random_seed"\.$'),
    (lambda c: _edited(c, ["random_seed"], "5"), MANIFEST + r'has "random_seed": "5"; expected an integer\.$'),
    (lambda c: _edited(c, ["variables"], None), MANIFEST + r'lacks "variables"\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "shape"], None), ENTRY + r'lacks "shape"\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "shape"], 16),
     ENTRY + r'has "shape": 16; expected a list of non-negative integers\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "initializer"], "laplace"),
     ENTRY + r'has "initializer": "laplace"; expected one of truncated_normal, uniform, zeros, ones\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "initializer"], "uniform"),
     ENTRY + r'has "limit": null; expected a positive number\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "stddev"], "x"),
     ENTRY + r'has "stddev": "x"; expected a positive number\.$'),
    (lambda c: _edited(c, ["variables", KERNEL, "shape"], [16, 31]),
     r"^Checkpoint .*/model\.ckpt with its manifest .*/model\.ckpt\.frozen\.json does not fit the model .*"
     r"Shape mismatch for 1 variable\(s\): " + KERNEL + r": manifest shape \[16, 31\], model shape \[16, 32\]$"),
], ids=["not_json", "not_object", "no_seed", "seed_not_int", "no_variables", "no_shape", "shape_not_list",
        "bad_initializer", "uniform_without_limit", "bad_stddev", "wrong_shape"])
def test_a_bad_seed_manifest_is_a_one_line_error_naming_it(seeded, edit, message):
    prefix, content, config = seeded
    path = prefix + seeded_values.MANIFEST_SUFFIX
    model = feature_extractor.load_encoder(config, prefix)  # The manifest as written loads.
    np.testing.assert_array_equal(
        modeling.original_variables(model)[KERNEL].variable.numpy(),
        seeded_values.regenerate(content, KERNEL))
    try:
        with open(path, "w") as f:
            f.write(edit(content))
        with pytest.raises(ValueError, match=message) as error:
            feature_extractor.load_encoder(config, prefix)
        assert "\n" not in str(error.value)
    finally:
        seeded_values.write_manifest(prefix, content)


def test_an_output_file_in_a_missing_directory_is_refused_first(tiny, tokenizer, tmp_path):
    input_file = write_lines(tmp_path / "input.txt", ["the cat"])
    output_file = str(tmp_path / "missing" / "output.jsonl")
    with pytest.raises(ValueError) as error:
        run(tiny, tokenizer, input_file, output_file, max_seq_length=16)
    assert str(error.value) == "--output_file=%s: the directory %s does not exist." % (
        output_file, tmp_path / "missing")


def test_an_interrupted_write_leaves_no_output_file(tokenizer, tmp_path):
    examples = [feature_extractor.InputExample(i, "the cat", None) for i in range(3)]
    features = feature_extractor.convert_examples_to_features(examples, 8, tokenizer)
    output_file = tmp_path / "output.jsonl"

    class Extractor:
        """Features of zeros; fails on batch number `fail_at` (1-based) if given."""

        layer_indexes = [-1]

        def __init__(self, fail_at=None):
            self.fail_at, self.calls = fail_at, 0

        def __call__(self, input_ids, input_mask, input_type_ids):
            self.calls += 1
            if self.calls == self.fail_at:
                raise RuntimeError("interrupted")
            return np.zeros([len(input_ids), 1, 8, 2], np.float32)

    with pytest.raises(RuntimeError, match="interrupted"):
        feature_extractor.write_features(str(output_file), features, Extractor(fail_at=2), batch_size=1)
    assert os.listdir(tmp_path) == []  # Neither a partial output nor its .incomplete.

    assert feature_extractor.write_features(str(output_file), features, Extractor(), batch_size=1) == 3
    assert os.listdir(tmp_path) == ["output.jsonl"]
    complete = output_file.read_text()
    assert len(complete.splitlines()) == 3
    # A failed rerun keeps the earlier complete output.
    with pytest.raises(RuntimeError, match="interrupted"):
        feature_extractor.write_features(str(output_file), features, Extractor(fail_at=3), batch_size=1)
    assert os.listdir(tmp_path) == ["output.jsonl"] and output_file.read_text() == complete


def _parse(argv):
    flag_values = flags.FlagValues()
    define_flags(feature_extractor.ExtractFeaturesOptions, flag_values)
    parse = flags_parser("extract_features.py", feature_extractor.ExtractFeaturesOptions, flag_values)
    return parse(["extract_features.py"] + argv)


REQUIRED_FLAGS = ["--input_file=in.txt", "--output_file=out.jsonl", "--bert_config_file=c.json",
                  "--init_checkpoint=m.ckpt", "--vocab_file=vocab.txt"]


@pytest.mark.parametrize("argv, message", [
    ([], "missing required flags --bert_config_file, --input_file, --output_file, --init_checkpoint, "
         "--vocab_file."),
    (REQUIRED_FLAGS[1:], "missing required flag --input_file."),
    (REQUIRED_FLAGS + ["--max_seq_length=abc"], "--max_seq_length=abc is not valid; expected an integer."),
    (REQUIRED_FLAGS + ["--do_lower_case=maybe"], "--do_lower_case=maybe is not valid; expected true or false."),
    (REQUIRED_FLAGS + ["--nodo_lower_case=1"], "--nodo_lower_case=1 does not take an argument."),
    (REQUIRED_FLAGS + ["--layers"], "Missing value for flag --layers."),
    (REQUIRED_FLAGS + ["--lyers=-1"], "Unknown command line flag 'lyers'. Did you mean: layers ?"),
])
def test_a_bad_command_line_is_one_line(argv, message):
    with pytest.raises(SystemExit) as exit_info:
        _parse(argv)
    assert exit_info.value.code == "extract_features.py: error: %s Try --help." % message



def test_a_vocab_beyond_the_config_s_vocab_size_is_refused_before_the_model(tiny, tmp_path):
    bigger = tmp_path / "vocab.txt"
    tokens = open(tiny["vocab_file"]).read().split("\n")[:-1]
    bigger.write_text("".join(token + "\n" for token in tokens + ["extra%d" % i for i in range(5)]))
    options = feature_extractor.ExtractFeaturesOptions(
        input_file=write_lines(tmp_path / "input.txt", ["the cat"]), output_file=str(tmp_path / "output.jsonl"),
        bert_config_file=tiny["bert_config_file"], init_checkpoint=tiny["init_checkpoint"], vocab_file=str(bigger),
        layers="-1", max_seq_length=16)
    size = len(tokens)
    with pytest.raises(ValueError, match="^" + re.escape(
            "%s has %d lines (ids 0-%d) but bert_config's vocab_size is %d" % (bigger, size + 5, size + 4, size))):
        feature_extractor.run_from_options(options)
    assert not (tmp_path / "output.jsonl").exists()
