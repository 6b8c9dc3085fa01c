"""parameter_matching against a closed-form count and the paper's published counts."""

import math

import numpy as np
import pytest

import modeling
from studies.bert_tables import parameter_matching as pm


def _closed_form(d, h, p, inner, layers=24, vocab=30522, positions=512, types=2, heads=True):
    """The BERT parameter count written out term by term (p = per-head size)."""
    embeddings = vocab * d + positions * d + types * d + 2 * d  # three tables + LayerNorm
    attention = 4 * d * h * p + 3 * h * p + d + 2 * d  # Q, K, V, O kernels; their biases; LayerNorm
    ffn = 2 * d * inner + inner + d + 2 * d
    pooler = d * d + d
    total = embeddings + layers * (attention + ffn) + pooler
    if heads:
        total += d * d + d + 2 * d + vocab  # MLM transform, its LayerNorm, output bias (decoder tied)
        total += 2 * d + 2  # NSP
    return total


def _varied(member, family):
    return getattr(member.config, pm.VARIED_KEY[family])


def test_fixed_head_size_members_match_closed_form():
    members = pm.family_members(pm.FIXED_HEAD_SIZE, search_range=(8, 32))
    assert [m.config.num_attention_heads for m in members] == list(range(8, 33))
    for m in members:
        h = m.config.num_attention_heads
        assert (m.config.hidden_size, m.config.head_size, m.config.intermediate_size) == (512, 128, 4096)
        assert m.config.num_hidden_layers == 24 and m.config.vocab_size == 30522
        assert m.parameters == _closed_form(512, h, 128, 4096)


