"""BERT's parameter-group table: every variable's group, selectors and the report over it."""

import numpy as np
import pytest

import modeling
from freezing import format_report
from modeling.parameter_groups import BERT_PARAMETER_GROUPS as GROUPS
from modeling.parameter_groups import count_parameters

CONFIG = modeling.BertConfig(
    vocab_size=30, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, head_size=12,
    intermediate_size=20, max_position_embeddings=8, type_vocab_size=2,
)


@pytest.fixture(scope="module")
def names():
    model = modeling.build_model(modeling.BertPretrainingModel(CONFIG))
    return list(modeling.original_variables(model))


@pytest.mark.parametrize(
    "name, group",
    [
        ("bert/embeddings/word_embeddings", ("embeddings", None)),
        ("bert/embeddings/LayerNorm/gamma", ("embeddings", None)),
        ("bert/encoder/layer_2/attention/self/query/bias", ("attention", 2)),
        ("bert/encoder/layer_0/attention/output/LayerNorm/beta", ("attention", 0)),
        ("bert/encoder/layer_11/intermediate/dense/kernel", ("ffn", 11)),
        ("bert/encoder/layer_1/output/LayerNorm/gamma", ("ffn", 1)),
        ("bert/pooler/dense/kernel", ("pooler", None)),
        ("cls/predictions/output_bias", ("heads", None)),
        ("cls/squad/output_weights", ("heads", None)),
        ("output_weights", ("heads", None)),
    ],
)
def test_variable_group(name, group):
    assert GROUPS.group_of(name) == group


def test_every_model_variable_has_a_group(names):
    counts = {}
    for name in names:
        group, _ = GROUPS.group_of(name)
        counts[group] = counts.get(group, 0) + 1
    # embeddings 5; attention 10 and ffn 6 per layer; pooler 2; heads 7.
    assert counts == {"embeddings": 5, "attention": 30, "ffn": 18, "pooler": 2, "heads": 7}


def test_selectors(names):
    def chosen(text):
        return GROUPS.select(names, GROUPS.parse_selectors(text), num_layers=3)

    assert len(chosen("attention")) == 30
    assert all("/layer_1/" in n for n in chosen("attention:1"))
    assert {n.split("/")[2] for n in chosen("ffn:0-1")} == {"layer_0", "layer_1"}
    assert len(chosen("embeddings,ffn:2")) == 5 + 6
    assert chosen("re:LayerNorm/(gamma|beta)$") == [n for n in names if "LayerNorm" in n]
    # A regex takes the rest of the string, commas included.
    assert chosen("pooler,re:^(cls/seq_relationship|bert/pooler)/.*bias$") == [
        "bert/pooler/dense/kernel", "bert/pooler/dense/bias", "cls/seq_relationship/output_bias"]
    assert chosen("") == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("attenton", r"--freeze: unknown parameter group 'attenton' in 'attenton'; expected one of embeddings, attention"),
        ("atention", r"expected one of embeddings, attention, ffn, pooler, heads, or re:<regex> \(did you mean attention\?\)"),
        ("pooler:1", r"--freeze: 'pooler:1': only attention and ffn have layers"),
        ("ffn:a-b", r"--freeze: 'ffn:a-b': layers must be N or N-M"),
        ("ffn:3-1", r"the range is empty"),
        ("re:(", r"--freeze: bad regular expression '\('"),
    ],
)
def test_selector_errors(text, message):
    with pytest.raises(ValueError, match=message):
        GROUPS.parse_selectors(text)


def test_selector_beyond_model_layers(names):
    message = r"--reinit: 'attention:5' matches no variable of this model \(the model has layers 0-2\)"
    with pytest.raises(ValueError, match=message):
        GROUPS.select(names, GROUPS.parse_selectors("attention:5", "--reinit"), "--reinit", 3)
    # Given the layer count, the parser refuses it before any model exists.
    with pytest.raises(ValueError, match=message):
        GROUPS.parse_selectors("attention:5", "--reinit", num_layers=3)
    assert len(GROUPS.parse_selectors("attention:2", "--reinit", num_layers=3)) == 1


def test_report_counts_match_count_parameters(names):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    sizes = {n: int(np.prod(e.shape)) for n, e in modeling.original_variables(model).items()}
    frozen = set(GROUPS.select(list(sizes), GROUPS.parse_selectors("embeddings,ffn:1")))
    report = GROUPS.report(sizes, frozen)
    counts = count_parameters(CONFIG)
    for group in ("embeddings", "attention", "ffn", "pooler"):
        assert report["groups"][group]["parameters"] == counts[group]
    assert report["groups"]["embeddings"]["frozen"] == counts["embeddings"]
    assert report["groups"]["ffn"]["frozen"] == counts["ffn_per_layer"]
    assert report["layers"]["ffn:1"] == {"parameters": counts["ffn_per_layer"], "trainable": 0, "frozen": counts["ffn_per_layer"]}
    assert report["layers"]["attention:2"]["frozen"] == 0
    assert report["total"] == counts["total"]
    assert report["trainable_share"] == pytest.approx(1 - (counts["embeddings"] + counts["ffn_per_layer"]) / counts["total"])
    text = format_report(report)
    assert "ffn:1" in text and "trainable share" in text
