"""The group-table mechanism on a family other than BERT: a toy decoder's names."""

import pytest

from freezing.selectors import ParameterGroups

TOY = ParameterGroups([
    ("embeddings", r"^embedding/"),
    ("attention", r"^decoder/block_(?P<layer>\d+)/self_attention/"),
    ("ffn", r"^decoder/block_(?P<layer>\d+)/feed_forward/"),
    ("embeddings", r"^output_bias$"),  # A group may have several rules.
])
NAMES = ["embedding/table", "decoder/block_0/self_attention/query", "decoder/block_0/feed_forward/w1",
         "decoder/block_1/self_attention/query", "decoder/block_1/feed_forward/w1", "output_bias"]


def test_groups_come_from_the_table():
    assert TOY.groups == ("embeddings", "attention", "ffn")
    assert TOY.layered == ("attention", "ffn")
    assert TOY.group_of("decoder/block_1/feed_forward/w1") == ("ffn", 1)
    assert TOY.group_of("output_bias") == ("embeddings", None)
    assert [TOY.label(name) for name in NAMES[:3]] == ["embeddings", "attention:0", "ffn:0"]
    with pytest.raises(ValueError, match="Variable decoder/norm belongs to no parameter group"):
        TOY.group_of("decoder/norm")


def test_select_and_report_over_the_toy_table():
    selectors = TOY.parse_selectors("embeddings,attention:1", num_layers=2)
    chosen = TOY.select(NAMES, selectors)
    assert chosen == ["embedding/table", "decoder/block_1/self_attention/query", "output_bias"]
    report = TOY.report({name: 10 for name in NAMES}, set(chosen))
    assert report["groups"]["embeddings"] == {"parameters": 20, "trainable": 0, "frozen": 20}
    assert report["layers"]["attention:1"] == {"parameters": 10, "trainable": 0, "frozen": 10}
    assert report["layers"]["attention:0"]["frozen"] == 0
    assert report["trainable_share"] == pytest.approx(0.5)
    assert report["frozen_variables"] == chosen


def test_errors_name_the_flag_and_what_exists():
    with pytest.raises(ValueError, match=r"--reinit: unknown parameter group 'pooler' in 'pooler'; "
                                         r"expected one of embeddings, attention, ffn, or re:<regex>\.$"):
        TOY.parse_selectors("pooler", "--reinit")
    with pytest.raises(ValueError, match=r"--freeze: 'embeddings:1': only attention and ffn have layers"):
        TOY.parse_selectors("embeddings:1")
    with pytest.raises(ValueError, match=r"--freeze: 'ffn:0-2' matches no variable of this model \(the model has layers 0-1\)"):
        TOY.parse_selectors("ffn:0-2", num_layers=2)
    with pytest.raises(ValueError, match=r"--freeze: 're:\^nothing' matches no variable of this model"):
        TOY.select(NAMES, TOY.parse_selectors("re:^nothing"))


STACKED = ParameterGroups([
    ("embeddings", r"^embedding/"),
    ("attention", r"^(?P<stack>enc|dec)/block_(?P<layer>\d+)/attention/"),
    ("ffn", r"^(?P<stack>enc|dec)/block_(?P<layer>\d+)/ffn/"),
], stacks=("enc", "dec"))
STACKED_NAMES = ["embedding/table"] + ["%s/block_%d/%s/w" % (stack, i, part) for stack in ("enc", "dec")
                                       for i in range(3) for part in ("attention", "ffn")]


def test_stacks_select_by_stack_and_layer_and_report_per_stack():
    layers = {"enc": 3, "dec": 2}
    def pick(text):
        return STACKED.select(STACKED_NAMES, STACKED.parse_selectors(text, num_layers=layers), num_layers=layers)
    assert STACKED.locate("dec/block_1/ffn/w") == ("ffn", "dec", 1)
    assert STACKED.label("dec/block_1/ffn/w") == "ffn:dec:1"  # a selector that picks it alone
    assert pick(STACKED.label("dec/block_1/ffn/w")) == ["dec/block_1/ffn/w"]
    assert pick("attention:enc") == ["enc/block_%d/attention/w" % i for i in range(3)]
    assert pick("ffn:dec:0-1") == ["dec/block_0/ffn/w", "dec/block_1/ffn/w"]
    assert pick("ffn:1") == ["enc/block_1/ffn/w", "dec/block_1/ffn/w"]
    with pytest.raises(ValueError, match=r"--freeze: 'ffn:dec:2' matches no variable of this model \(the model has layers 0-1\)"):
        STACKED.parse_selectors("ffn:dec:2", num_layers=layers)
    with pytest.raises(ValueError, match="unknown stack 'encoder'; expected one of enc, dec"):
        STACKED.parse_selectors("ffn:encoder")
    report = STACKED.report({name: 10 for name in STACKED_NAMES}, set(pick("ffn:dec")))
    assert report["layers"]["ffn:dec:1"] == {"parameters": 10, "trainable": 0, "frozen": 10}
    assert report["layers"]["ffn:enc:1"] == {"parameters": 10, "trainable": 10, "frozen": 0}
