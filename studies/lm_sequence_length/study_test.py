"""lm_sequence_length: the two models, the plan at every n, a micro run end to end with its report."""

import dataclasses
import json

import pytest

from lm.parameter_groups import count_parameters
from lm.task import LmOptions
from reproduction import runner, selection
from studies.lm import experiments as lm_experiments
from studies.lm.study_test import micro_text  # noqa: F401  (a fixture)
from studies.lm_sequence_length import experiments, report, study as sequence_study
import studies

MICRO = experiments.SequenceLengthScale(
    "tiny", dataclasses.replace(lm_experiments.TINY_CONVERGED, num_layers=1, shrink=16, vocab_size=40,
                                num_train_steps=8, num_warmup_steps=1, save_checkpoints_steps=4,
                                early_stopping_patience=1, seeds=(1, 2)), (4, 8), 32)


def _options(output_dir, **values):
    return studies.ReproduceOptions(output_dir=str(output_dir), experiment="lm_sequence_length",
                                    **dict(dict(scale="tiny"), **values))


def test_the_standard_model_is_the_smallest_with_as_many_parameters_and_the_fixed_head_covers_every_n():
    scale = experiments.SMALL_CONVERGED
    fixed, standard = (scale.config(model).replace(vocab_size=4000) for model in experiments.MODELS)
    assert (fixed.hidden_size, fixed.num_attention_heads, fixed.attention_head_size) == (128, 8, 128)
    assert fixed.attention_head_size >= max(scale.lengths) and fixed.max_position_embeddings >= max(scale.lengths)
    assert standard.attention_head_size == standard.hidden_size // 8 < min(scale.lengths) * 2
    count = lambda config: count_parameters(config)["total"]  # noqa: E731
    assert count(standard) >= count(fixed) > count(standard.replace(hidden_size=standard.hidden_size - 8))
    assert [scale.batch_size(n) * n for n in scale.lengths] == [2048] * 4


def test_small_plan_runs_every_n_with_packed_text_and_equal_tokens_per_step(tmp_path):
    written = studies.run(_options(tmp_path, scale="small_converged", dry_run=True))
    steps = experiments.build(experiments.SMALL_CONVERGED, lm_experiments.LmDataPaths(
        train_file="t", eval_file="e", test_file="x"), str(tmp_path))
    assert len(steps) == 4 * 2 * 3 and [s.name for s in steps[:2]] == ["n16_fixed_seed1", "n16_standard_seed1"]
    for step in steps:
        options = runner.options_of(step, sequence_study.SequenceLengthStudy().programs())
        assert isinstance(options, LmOptions) and options.pack_lines
        assert options.max_seq_length * options.train_batch_size == 2048
        assert options.early_stopping_patience == 5 and options.learning_rate_schedule == "inverse_sqrt"
    plan_text = open(written["plan_sh"]).read()
    assert plan_text.count("run_lm.py") == 24 and plan_text.count("--pack_lines") == 24
    assert "--max_seq_length=128" in plan_text and "--train_batch_size=16 " in plan_text
    assert "| standard | 248 | 8 | 31 | 512 | 3 |" in open(written["plan_md"]).read()
    # Two runs at a time by default where the language-model studies measured it, one elsewhere.
    study = sequence_study.SequenceLengthStudy()
    assert [study.parallel_runs(scale, 2) for scale in ("small_converged", "tiny", "paper")] == [2, 1, 1]


def test_paper_scale_plans_lm1b_sizes_up_to_n_256(tmp_path):
    scale = experiments.PAPER
    fixed, standard = (scale.config(model) for model in experiments.MODELS)
    assert (fixed.hidden_size, fixed.attention_head_size, fixed.num_hidden_layers) == (256, 256, 6)
    assert standard.attention_head_size == standard.hidden_size // 8 and fixed.max_position_embeddings == 256
    written = studies.run(_options(tmp_path, scale="paper", dry_run=True))
    plan_text = open(written["plan_sh"]).read()
    assert plan_text.count("run_lm.py") == 8 and "--max_seq_length=256 " in plan_text
    assert "--train_batch_size=128 " in plan_text and "--vocab_size=32000" in plan_text


def test_rows_and_seeds_select_a_subset(tmp_path):
    steps = experiments.build(experiments.SMALL_CONVERGED, lm_experiments.LmDataPaths(
        train_file="t", eval_file="e", test_file="x"), str(tmp_path))
    chosen, added = selection.select(steps, "n64_fixed,n128_standard", "2")
    # The first run learns the vocabulary the others read: it comes along.
    assert [s.name for s in chosen] == ["n16_fixed_seed1", "n64_fixed_seed2", "n128_standard_seed2"]
    assert added == ["n16_fixed_seed1"]
    with pytest.raises(ValueError, match="--rows"):
        selection.select(steps, "n256_fixed", None)


@pytest.mark.long
@pytest.mark.eager
def test_a_micro_study_runs_end_to_end_with_its_gap_table_and_plot(monkeypatch, micro_text, tmp_path):  # noqa: F811
    monkeypatch.setitem(experiments.SCALES, "tiny", MICRO)
    written = studies.run(_options(tmp_path / "out", **micro_text))
    results = written["results"]
    assert [row["name"] for row in results["rows"]] == ["n4_fixed", "n4_standard", "n8_fixed", "n8_standard"]
    for row in results["rows"]:
        assert [run["seed"] for run in row["seeds"]] == [1, 2] and row["test_perplexity_std"] is not None
        assert row["batch_size"] * row["length"] == 32 and 1 < row["test_perplexity"] < 60
        assert all(run["curve"] and run["best_step"] in (4, 8) for run in row["seeds"])
    # The same two models at every n.
    assert len({(row["model"], row["params"]) for row in results["rows"]}) == 2
    by_name = {row["name"]: row for row in results["rows"]}
    for gap in results["gaps"]:
        n = gap["length"]
        fixed, standard = by_name["n%d_fixed" % n], by_name["n%d_standard" % n]
        assert gap["gap"] == pytest.approx(standard["test_perplexity"] - fixed["test_perplexity"])
        assert gap["yardstick"] == pytest.approx(2 * max(fixed["test_perplexity_std"], standard["test_perplexity_std"]))
    assert results["growth"]["change"] == pytest.approx(results["gaps"][1]["gap"] - results["gaps"][0]["gap"])
    table = open(written["results_md"]).read()
    assert "| n | gap | yardstick | reading |" in table and "Tiny scale" in table
    assert "From n = 4 to n = 8 the gap changes by" in table
    assert "mean ± sample standard deviation over seeds 1, 2" in table
    one_seed = dict(results, rows=[dict(row, seeds=row["seeds"][:1]) for row in results["rows"]])
    assert "one run per row (seed 1)" in report.markdown(one_seed, "")
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert json.loads(open(written["results_json"]).read()) == json.loads(json.dumps(results))


def test_the_growth_reading_follows_the_yardstick():
    def rows(gap_short, gap_long, std):
        found = []
        for length, gap in ((4, gap_short), (8, gap_long)):
            found += [dict(length=length, model="fixed", test_perplexity=100.0, test_perplexity_std=std),
                      dict(length=length, model="standard", test_perplexity=100.0 + gap, test_perplexity_std=std)]
        return found

    def grows(gap_short, gap_long, std):
        found = rows(gap_short, gap_long, std)
        change = gap_long - gap_short
        return change > report._yardstick(*found)  # pylint: disable=protected-access

    assert grows(0.0, 10.0, 2.0) and not grows(0.0, 3.0, 2.0) and not grows(5.0, 0.0, 1.0)
