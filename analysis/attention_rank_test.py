"""Tests for attention_rank.py: logits and ranks against NumPy, Theorem 1, files, errors."""

import json
import math
import os

import numpy as np
import pytest
import scipy.stats
import tensorflow as tf
from official.nlp.modeling import layers

import tokenization
from analysis import attention_rank, testing
from checkpoints import tf1_checkpoint
from feature_extraction import feature_extractor
from modeling.testing import original_bert_numpy

# Lengths n (with [CLS] and [SEP]) 13, 8, 6 and 11 at --max_seq_length 16: padding in every batch.
LINES = [
    "the cat sat on the mat . the dog ran on",
    "the dog ||| a cat sat",
    "big red dogs",
    "the cat ran under the mat ||| and sat",
]


@pytest.fixture(scope="module", params=[4, 16], ids=["d_p=4", "d_p=16"])
def random_model(request, tmp_path_factory):
    return testing.write_random_model(str(tmp_path_factory.mktemp("random_model")), request.param)


@pytest.fixture(scope="module")
def records(random_model):
    tokenizer = tokenization.FullTokenizer(random_model["vocab_file"], do_lower_case=True)
    return attention_rank.probe(random_model["config"], random_model["init_checkpoint"], tokenizer, LINES,
                                max_seq_length=16, batch_size=3)


def reference_logits(config, tensors, tokens):
    """Q K^T / sqrt(d_p) of every layer and head in float64: [layers, heads, n, n].

    The block inputs come from the NumPy transcription of the original
    forward pass; Q and K from the original variables, by hand.
    """
    ids = np.array([[testing.VOCAB.index(t) for t in tokens]])
    first_sep = tokens.index("[SEP]")
    type_ids = np.array([[0 if i <= first_sep else 1 for i in range(len(tokens))]])
    forward = original_bert_numpy.bert_forward(config, tensors, ids, np.ones_like(ids), type_ids)
    block_inputs = [forward["embedding_output"]] + forward["all_encoder_layers"][:-1]
    n, heads, size = len(tokens), config.num_attention_heads, config.attention_head_size
    result = []
    for i, x in enumerate(block_inputs):
        prefix = "bert/encoder/layer_%d/attention/self/" % i

        def project(part):
            kernel = tensors[prefix + part + "/kernel"].astype(np.float64)  # [H, N*D]
            bias = tensors[prefix + part + "/bias"].astype(np.float64)  # [N*D]
            return (x[0] @ kernel + bias).reshape(n, heads, size).transpose(1, 0, 2)  # [N, n, D]

        query, key = project("query"), project("key")
        result.append(query @ key.transpose(0, 2, 1) / math.sqrt(size))
    return np.stack(result)


def test_records_match_an_independent_numpy_computation(random_model, records):
    config, tensors = random_model["config"], random_model["tensors"]
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    assert records[1]["tokens"] == "[CLS] the dog [SEP] a cat sat [SEP]".split()
    for record in records:
        logits = reference_logits(config, tensors, record["tokens"])
        n = len(record["tokens"])
        assert [layer["layer"] for layer in record["layers"]] == [0, 1]
        for layer in record["layers"]:
            assert [head["head"] for head in layer["heads"]] == [0, 1, 2]
            for head in layer["heads"]:
                matrix = logits[layer["layer"], head["head"]]
                expected = np.linalg.svd(matrix, compute_uv=False)
                values = np.array(head["singular_values"])
                assert values.shape == (n,)
                # float32 logits: errors relative to the largest singular value.
                np.testing.assert_allclose(values, expected, rtol=0, atol=2e-5 * expected[0])
                assert head["rank"] == np.linalg.matrix_rank(matrix) == min(n, config.attention_head_size)
                # Independent definitions: SciPy's entropy normalises s itself; norms of the matrix.
                assert head["effective_rank"] == pytest.approx(np.exp(scipy.stats.entropy(expected)), rel=1e-4)
                stable = np.linalg.norm(matrix, "fro") ** 2 / np.linalg.norm(matrix, 2) ** 2
                assert head["stable_rank"] == pytest.approx(stable, rel=1e-4)


def test_theorem_1_bound(random_model, records):
    # d_p = 4 < n: every head at most d_p (here exactly: random weights are generic).
    # d_p = 16 >= n: random inputs give the full rank n.
    d_p = random_model["config"].attention_head_size
    lengths = [len(r["tokens"]) for r in records]
    assert lengths == [13, 8, 6, 11]
    for record, n in zip(records, lengths):
        ranks = [head["rank"] for layer in record["layers"] for head in layer["heads"]]
        assert ranks == [min(d_p, n)] * 6
        if d_p < n:
            # The discarded singular values are float32 rounding noise.
            for layer in record["layers"]:
                for head in layer["heads"]:
                    values = head["singular_values"]
                    assert max(values[d_p:]) < 1e-5 * values[0] < values[d_p - 1]
    summary = attention_rank.summarize(records, d_p)
    assert summary["mean_rank"] == pytest.approx(np.mean([min(d_p, n) for n in lengths]))
    assert all(head["fraction_at_bound"] == 1.0 for layer in summary["layers"] for head in layer["heads"])


