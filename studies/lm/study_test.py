"""The language-model experiments of reproduce_paper_tables: rows, matching, plan, a micro run end to end."""

import dataclasses
import json
import os
import random
import re

import pytest

from studies.lm import experiments as lm_experiments, study as lm_study
from lm.parameter_groups import count_parameters
from lm.task import LmOptions
from reproduction import runner
import studies

WORDS = "the a cat dog sat ran on mat log big small red blue and then it was seen by her".split()
MICRO = dataclasses.replace(lm_experiments.TINY, num_layers=1, shrink=16, vocab_size=40, max_seq_length=16,
                            train_batch_size=8, num_train_steps=4, num_warmup_steps=1)


def _write_text(path, count, seed):
    rng = random.Random(seed)
    path.write_text("\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))
                              for _ in range(count)) + "\n")
    return str(path)


@pytest.fixture
def micro_text(tmp_path):
    return dict(train_file=_write_text(tmp_path / "train.txt", 300, 1),
                eval_file=_write_text(tmp_path / "eval.txt", 20, 2), test_file=_write_text(tmp_path / "test.txt", 20, 3))


def _without_run_dirs(results):
    return json.loads(re.sub(r'"run_dir": "[^"]*"', '"run_dir": ""', json.dumps(results)))


def _options(output_dir, **values):
    return studies.ReproduceOptions(output_dir=str(output_dir), **dict(dict(scale="tiny"), **values))