def test_baseline_members_have_standard_heads_and_match_closed_form():
    members = pm.family_members(pm.BASELINE, search_range=(512, 1024))
    # Every multiple of 16 heads from 512 to 1024.
    assert [m.config.hidden_size for m in members] == list(range(512, 1025, 16))
    for m in members:
        d = m.config.hidden_size
        assert m.config.head_size is None and m.config.attention_head_size * 16 == d
        assert m.config.intermediate_size == 4 * d
        assert m.parameters == _closed_form(d, 16, d // 16, 4 * d)
    # BERT-large is the top of the paper's Fig. 2 baseline.
    assert members[-1].parameters == _closed_form(1024, 16, 64, 4096)


def test_head_size_members_match_closed_form():
    members = pm.family_members(pm.HEAD_SIZE, values=[256, 32, 64, 32, 128])
    assert [m.config.head_size for m in members] == [32, 64, 128, 256]  # sorted, deduplicated
    for m in members:
        assert m.parameters == _closed_form(512, 8, m.config.head_size, 4096)


def test_fixed_keys_and_base_config_are_honoured():
    base = modeling.BertConfig(vocab_size=1000, hidden_act="relu", max_position_embeddings=128,
                               type_vocab_size=3, num_hidden_layers=5, head_size=10)
    members = pm.family_members(pm.BASELINE, base_config=base, num_attention_heads=6, search_range=(60, 130),
                                step=12, intermediate_ratio=2.5, num_hidden_layers=3, include_pretraining_heads=False)
    assert [m.config.hidden_size for m in members] == [60, 72, 84, 96, 108, 120]
    for m in members:
        d = m.config.hidden_size
        assert m.config.hidden_act == "relu" and m.config.num_hidden_layers == 3
        assert m.config.head_size is None  # the base's head size is not the baseline's
        assert m.config.intermediate_size == int(2.5 * d)
        assert m.parameters == _closed_form(d, 6, d // 6, int(2.5 * d), layers=3, vocab=1000, positions=128,
                                            types=3, heads=False)
    # The base config is not modified.
    assert base.num_hidden_layers == 5 and base.hidden_size == 768 and base.head_size == 10


def test_counts_without_heads_are_the_encoder_and_pooler():
    with_heads = pm.family_members(pm.FIXED_HEAD_SIZE, values=[12], hidden_size=768, intermediate_size=3072)
    without = pm.family_members(pm.FIXED_HEAD_SIZE, values=[12], hidden_size=768, intermediate_size=3072,
                                include_pretraining_heads=False)
    assert with_heads[0].parameters == _closed_form(768, 12, 128, 3072)
    assert without[0].parameters == _closed_form(768, 12, 128, 3072, heads=False)
    assert with_heads[0].parameters - without[0].parameters == 768 * 768 + 768 + 2 * 768 + 30522 + 2 * 768 + 2


# (family, fixed keys, search space, published count, the paper's value of the varied key)
PAPER_ROWS = [
    # Table 1: BERT-large at 8, 16 and 32 standard heads, 336M.
    (pm.BASELINE, dict(num_attention_heads=8), {}, 336e6, 1024),
    (pm.BASELINE, dict(num_attention_heads=16), {}, 336e6, 1024),
    (pm.BASELINE, dict(num_attention_heads=32), {}, 336e6, 1024),
    # Table 2A: d = 512, d_p = 128, I = 4096 (the fixed family's defaults).
    (pm.FIXED_HEAD_SIZE, {}, {}, 168e6, 8),
    (pm.FIXED_HEAD_SIZE, {}, {}, 193e6, 12),
    (pm.FIXED_HEAD_SIZE, {}, {}, 218e6, 16),
    (pm.FIXED_HEAD_SIZE, {}, {}, 319e6, 32),
    # Table 2B: d = 512, h = 8. The published counts are rounded to 1M, coarser
    # than the 0.39M one unit of d_p adds (142M is nearer d_p = 63), so the
    # search steps by 32 as the paper's head sizes do.
    (pm.HEAD_SIZE, {}, dict(step=32), 130e6, 32),
    (pm.HEAD_SIZE, {}, dict(step=32), 142e6, 64),
    (pm.HEAD_SIZE, {}, dict(step=32), 168e6, 128),
    (pm.HEAD_SIZE, {}, dict(step=32), 218e6, 256),
    # Table 3: d = 768, d_p = 128, I = 3072.
    (pm.FIXED_HEAD_SIZE, dict(hidden_size=768, intermediate_size=3072), {}, 214e6, 8),
    (pm.FIXED_HEAD_SIZE, dict(hidden_size=768, intermediate_size=3072), {}, 252e6, 12),
    (pm.FIXED_HEAD_SIZE, dict(hidden_size=768, intermediate_size=3072), {}, 290e6, 16),
    (pm.FIXED_HEAD_SIZE, dict(hidden_size=768, intermediate_size=3072), {}, 327e6, 20),
]


@pytest.mark.parametrize("family, fixed, space, published, expected", PAPER_ROWS)
def test_paper_rows_are_the_closest_members_to_their_published_counts(family, fixed, space, published, expected):
    member = pm.match_params(family, published, **dict(fixed, **space))
    assert _varied(member, family) == expected
    assert abs(member.parameters - published) / published < 0.005
    # With the heads every published figure is the count rounded to millions.
    assert round(member.parameters / 1e6) == published / 1e6


def test_table_3_needs_the_pretraining_heads_to_round_to_the_published_count():
    without = pm.match_params(pm.FIXED_HEAD_SIZE, 214e6, hidden_size=768, intermediate_size=3072,
                              include_pretraining_heads=False)
    assert without.config.num_attention_heads == 8
    assert round(without.parameters / 1e6) == 213


def test_ties_go_to_the_smaller_model():
    low = _closed_form(512, 8, 128, 4096)
    high = _closed_form(512, 9, 128, 4096)
    assert (high - low) % 2 == 0
    midpoint = (low + high) // 2
    assert pm.match_params(pm.FIXED_HEAD_SIZE, midpoint).config.num_attention_heads == 8
    assert pm.match_params(pm.FIXED_HEAD_SIZE, float(midpoint)).config.num_attention_heads == 8
    assert pm.match_params(pm.FIXED_HEAD_SIZE, midpoint + 1).config.num_attention_heads == 9
    assert pm.match_params(pm.FIXED_HEAD_SIZE, midpoint - 1).config.num_attention_heads == 8
    # The answer does not depend on the order the candidates are given in.
    assert pm.match_params(pm.FIXED_HEAD_SIZE, midpoint, values=[9, 8]).config.num_attention_heads == 8


def test_budgets_beyond_the_search_space_get_the_edge_unless_a_tolerance_is_set():
    member = pm.match_params(pm.FIXED_HEAD_SIZE, 400e6, search_range=(8, 32))
    assert member.config.num_attention_heads == 32
    with pytest.raises(ValueError, match=r"max_relative_error.*num_attention_heads = 32.*Widen"):
        pm.match_params(pm.FIXED_HEAD_SIZE, 400e6, search_range=(8, 32), max_relative_error=0.05)
    # Within tolerance the match is returned.
    inside = pm.match_params(pm.FIXED_HEAD_SIZE, 168e6, max_relative_error=0.005)
    assert inside.config.num_attention_heads == 8


def test_members_between_lists_the_figure_2_families():
    fixed_low, fixed_high = _closed_form(512, 8, 128, 4096), _closed_form(512, 32, 128, 4096)
    fixed = pm.members_between(pm.FIXED_HEAD_SIZE, fixed_low, fixed_high)
    assert [m.config.num_attention_heads for m in fixed] == list(range(8, 33))
    # The baseline members with counts in the same range, by the closed form
    # (d from 720 to 992).
    expected = [d for d in range(16, 4097, 16) if fixed_low <= _closed_form(d, 16, d // 16, 4 * d) <= fixed_high]
    baseline = pm.members_between(pm.BASELINE, fixed_low, fixed_high)
    assert [m.config.hidden_size for m in baseline] == expected
    assert expected[0] == 720 and expected[-1] == 992
    assert pm.members_between(pm.BASELINE, 1, 1000) == []


def test_numpy_numbers_are_accepted():
    member = pm.match_params(pm.FIXED_HEAD_SIZE, np.float64(193e6), values=np.arange(8, 17))
    assert member.config.num_attention_heads == 12
    assert isinstance(member.config.num_attention_heads, int)


@pytest.mark.parametrize("budget", [0, -1e6, math.nan, math.inf, True, "218e6", None])
def test_bad_budget_is_named(budget):
    with pytest.raises(ValueError, match=r"match_params: `budget` must be a positive number"):
        pm.match_params(pm.FIXED_HEAD_SIZE, budget)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pm.match_params("fixed", 1e8), r"unknown `family` 'fixed'; expected one of fixed_head_size, baseline, head_size"),
        (lambda: pm.family_members(pm.FIXED_HEAD_SIZE, values=[]), r"`values` is empty"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, search_range=(513, 520)),
         r"search space is empty: no multiple of `step` = 16 in `search_range` = \(513, 520\)"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, search_range=(32, 8)), r"search space is empty"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, search_range=(0, 8)), r"`search_range` must be \(low, high\)"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, search_range=8), r"`search_range` must be \(low, high\)"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, step=0), r"`step` must be a positive integer"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, step=24), r"`step` = 24 must be a multiple of num_attention_heads = 16"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, values=[512, 520]), r"`values` must be multiples of num_attention_heads = 16.*520"),
        (lambda: pm.match_params(pm.HEAD_SIZE, 1e8, values=[32, 1.5]), r"`values` must be positive integers"),
        (lambda: pm.match_params(pm.HEAD_SIZE, 1e8, values=[32], step=32), r"either as `values` or as `search_range` and `step`"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, num_attention_heads=8), r"`num_attention_heads` is what the fixed_head_size family varies"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, head_size=64), r"`head_size` cannot be fixed"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, hiden_size=768), r"unknown key `hiden_size`"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, intermediate_size=4096, intermediate_ratio=4), r"not both"),
        (lambda: pm.match_params(pm.BASELINE, 1e8, intermediate_ratio=-1), r"`intermediate_ratio` must be a positive number"),
        (lambda: pm.family_members(pm.BASELINE, values=[16], intermediate_ratio=4.03), r"`intermediate_ratio` = 4.03.*not an integer"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, base_config={"vocab_size": 5}), r"`base_config` must be a BertConfig"),
        (lambda: pm.match_params(pm.FIXED_HEAD_SIZE, 1e8, max_relative_error=0), r"`max_relative_error` must be a positive number"),
        (lambda: pm.members_between(pm.FIXED_HEAD_SIZE, 0, 1e8), r"`min_parameters` must be a positive number"),
        (lambda: pm.members_between(pm.FIXED_HEAD_SIZE, 2e8, 1e8), r"`max_parameters` = 100000000.0 must be >= `min_parameters`"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