def test_logits_are_keras_attention_before_the_softmax():
    # The probabilities Keras computes are softmax(logits + mask): recomputed
    # logits must give them back, over real keys, pre-norm and post-norm alike.
    rng = np.random.RandomState(0)
    x = tf.constant(rng.standard_normal([2, 6, 8]), tf.float32)
    lengths = [6, 4]
    mask = np.array([[[1.0 if j < n else 0.0 for j in range(6)]] * 6 for n in lengths], np.float32)
    for norm_first in (False, True):
        block = layers.TransformerEncoderBlock(
            num_attention_heads=2, key_dim=5, inner_dim=8, inner_activation="relu", norm_first=norm_first,
            return_attention_scores=True)
        _, probabilities = block([x, tf.constant(mask)])
        logits = attention_rank.block_attention_logits(block, x).numpy()
        assert logits.shape == (2, 2, 6, 6)
        for b, n in enumerate(lengths):
            real = logits[b, :, :n, :n]
            softmax = np.exp(real - real.max(-1, keepdims=True))
            softmax /= softmax.sum(-1, keepdims=True)
            np.testing.assert_allclose(softmax, probabilities.numpy()[b, :, :n, :n], rtol=0, atol=1e-6)
        # Not the same function of x both ways: the pre-norm branch is taken.
        if norm_first:
            assert not np.allclose(logits, post_norm_logits, atol=1e-3)
        post_norm_logits = logits


