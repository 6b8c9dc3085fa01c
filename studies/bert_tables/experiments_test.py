"""The paper's rows: shapes that reproduce its parameter counts."""

import pytest

from studies.bert_tables import experiments, results, scales


@pytest.mark.parametrize("experiment", list(experiments.EXPERIMENTS.values()), ids=lambda e: e.name)
def test_every_published_row_matches_the_papers_count_within_half_a_percent(experiment):
    for row in experiment.rows:
        if row.paper is None:
            continue
        count = results.total_parameters(scales.PAPER.config(row, results.PAPER_VOCAB_SIZE))
        assert count == pytest.approx(row.paper.params_m * 1e6, rel=0.005), row


def test_the_tables_rows_and_published_numbers():
    table2b = experiments.get("table2b")
    assert [(r.hidden_size, r.num_heads, r.effective_head_size, r.intermediate_size) for r in table2b.rows] == [
        (512, 8, 32, 4096), (512, 8, 64, 4096), (512, 8, 128, 4096), (512, 8, 256, 4096)]
    assert table2b.rows[0].paper.squad_f1 == (88.53, 0.06) and table2b.rows[0].paper.mnli == (82.5, 0.1)
    table1 = experiments.get("table1")
    assert [r.effective_head_size for r in table1.rows] == [128, 64, 32]  # Standard d/h.
    assert all(r.head_size is None for r in table1.rows)
    assert [r.num_heads for r in experiments.get("table3").rows] == [8, 12, 16, 20]


def test_figure2_compares_the_fixed_family_with_the_standard_one():
    rows = experiments.get("figure2").rows
    fixed = [r for r in rows if r.family == "fixed head size"]
    standard = [r for r in rows if r.family == "standard"]
    assert [(r.hidden_size, r.num_heads, r.effective_head_size) for r in fixed] == [
        (512, 8, 128), (512, 12, 128), (512, 16, 128), (512, 32, 128)]
    assert [(r.hidden_size, r.num_heads, r.effective_head_size, r.intermediate_size) for r in standard] == [
        (512, 16, 32, 2048), (768, 16, 48, 3072), (1024, 16, 64, 4096)]
    # Only the d = 1024 baseline is published as a number (Table 1's 16-head row).
    assert [r.paper is not None for r in standard] == [False, False, True]


def test_an_unknown_experiment_names_the_known_ones():
    with pytest.raises(ValueError) as error:
        experiments.get("table4")
    assert str(error.value) == ("--experiment=table4 is not known; expected one of table1, table2a, "
                                "table2b, table3, figure2.")


def test_tiny_scale_shrinks_every_row_the_same_way():
    row = experiments.get("table2a").rows[3]
    config = scales.TINY.config(row, vocab_size=100)
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads, config.head_size,
            config.intermediate_size) == (2, 64, 32, 16, 512)
    standard = scales.TINY.config(experiments.get("table1").rows[0], vocab_size=100)
    assert standard.head_size is None and standard.attention_head_size == 128 // 8