@pytest.mark.parametrize("name", ["lm_figure1", "lm_figure3a"])
def test_standard_rows_are_the_smallest_with_as_many_parameters(name):
    experiment = lm_experiments.EXPERIMENTS[name]
    grow = "hidden_size" if name == "lm_figure1" else "intermediate_size"
    step = {"hidden_size": None, "intermediate_size": 64}[grow]
    for fixed, standard in zip(experiment.rows[::2], experiment.rows[1::2]):
        assert fixed.head_size == 32 and standard.head_size is None and fixed.num_heads == standard.num_heads
        target = lm_experiments.parameters(fixed)
        ours = lm_experiments.parameters(standard)
        smaller = dataclasses.replace(standard, **{grow: getattr(standard, grow) - (step or standard.num_heads)})
        at_start = getattr(standard, grow) == {"hidden_size": (-(-256 // fixed.num_heads)) * fixed.num_heads,
                                               "intermediate_size": 1024}[grow]
        assert ours >= target or getattr(standard, grow) == 490  # h = 70: d capped at 512
        assert at_start or lm_experiments.parameters(smaller) < target


def test_paper_scale_counts_are_the_papers_range():
    # The paper's LM1B models are roughly 12-30M parameters.
    counts = [lm_experiments.parameters(row) for e in lm_experiments.EXPERIMENTS.values() for row in e.rows]
    assert 6e6 < min(counts) and max(counts) < 30e6
    assert lm_experiments.parameters(lm_experiments.EXPERIMENTS["freezing_lm"].rows[0]) == 13028608


@pytest.mark.parametrize("name", sorted(lm_experiments.EXPERIMENTS))
def test_every_plan_line_is_a_valid_run_lm_command(name, tmp_path):
    written = studies.run(_options(tmp_path, experiment=name, scale="paper", dry_run=True))
    steps_text = open(written["plan_sh"]).read()
    steps = lm_experiments.build(lm_experiments.EXPERIMENTS[name], lm_experiments.PAPER,
                                    lm_study.data_paths(_options(tmp_path, experiment=name, scale="paper",
                                                                  dry_run=True)), str(tmp_path))
    for step in steps:
        options = runner.options_of(step, lm_study.LmStudy(name).programs())
        assert isinstance(options, LmOptions) and options.preset == "lm1b_paper"
        assert step.command_line(python='"${PYTHON}"') in steps_text
    assert "${LM_TRAIN_FILE}" in steps_text and steps_text.count("--vocab_size=32000") == 1


@pytest.mark.eager
def test_a_figure_runs_end_to_end_then_resumes(monkeypatch, micro_text, tmp_path, caplog):
    monkeypatch.setitem(lm_experiments.SCALES, "tiny", MICRO)
    figure = lm_experiments.EXPERIMENTS["lm_figure4"]
    monkeypatch.setitem(lm_experiments.EXPERIMENTS, "lm_figure4", dataclasses.replace(figure, rows=figure.rows[:4]))
    written = studies.run(_options(tmp_path / "out", experiment="lm_figure4", **micro_text))
    rows = {row["name"]: row for row in written["results"]["rows"]}
    assert sorted(rows) == ["fixed_h4", "fixed_h8", "standard_h4", "standard_h8"]
    # standard_h8 is fixed_h8's model (d = 32h = 256, d_p = 32): one run, read twice.
    assert rows["standard_h8"]["run_dir"] == rows["fixed_h8"]["run_dir"]
    assert rows["standard_h8"]["test_perplexity"] == rows["fixed_h8"]["test_perplexity"]
    assert rows["standard_h4"]["run_config"]["hidden_size"] == 8 and rows["fixed_h4"]["run_config"]["hidden_size"] == 16
    for row in rows.values():
        assert 1 < row["test_perplexity"] < 40 and row["global_step"] == 4 and row["trainable_share"] == 1.0
    # Every row scores the same sub-words: the first row's learned vocabulary.
    assert len({row["test_tokens"] for row in rows.values()}) == 1
    table = open(written["results_md"]).read()
    assert "What the paper states" in table and "| test ppl |" in table and "Tiny scale" in table
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert json.loads(open(written["results_json"]).read()) == written["results"]
    caplog.clear()
    with caplog.at_level("INFO"):
        again = studies.run(_options(tmp_path / "out", experiment="lm_figure4", **micro_text))
    assert "Ran 0 steps, skipped 3 finished ones." in caplog.messages
    assert again["results"] == written["results"]


@pytest.mark.eager
def test_freezing_lm_runs_and_draws_bars(monkeypatch, micro_text, tmp_path):
    monkeypatch.setitem(lm_experiments.SCALES, "tiny", MICRO)
    study = lm_experiments.EXPERIMENTS["freezing_lm"]
    monkeypatch.setitem(lm_experiments.EXPERIMENTS, "freezing_lm", dataclasses.replace(study, rows=study.rows[:2]))
    runs = tmp_path / "kept"
    written = studies.run(_options(tmp_path / "out", experiment="freezing_lm", runs_dir=str(runs), **micro_text))
    none, embeddings = written["results"]["rows"]
    assert none["freeze"] == "" and none["trainable_share"] == 1.0
    assert embeddings["freeze"] == "embeddings" and 0 < embeddings["trainable_share"] < 1
    assert os.path.exists(written["plot"])
    # The same output_dir with other training text: each finished step holds its inputs, and refuses.
    other = tmp_path / "other_train.txt"
    _write_text(other, 300, seed=9)
    with pytest.raises(ValueError, match=r"^Step none finished earlier with other inputs: --train_file was "
                                         r"\[.*train.txt.*\], now \[.*other_train.txt.*\]\. Its outputs \(.*\) are not "
                                         r"this run's: use a new --output_dir, or remove them to run the step again\.$"):
        studies.run(_options(tmp_path / "out", experiment="freezing_lm", **dict(micro_text, train_file=str(other))))
    assert json.loads(open(written["results_json"]).read()) == json.loads(json.dumps(written["results"]))
    # Another output folder restores both runs from the kept ones and reports the same figures.
    restored = studies.run(_options(tmp_path / "elsewhere", experiment="freezing_lm", runs_dir=str(runs),
                                    **micro_text))
    assert all(os.path.exists(os.path.join(row["run_dir"], "eval_results.txt.reused.json"))
               for row in restored["results"]["rows"])
    assert _without_run_dirs(restored["results"]) == _without_run_dirs(written["results"])


def test_tiny_scale_without_text_splits_the_sample_corpus(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join("line %d\n\n" % i for i in range(45)))
    paths = lm_study.split_sample_text(str(corpus), str(tmp_path))
    lines = {name: open(path).read().split("\n")[:-1] for name, path in paths.items()}
    assert lines["eval"] == ["line 0", "line 20", "line 40"] and lines["test"] == ["line 1", "line 21", "line 41"]
    assert len(lines["train"]) == 39


def test_paper_scale_without_text_is_named(tmp_path):
    with pytest.raises(ValueError, match="--experiment=lm_figure1 needs --eval_file, --test_file, or --tfds_data_dir"):
        studies.run(_options(tmp_path, experiment="lm_figure1", scale="paper", train_file="x.txt"))
    # A file flag naming no file is refused when the plan is made, not in the first run's log.
    (tmp_path / "eval.txt").write_text("a line\n")
    texts = dict(train_file=str(tmp_path / "missing*.txt"), eval_file=str(tmp_path / "eval.txt"),
                 test_file=str(tmp_path / "eval.txt"))
    with pytest.raises(ValueError, match=r"^--train_file: \S+/missing\*\.txt matches no file\.$"):
        studies.run(_options(tmp_path / "out", experiment="lm_figure1", scale="small", parallel_runs=2, **texts))
    assert not (tmp_path / "out" / "logs").exists()


@pytest.mark.parametrize("name", ["lm_figure1", "lm_figure3a"])
def test_small_scale_matches_parameters_at_its_own_size(name):
    scale, experiment = lm_experiments.SMALL, lm_experiments.EXPERIMENTS[name]
    rows = scale.rows(experiment)
    paper_heads = {row.num_heads for row in experiment.rows}
    assert {row.num_heads for row in rows} == paper_heads & set(scale.heads) and len(rows) >= 4

    def count(config):
        return count_parameters(config.replace(vocab_size=scale.vocab_size))["total"]

    for fixed, standard in zip(rows[::2], rows[1::2]):
        ours, target = scale.config(standard), scale.config(fixed)
        assert ours.attention_head_size == ours.hidden_size // ours.num_attention_heads
        assert target.attention_head_size == 16 and target.hidden_size == 128
        grow = "hidden_size" if name == "lm_figure1" else "intermediate_size"
        step = ours.num_attention_heads if grow == "hidden_size" else 32  # 64 at paper scale, halved
        smaller = ours.replace(**{grow: getattr(ours, grow) - step})
        at_start = getattr(ours, grow) == {"hidden_size": max(128, ours.num_attention_heads),
                                           "intermediate_size": 512}[grow]
        assert count(ours) >= count(target) and (at_start or count(smaller) < count(target))


def test_small_scale_plans_three_seeds_per_row_and_needs_real_text(tmp_path, capsys):
    with pytest.raises(ValueError, match="--experiment=lm_figure1 needs --train_file, --eval_file, --test_file, "
                                         "or --tfds_data_dir"):
        studies.run(_options(tmp_path, experiment="lm_figure1", scale="small"))
    written = studies.run(_options(tmp_path, experiment="lm_figure1", scale="small", dry_run=True))
    plan_text = open(written["plan_sh"]).read()
    assert plan_text.count("run_lm.py") == 18 and plan_text.count("--random_seed=3") == 6
    assert "fixed_h32_seed3" in plan_text and "fixed_h8" not in plan_text
    assert "seeds 1, 2, 3" in open(written["plan_md"]).read()
    assert "Expected time: about 94 minutes for 18 runs one at a time on 2 CPU cores (5.2 min per run" in capsys.readouterr().out


@pytest.mark.eager
def test_seeds_are_averaged_with_their_spread(monkeypatch, micro_text, tmp_path):
    monkeypatch.setitem(lm_experiments.SCALES, "small", dataclasses.replace(MICRO, name="small", seeds=(1, 2)))
    study = lm_experiments.EXPERIMENTS["freezing_lm"]
    monkeypatch.setitem(lm_experiments.EXPERIMENTS, "freezing_lm", dataclasses.replace(study, rows=study.rows[1:3]))
    written = studies.run(_options(tmp_path / "out", experiment="freezing_lm", scale="small", **micro_text))
    embeddings, attention = written["results"]["rows"]
    per_seed = [run["test_perplexity"] for run in embeddings["seeds"]]
    assert [run["seed"] for run in embeddings["seeds"]] == [1, 2] and per_seed[0] != per_seed[1]
    assert embeddings["test_perplexity"] == pytest.approx(sum(per_seed) / 2)
    assert embeddings["test_perplexity_std"] == pytest.approx(abs(per_seed[0] - per_seed[1]) / 2 ** 0.5)
    # Only the unfrozen and the embeddings-frozen rows run with every seed.
    assert [run["seed"] for run in attention["seeds"]] == [1] and attention["test_perplexity_std"] is None
    table = open(written["results_md"]).read()
    assert "%.2f ± %.2f" % (embeddings["test_perplexity"], embeddings["test_perplexity_std"]) in table
    assert "Perplexities and bits per character of embeddings: mean ± sample standard deviation over seeds 1, 2" \
        in table and "the other rows ran with seed 1" in table
    assert sorted(d for d in os.listdir(tmp_path / "out") if "_seed" in d) == [
        "attention_seed1", "embeddings_seed1", "embeddings_seed2"]
    config = json.loads((tmp_path / "out" / "attention_seed1" / "lm_config.json").read_text())
    assert config["initializer"] == "marian"


def test_freezing_lm_initialises_as_the_toolkit_and_seeds_two_rows(tmp_path):
    written = studies.run(_options(tmp_path, experiment="freezing_lm", scale="small", dry_run=True))
    plan_text = open(written["plan_sh"]).read()
    assert plan_text.count("run_lm.py") == 11 and plan_text.count("--random_seed=3") == 2
    assert "none_seed3" in plan_text and "embeddings_seed3" in plan_text and "ffn_seed2" not in plan_text
    for row in lm_experiments.EXPERIMENTS["freezing_lm"].rows:
        config = json.loads((tmp_path / "configs" / ("%s.json" % row.name)).read_text())
        assert config["initializer"] == "marian" and config["hidden_size"] == 128 and config["head_size"] == 16
    # Paper 1's figures keep BERT's initialisation, as their committed runs used.
    assert lm_experiments.SMALL.config(lm_experiments.EXPERIMENTS["lm_figure1"].rows[0]).initializer == "bert"


@pytest.mark.long
def test_runs_side_by_side_give_the_figures_of_runs_one_at_a_time(monkeypatch, micro_text, tmp_path):
    monkeypatch.setitem(lm_experiments.SCALES, "tiny", MICRO)
    figure = lm_experiments.EXPERIMENTS["lm_figure1"]
    monkeypatch.setitem(lm_experiments.EXPERIMENTS, "lm_figure1", dataclasses.replace(figure, rows=figure.rows[:2]))
    one = studies.run(_options(tmp_path / "one", experiment="lm_figure1", parallel_runs=1, **micro_text))
    two = studies.run(_options(tmp_path / "two", experiment="lm_figure1", parallel_runs=2, **micro_text))
    assert _without_run_dirs(two["results"]) == _without_run_dirs(one["results"])
    assert os.path.exists(tmp_path / "two" / "logs" / "standard_h4.log")


def test_converged_scale_plans_early_stopping_from_a_schedule_without_a_step_count(tmp_path, capsys):
    written = studies.run(_options(tmp_path, experiment="lm_figure1", scale="small_converged", dry_run=True))
    # The campaign's mean run (65.9 min) with two going at once: 18 x 65.9 / 2 minutes.
    assert ("Expected time: about 593 minutes for 18 runs, 2 at a time on 2 CPU cores (65.9 min per run beside "
            "another, measured at small_converged scale on lm_figure1's campaign") in capsys.readouterr().out
    plan_text = open(written["plan_sh"]).read()
    for flag in ("--early_stopping_patience=5", "--learning_rate_schedule=inverse_sqrt", "--num_train_steps=40000",
                 "--save_checkpoints_steps=400"):
        assert plan_text.count(flag) == 18, flag
    # The same rows, sizes and parameter matching as the small scale's 1200-step runs.
    small = lm_experiments.EXPERIMENTS["lm_figure1"]
    assert [lm_experiments.SMALL_CONVERGED.config(row) for row in lm_experiments.SMALL_CONVERGED.rows(small)] == [
        lm_experiments.SMALL.config(row) for row in lm_experiments.SMALL.rows(small)]
    assert "stopping after 5 evaluations without a lower one" in open(written["plan_md"]).read()


@pytest.mark.long
@pytest.mark.eager
def test_a_converged_figure_reports_curves_and_epochs_to_best_and_keeps_them(monkeypatch, micro_text, tmp_path):
    converged = dataclasses.replace(MICRO, name="tiny_converged", num_train_steps=12, save_checkpoints_steps=2,
                                    learning_rate_schedule="inverse_sqrt", early_stopping_patience=2, seeds=(1, 2))
    monkeypatch.setitem(lm_experiments.SCALES, "tiny_converged", converged)
    figure = lm_experiments.EXPERIMENTS["lm_figure1"]
    monkeypatch.setitem(lm_experiments.EXPERIMENTS, "lm_figure1", dataclasses.replace(figure, rows=figure.rows[:2]))
    runs = tmp_path / "kept"
    written = studies.run(_options(tmp_path / "out", experiment="lm_figure1", scale="tiny_converged",
                                   runs_dir=str(runs), **micro_text))
    for row in written["results"]["rows"]:
        assert row["epochs_to_best"] is not None and row["epochs_to_best_std"] is not None
        for run in row["seeds"]:
            steps = [point["global_step"] for point in
                     json.loads(open(os.path.join(run["run_dir"], "best", "early_stopping.json")).read())["history"]]
            assert steps == list(range(2, 2 * len(steps) + 1, 2)) and len(run["curve"]) == len(steps)
            # The reported perplexities are those of the best held-out checkpoint.
            assert run["eval_perplexity"] == pytest.approx(min(ppl for _, ppl in run["curve"]), rel=1e-5)
    table = open(written["results_md"]).read()
    assert "| epochs to best |" in table and "best held-out checkpoint" in table
    # Kept runs carry their curves: another folder restored from them reports the same.
    restored = studies.run(_options(tmp_path / "elsewhere", experiment="lm_figure1", scale="tiny_converged",
                                    runs_dir=str(runs), **micro_text))
    assert _without_run_dirs(restored["results"]) == _without_run_dirs(written["results"])