def test_a_block_without_keras_attention_is_refused():
    block = layers.TransformerEncoderBlock(num_attention_heads=2, inner_dim=8, inner_activation="relu",
                                           num_kv_heads=1)
    block(tf.zeros([1, 3, 8]))
    with pytest.raises(ValueError, match="expected a TransformerEncoderBlock with a tf_keras MultiHeadAttention"):
        attention_rank.block_attention_logits(block, tf.zeros([1, 3, 8]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numerical_rank_is_numpys_default(dtype):
    rng = np.random.RandomState(1)
    # Products of [.., 7, r] and [.., r, 7] factors: rank r, with rounding noise.
    matrices = np.stack([rng.standard_normal([7, r]) @ rng.standard_normal([r, 7]) for r in range(8)])
    matrices = np.concatenate([matrices, np.zeros([1, 7, 7])]).astype(dtype)
    singular_values = np.linalg.svd(matrices, compute_uv=False)
    ranks = attention_rank.numerical_rank(singular_values, (7, 7))
    np.testing.assert_array_equal(ranks, np.linalg.matrix_rank(matrices))
    np.testing.assert_array_equal(ranks, list(range(8)) + [0])


def test_effective_and_stable_rank():
    s = np.array([[1.0, 1.0, 1.0, 1.0], [3.0, 0.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(attention_rank.effective_rank(s),
                               [4.0, 1.0, np.exp(-(2 / 3) * np.log(2 / 3) - (1 / 3) * np.log(1 / 3)), 0.0])
    np.testing.assert_allclose(attention_rank.stable_rank(s), [4.0, 1.0, 5 / 4, 0.0])
    random = np.sort(np.random.RandomState(2).uniform(0, 3, [5, 9]), axis=-1)[:, ::-1]
    np.testing.assert_allclose(attention_rank.effective_rank(random), np.exp(scipy.stats.entropy(random, axis=-1)))


def _record(index, n, ranks):
    """A record of len(ranks) layers, each a list of head ranks (effective = rank / 2, stable = 1)."""
    return {"index": index, "tokens": ["t"] * n, "layers": [
        {"layer": l, "heads": [{"head": h, "rank": r, "effective_rank": r / 2, "stable_rank": 1.0}
                               for h, r in enumerate(layer)]}
        for l, layer in enumerate(ranks)]}


def test_summarize():
    # d_p = 4: bounds min(4, n) = 4, 3, 4.
    records = [_record(0, 10, [[4, 2]]), _record(1, 3, [[3, 3]]), _record(2, 10, [[4, 1]])]
    summary = attention_rank.summarize(records, head_size=4)
    assert summary == {
        "num_examples": 3, "head_size": 4, "num_layers": 1, "num_heads": 2,
        "num_tokens": [10, 3, 10], "mean_num_tokens": round(23 / 3, 6),
        "mean_rank": round(17 / 6, 6), "mean_bound": round(11 / 3, 6),
        "layers": [{"layer": 0, "mean_rank": round(17 / 6, 6), "heads": [
            {"head": 0, "head_size": 4, "mean_num_tokens": round(23 / 3, 6), "mean_bound": round(11 / 3, 6),
             "mean_rank": round(11 / 3, 6), "min_rank": 3, "max_rank": 4, "fraction_at_bound": 1.0,
             "mean_effective_rank": round(11 / 6, 6), "mean_stable_rank": 1.0},
            {"head": 1, "head_size": 4, "mean_num_tokens": round(23 / 3, 6), "mean_bound": round(11 / 3, 6),
             "mean_rank": 2.0, "min_rank": 1, "max_rank": 3, "fraction_at_bound": round(1 / 3, 6),
             "mean_effective_rank": 1.0, "mean_stable_rank": 1.0},
        ]}],
        "by_length": [
            {"num_tokens": 3, "num_examples": 1, "bound": 3, "mean_rank": 3.0, "min_rank": 3, "max_rank": 3},
            {"num_tokens": 10, "num_examples": 2, "bound": 4, "mean_rank": 2.75, "min_rank": 1, "max_rank": 4},
        ],
    }
    json.dumps(summary)  # Plain Python types only.
    with pytest.raises(ValueError, match="No examples to summarize"):
        attention_rank.summarize([], 4)


@pytest.fixture(scope="module")
def run_outputs(tmp_path_factory):
    """A run of attention_rank.run on the random d_p = 4 model, files at their default paths."""
    model = testing.write_random_model(str(tmp_path_factory.mktemp("model")), 4)
    directory = tmp_path_factory.mktemp("run")
    input_file = directory / "input.txt"
    input_file.write_text("".join(line + "\n" for line in LINES))
    output_file = str(directory / "ranks.jsonl")
    tokenizer = tokenization.FullTokenizer(model["vocab_file"], do_lower_case=True)
    summary = attention_rank.run(str(input_file), output_file, model["config"], model["init_checkpoint"],
                                 tokenizer, max_seq_length=16, batch_size=2)
    return dict(model=model, output_file=output_file, summary=summary, directory=directory, tokenizer=tokenizer)


def test_the_output_files(run_outputs):
    output_file = run_outputs["output_file"]
    assert sorted(os.listdir(run_outputs["directory"])) == [
        "input.txt", "ranks.jsonl", "ranks.jsonl.rank_vs_length.png", "ranks.jsonl.summary.json"]
    with open(output_file) as f:
        records = [json.loads(line) for line in f]
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    for record in records:
        assert list(record) == ["index", "tokens", "layers"]
        n = len(record["tokens"])
        for layer in record["layers"]:
            assert list(layer) == ["layer", "heads"]
            for head in layer["heads"]:
                assert list(head) == ["head", "rank", "singular_values", "effective_rank", "stable_rank"]
                assert type(head["rank"]) is int and head["rank"] == min(4, n)
                assert len(head["singular_values"]) == n
                assert head["singular_values"] == sorted(head["singular_values"], reverse=True)
                # Noise below the rank's tolerance adds ~1e-6 to the effective rank.
                assert 1.0 <= head["stable_rank"] <= head["effective_rank"] <= head["rank"] + 1e-3

    with open(output_file + ".summary.json") as f:
        summary = json.load(f)
    assert summary == run_outputs["summary"] == attention_rank.summarize(records, 4)
    assert summary["num_tokens"] == [13, 8, 6, 11] and summary["mean_rank"] == 4.0

    import matplotlib.image  # pylint: disable=import-outside-toplevel
    plot_file = output_file + ".rank_vs_length.png"
    with open(plot_file, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.image.imread(plot_file).shape == (600, 840, 4)


def test_plot_of_several_head_sizes(run_outputs, tmp_path):
    # A driver's comparison: one series per head size, each with its bound.
    records = [_record(i, n, [[min(16, n)] * 3] * 2) for i, n in enumerate([5, 9, 14, 20, 20])]
    wide = attention_rank.summarize(records, 16)
    plot_file = str(tmp_path / "two.png")
    assert attention_rank.plot_rank_vs_length([run_outputs["summary"], wide], plot_file) == plot_file
    assert os.listdir(tmp_path) == ["two.png"]
    import matplotlib.image  # pylint: disable=import-outside-toplevel
    assert matplotlib.image.imread(plot_file).shape == (600, 840, 4)


def _run(run_outputs, tmp_path, **kwargs):
    model = run_outputs["model"]
    input_file = tmp_path / "input.txt"
    if not input_file.exists():
        input_file.write_text("the cat\n")
    arguments = dict(input_file=str(input_file), output_file=str(tmp_path / "out.jsonl"),
                     bert_config=model["config"], init_checkpoint=model["init_checkpoint"],
                     tokenizer=run_outputs["tokenizer"], max_seq_length=16)
    arguments.update(kwargs)
    return attention_rank.run(**arguments)


def test_a_checkpoint_of_another_head_size_names_the_variable(run_outputs, tmp_path):
    config = run_outputs["model"]["config"].replace(head_size=8)  # The checkpoint has 4.
    with pytest.raises(ValueError) as error:
        _run(run_outputs, tmp_path, bert_config=config)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("Checkpoint %s does not fit the model" % run_outputs["model"]["init_checkpoint"])
    assert "bert/encoder/layer_0/attention/self/query/kernel: checkpoint shape [16, 12], model shape [16, 24]" \
        in message
    assert not os.path.exists(tmp_path / "out.jsonl")


def test_a_checkpoint_lacking_an_encoder_variable_is_refused(run_outputs, tmp_path):
    tensors = dict(run_outputs["model"]["tensors"])
    del tensors["bert/encoder/layer_1/attention/self/key/bias"]
    prefix = tf1_checkpoint.write_tensors(str(tmp_path / "partial.ckpt"), tensors)
    with pytest.raises(ValueError, match=r"^Checkpoint .*partial\.ckpt lacks 1 of the model's embedding/encoder "
                                         r"variables, e\.g\. bert/encoder/layer_1/attention/self/key/bias\."):
        _run(run_outputs, tmp_path, init_checkpoint=prefix)


@pytest.mark.parametrize("kwargs, message", [
    (dict(init_checkpoint="{tmp}/nope.ckpt"),
     "--init_checkpoint: Checkpoint {tmp}/nope.ckpt not found: expected the file {tmp}/nope.ckpt.index."),
    (dict(input_file="{tmp}/missing.txt"), "--input_file not found: {tmp}/missing.txt"),
    (dict(output_file="{tmp}/no/out.jsonl"),
     "--output_file={tmp}/no/out.jsonl: the directory {tmp}/no does not exist."),
    (dict(summary_file="{tmp}/no/s.json"), "--summary_file={tmp}/no/s.json: the directory {tmp}/no does not exist."),
    (dict(plot_file="{tmp}/no/p.png"), "--plot_file={tmp}/no/p.png: the directory {tmp}/no does not exist."),
    (dict(max_seq_length=33), "--max_seq_length=33 is longer than the model's max_position_embeddings=32 "
                              "(bert_config); the model has no position embedding beyond that."),
    (dict(max_seq_length=2), "--max_seq_length=2 is too short: [CLS] and two [SEP] need 3 positions."),
    (dict(batch_size=0), "--batch_size=0 must be positive."),
], ids=["checkpoint", "input", "output_dir", "summary_dir", "plot_dir", "long", "short", "batch"])
def test_bad_input_is_one_line_naming_it(run_outputs, tmp_path, kwargs, message):
    kwargs = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises((ValueError, FileNotFoundError)) as error:
        _run(run_outputs, tmp_path, **kwargs)
    assert str(error.value) == message.format(tmp=tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["input.txt"]


def test_an_empty_input_is_refused(run_outputs, tmp_path):
    (tmp_path / "input.txt").write_text("")
    with pytest.raises(ValueError) as error:
        _run(run_outputs, tmp_path)
    assert str(error.value) == "--input_file %s has no lines; expected one example per line." % (
        tmp_path / "input.txt")


def test_probe_takes_lines_or_examples(run_outputs):
    model = run_outputs["model"]
    lines = ["the dog ||| a cat sat", "x ||| y ||| z"]
    assert attention_rank.examples_from_lines(lines) == [
        feature_extractor.InputExample(0, "the dog", "a cat sat"),
        feature_extractor.InputExample(1, "x ||| y", "z"),  # As read_examples: the last ||| splits.
    ]
    from_lines = attention_rank.probe(model["config"], model["init_checkpoint"], run_outputs["tokenizer"],
                                      lines[:1], max_seq_length=16)
    from_examples = attention_rank.probe(model["config"], model["init_checkpoint"], run_outputs["tokenizer"],
                                         attention_rank.examples_from_lines(lines[:1]), max_seq_length=16)
    assert from_lines == from_examples
    with open(run_outputs["output_file"]) as f:
        second = json.loads(f.readlines()[1])  # The same pair, in another batch.
    assert from_lines[0]["tokens"] == second["tokens"]
    for layer, expected in zip(from_lines[0]["layers"], second["layers"]):
        for head, expected_head in zip(layer["heads"], expected["heads"]):
            assert head["rank"] == expected_head["rank"]
            np.testing.assert_allclose(head["singular_values"], expected_head["singular_values"], rtol=1e-4,
                                       atol=1e-5 * expected_head["singular_values"][0])
