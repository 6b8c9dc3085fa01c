"""freezing_nmt in reproduce_paper_tables: rows, exact paper-scale counts, the plan, a micro run end to end."""

import dataclasses
import json
import os
import re
import warnings

import pytest

from nmt import synthetic
from studies.freezing_nmt import experiments as nmt_experiments, report, study as nmt_study, widths
from nmt.parameter_groups import count_parameters
from nmt.task import NmtOptions
from reproduction import runner
import studies

MICRO = dataclasses.replace(nmt_experiments.TINY, shrink=16, num_encoder_layers=1, num_decoder_layers=1,
                            vocab_size=60, train_batch_size=32, num_train_steps=4, num_warmup_steps=1,
                            save_checkpoints_steps=2, max_seq_length=48, max_decode_length=8)


def _options(output_dir, **values):
    return studies.ReproduceOptions(output_dir=str(output_dir), **dict(dict(scale="tiny"), **values))


def test_rows_and_paper_scale_shares_follow_the_presets():
    rows = nmt_experiments.rows(nmt_experiments.PAPER)
    assert len(rows) == 3 * 7 + 3 and rows[0].name == "transformer-big/none"
    big = nmt_experiments.PAPER.config(rows[0]).replace(vocab_size=32000)
    base = nmt_experiments.PAPER.config(rows[7]).replace(vocab_size=32000)
    # What the setup notes state for a 32k vocabulary: the FFN holds ~48% of big's and ~42% of base's
    # parameters, the embeddings ~16% and ~27%.
    assert 1 - nmt_experiments.trainable_share(big, "ffn") == pytest.approx(0.48, abs=0.01)
    assert 1 - nmt_experiments.trainable_share(base, "ffn") == pytest.approx(0.42, abs=0.01)
    assert 1 - nmt_experiments.trainable_share(big, "embeddings") == pytest.approx(0.16, abs=0.01)
    assert 1 - nmt_experiments.trainable_share(base, "embeddings") == pytest.approx(0.27, abs=0.01)
    half = [r for r in rows if r.name == "transformer-big/ffn_width_half"][0]
    shrunk = nmt_experiments.PAPER.config(half).replace(vocab_size=32000)
    assert shrunk.intermediate_size == 2048 and shrunk.hidden_size == 1024
    # The trainable parts keep their size: as many trainable parameters as the full-width row.
    full = count_parameters(big)
    assert count_parameters(shrunk)["total"] - count_parameters(shrunk)["ffn"] == full["total"] - full["ffn"]


def test_the_paper_plan_is_valid_run_translation_commands_with_exact_counts(tmp_path):
    written = studies.run(_options(tmp_path, experiment="freezing_nmt", scale="paper", dry_run=True))
    plan_sh, plan_md = open(written["plan_sh"]).read(), open(written["plan_md"]).read()
    steps = nmt_experiments.build(nmt_experiments.PAPER, nmt_study.data_flags(
        _options(tmp_path, experiment="freezing_nmt", scale="paper", dry_run=True)), None, str(tmp_path))
    assert len(steps) == 24
    for step in steps:
        options = runner.options_of(step, nmt_study.NmtStudy().programs())
        assert isinstance(options, NmtOptions) and options.preset in ("transformer-big", "transformer-base",
                                                                      "transformer-tiny")
        assert step.command_line(python='"${PYTHON}"') in plan_sh
    assert "${NMT_TRAIN_TSV}" in plan_sh and plan_sh.count("--vocab_size=32000") == 1
    big = nmt_experiments.PAPER.config(nmt_experiments.rows(nmt_experiments.PAPER)[0]).replace(vocab_size=32000)
    assert "| transformer-big/none | — | 1024 (64, 4096), 6+6 | {:,} | 100.0% |".format(
        count_parameters(big)["total"]) in plan_md


def _without_run_dirs(results):
    return json.loads(re.sub(r'"run_dir": "[^"]*"', '"run_dir": ""', json.dumps(results)))


@pytest.mark.long
def test_micro_run_end_to_end_then_resumes(monkeypatch, tmp_path, caplog):
    # Two rows (the shrunk ones run in the small-scale slice below): every run here is trained several times over.
    monkeypatch.setitem(nmt_experiments.SCALES, "tiny", dataclasses.replace(MICRO, freezings=("", "ffn"),
                                                                           shrunk_rows=False))
    monkeypatch.setattr(nmt_study, "SYNTHETIC_SIZES", dict(num_train=300, num_dev=10, num_test=10))
    runs = tmp_path / "kept"
    written = studies.run(_options(tmp_path / "out", experiment="freezing_nmt", runs_dir=str(runs)))
    rows = {row["name"]: row for row in written["results"]["rows"]}
    assert sorted(rows) == ["transformer-tiny/ffn", "transformer-tiny/none"]
    assert rows["transformer-tiny/none"]["trainable_share"] == 1.0
    assert rows["transformer-tiny/none"]["share_of_baseline_bleu"] in (None, 1.0)
    assert 0 < rows["transformer-tiny/ffn"]["trainable_share"] < 1
    for row in rows.values():
        assert row["best_step"] in (2, 4) and 0 <= row["test_bleu"] <= 100  # the best dev checkpoint is scored
        # The step's --train_batch_size=32 (the flag's default) wins over the preset's 128, as on a command line.
        assert row["epochs_to_best"] == pytest.approx(row["best_step"] * 32 / 300)
        # The learning curve: the dev evaluations at steps 2 and 4, the best among them.
        curve = row["seeds"][0]["dev_curve"]
        assert [epochs for epochs, _ in curve] == pytest.approx([2 * 32 / 300, 4 * 32 / 300])
        assert max(bleu for _, bleu in curve) == pytest.approx(row["dev_bleu"])
    table = open(written["results_md"]).read()
    assert "What the paper states" in table and "| test BLEU |" in table and "Tiny scale" in table
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert json.loads(open(written["results_json"]).read()) == written["results"]
    caplog.clear()
    with caplog.at_level("INFO"):
        again = studies.run(_options(tmp_path / "out", experiment="freezing_nmt"))
    assert "Ran 0 steps, skipped 2 finished ones." in caplog.messages
    assert again["results"] == written["results"]
    # Another output folder restores every run from the kept ones (the first row's vocabulary included)
    # and reports the same figures.
    kept = runs / "transformer-tiny_none"
    assert sorted(os.path.relpath(os.path.join(d, f), kept) for d, _, files in os.walk(kept) for f in files) == sorted(
        nmt_experiments.KEPT_FILES + nmt_experiments.VOCABULARY_FILES + ("eval_results.txt.inputs.json",
                                                                         "eval_results.txt.machine.json"))
    caplog.clear()
    with caplog.at_level("INFO"):
        elsewhere = studies.run(_options(tmp_path / "elsewhere", experiment="freezing_nmt", runs_dir=str(runs)))
    assert "Ran 0 steps, skipped 2 finished ones." in caplog.messages
    assert _without_run_dirs(elsewhere["results"]) == _without_run_dirs(written["results"])
    # Two rows side by side, each in a process on its share of the cores: the files of the runs one at a time.
    studies.run(_options(tmp_path / "side_by_side", experiment="freezing_nmt", rows="none,ffn", parallel_runs=2))
    for run in ("transformer-tiny_none", "transformer-tiny_ffn"):
        for name in ("eval_results.txt", "test_results.txt", "translations.test.txt"):
            assert (tmp_path / "side_by_side" / run / name).read_text() == (tmp_path / "out" / run / name).read_text()


def test_paper_scale_without_data_is_named(tmp_path):
    with pytest.raises(ValueError, match="--experiment=freezing_nmt at --scale=paper needs --train_tsv"):
        studies.run(_options(tmp_path, experiment="freezing_nmt", scale="paper"))
    with pytest.raises(ValueError, match="--experiment=freezing_nmt needs --dev_tsv, or --dev_src with --dev_tgt"):
        studies.run(_options(tmp_path, experiment="freezing_nmt", train_tsv="x.tsv", test_tsv="y.tsv"))
    # A file flag naming no file is refused when the plan is made, not in the first run's log.
    (tmp_path / "dev.tsv").write_text("ein Satz\ta sentence\n")
    with pytest.raises(ValueError, match=r"^--train_tsv: \S+/missing\.tsv matches no file\.$"):
        studies.run(_options(tmp_path / "out", experiment="freezing_nmt", scale="small", parallel_runs=2,
                             train_tsv=str(tmp_path / "missing.tsv"), dev_tsv=str(tmp_path / "dev.tsv"),
                             test_tsv=str(tmp_path / "dev.tsv")))
    assert not (tmp_path / "out" / "logs").exists()


def test_small_scale_configs_seeds_and_plan(tmp_path, capsys):
    scale = nmt_experiments.SMALL
    configs = {row.name.split("/")[1]: scale.config(row) for row in nmt_experiments.rows(scale)}
    assert {(c.hidden_size, c.num_encoder_layers, c.num_decoder_layers, c.num_attention_heads, c.initializer)
            for c in configs.values()} == {(64, 3, 1, 8, "marian")}
    assert [configs[n].intermediate_size for n in ("none", "ffn_width_half", "ffn_width_quarter")] == [384, 192, 96]
    assert configs["none"].attention_head_size == 8 and configs["attention_head_size_half"].attention_head_size == 4
    seeded = [row.name for row in nmt_experiments.rows(scale) if scale.row_seeds(row) == (1, 2, 3)]
    assert seeded == ["transformer-tiny/none", "transformer-tiny/embeddings", "transformer-tiny/attention",
                      "transformer-tiny/ffn"]
    with pytest.raises(ValueError, match="--experiment=freezing_nmt at --scale=small needs --train_tsv"):
        studies.run(_options(tmp_path, experiment="freezing_nmt", scale="small"))
    written = studies.run(_options(tmp_path, experiment="freezing_nmt", scale="small", dry_run=True))
    plan_sh = open(written["plan_sh"]).read()
    # Every row at seed 1 first, then the further seeds of the four rows that have them.
    order = [line.split("--output_dir=")[1].split()[0].rsplit("/", 1)[1] for line in plan_sh.splitlines()
             if "run_translation.py" in line]
    assert len(order) == 18 and order[:10] == ["transformer-tiny_%s_seed1" % r.name.split("/")[1]
                                                for r in nmt_experiments.rows(scale)]
    assert order[10:] == ["transformer-tiny_%s_seed%d" % (n, seed) for seed in (2, 3)
                          for n in ("none", "embeddings", "attention", "ffn")]
    plan_md = open(written["plan_md"]).read()
    assert "Seeds 1, 2, 3 for transformer-tiny/none, transformer-tiny/embeddings" in plan_md
    assert ("a dev BLEU evaluation every 250 steps, stopping after 5 without a better one and no rise beyond noise "
            "in the last 10.") in plan_md
    # Trained to convergence: at most 20000 steps, stopping after 5 dev evaluations without a better BLEU.
    assert plan_sh.count("--num_train_steps=20000") == 18 and plan_sh.count("--early_stopping_patience=5") == 18
    assert "Expected time" not in capsys.readouterr().out  # not measured at this scale yet


@pytest.mark.long
@pytest.mark.eager
def test_small_scale_end_to_end_on_a_slice_averages_seeds(monkeypatch, tmp_path):
    monkeypatch.setitem(nmt_experiments.SCALES, "small", dataclasses.replace(MICRO, name="small", seeds=(1, 2),
                                                                            freezings=("ffn",)))
    paths = synthetic.write_task(str(tmp_path / "data"), seed=0, num_train=300, num_dev=10, num_test=10)
    written = studies.run(_options(tmp_path / "out", experiment="freezing_nmt", scale="small",
                                   train_tsv=paths.train, dev_tsv=paths.dev, test_tsv=paths.test))
    rows = {row["name"].split("/")[1]: row for row in written["results"]["rows"]}
    assert sorted(rows) == ["attention_head_size_half", "ffn", "ffn_width_half", "ffn_width_quarter"]
    ffn = rows["ffn"]
    per_seed = [run["test_bleu"] for run in ffn["seeds"]]
    assert [run["seed"] for run in ffn["seeds"]] == [1, 2]
    assert ffn["test_bleu"] == pytest.approx(sum(per_seed) / 2)
    assert ffn["test_bleu_std"] == pytest.approx(abs(per_seed[0] - per_seed[1]) / 2 ** 0.5)
    assert rows["ffn_width_half"]["test_bleu_std"] is None and len(rows["ffn_width_half"]["seeds"]) == 1
    assert rows["ffn_width_half"]["run_config"]["intermediate_size"] == rows["ffn"]["run_config"][
        "intermediate_size"] // 2
    for run in (run for row in rows.values() for run in row["seeds"]):
        assert run["last_evaluated_step"] == 4 and run["still_improving"] == (run["best_step"] == 4)
    table = open(written["results_md"]).read()
    assert "Small scale" in table and "BLEU, chrF and epochs of transformer-tiny/ffn: mean ± sample standard " \
        "deviation over seeds 1, 2" in table
    # The sizes as run beside the paper's transformer-tiny (d 256, 8 heads, FFN 1536, 6 + 2 layers).
    header = next(line for line in table.splitlines() if line.startswith("| row |")).split(" | ")
    half = dict(zip(header, next(line for line in table.splitlines() if "/ffn_width_half |" in line).split(" | ")))
    assert (half["d (d_p, FFN), layers"], half["d (d_p, FFN), layers (paper)"]) == ("16 (2, 48), 1+1",
                                                                                     "256 (32, 768), 6+2")
    assert sorted(d for d in os.listdir(tmp_path / "out") if d.startswith("transformer-tiny")) == [
        "transformer-tiny_attention_head_size_half_seed1", "transformer-tiny_ffn_seed1", "transformer-tiny_ffn_seed2",
        "transformer-tiny_ffn_width_half_seed1", "transformer-tiny_ffn_width_quarter_seed1"]


def test_the_width_ladder_keeps_depth_heads_and_ffn_rule_around_the_small_scale(tmp_path):
    ladder = {}
    for name in ("small_d32", "small", "small_d128"):
        scale = nmt_experiments.SCALES[name]
        configs = [scale.config(row) for row in nmt_experiments.rows(scale)]
        base = configs[0]
        ladder[name] = (base.hidden_size, base.attention_head_size, base.intermediate_size)
        assert (base.num_encoder_layers, base.num_decoder_layers, base.num_attention_heads) == (3, 1, 8)
        assert base.intermediate_size == 6 * base.hidden_size and base.attention_head_size == base.hidden_size // 8
        assert (scale.vocab_size, scale.seeds, scale.early_stopping_patience, scale.num_train_steps) == (
            4000, (1, 2, 3), 5, 20000)
    assert ladder == {"small_d32": (32, 4, 192), "small": (64, 8, 384), "small_d128": (128, 16, 768)}
    names = {name: [row.name.split("/")[1] for row in nmt_experiments.rows(nmt_experiments.SCALES[name])]
             for name in ("small_d32", "small_d128")}
    assert names == {"small_d32": ["none", "embeddings", "attention", "ffn"],
                     "small_d128": ["none", "embeddings", "attention", "ffn", "embeddings+ffn"]}
    for name, runs in (("small_d32", 12), ("small_d128", 13)):
        written = studies.run(_options(tmp_path / name, experiment="freezing_nmt", scale=name, dry_run=True))
        plan_sh = open(written["plan_sh"]).read()
        assert plan_sh.count("run_translation.py") == runs and plan_sh.count("--random_seed=3") == 4
    # Attention alone trainable at d = 128: its share, stated in the plan.
    wide = nmt_experiments.SMALL_D128
    row = nmt_experiments.rows(wide)[-1]
    share = nmt_experiments.trainable_share(wide.config(row).replace(vocab_size=4000), row.freeze)
    assert 0.19 < share < 0.21 and "| 20.2% |" in open(tmp_path / "small_d128" / "plan.md").read()


def _width_results(d, shares, seeds=(1, 2, 3)):
    """A freezing_nmt results dict at width d: baseline BLEU 30 + seed, each frozen row at its share of it."""
    def row(freeze, share):
        runs = [dict(seed=s, test_bleu=(30.0 + s) * share(s)) for s in seeds]
        return dict(freeze=freeze, ffn_divisor=1, head_size_divisor=1, trainable_share=0.5, seeds=runs,
                    run_config=dict(hidden_size=d))
    return dict(experiment="freezing_nmt", rows=[row("", lambda s: 1.0)] + [
        row(freeze, share) for freeze, share in shares.items()])


def test_the_width_trend_reads_each_settings_cost_against_its_yardstick():
    narrow = _width_results(32, {"ffn": lambda s: 0.70 + 0.01 * s, "attention": lambda s: 0.60 + 0.01 * s,
                                 "embeddings": lambda s: 0.60 + 0.05 * s})
    wide = _width_results(128, {"ffn": lambda s: 0.90 + 0.01 * s, "attention": lambda s: 0.50 + 0.01 * s,
                                "embeddings": lambda s: 0.62 + 0.05 * s})
    middle = _width_results(64, {"ffn": lambda s: 0.80, "attention": lambda s: 0.55, "embeddings": lambda s: 0.6})
    trend = widths.trend([wide, narrow, middle])
    assert trend["widths"] == [32, 64, 128]
    ffn, attention, embeddings = (trend["settings"][s] for s in ("ffn", "attention", "embeddings"))
    assert [p["mean"] for p in ffn["points"]] == pytest.approx([0.72, 0.80, 0.92])
    assert ffn["points"][0]["std"] == pytest.approx(0.01)
    assert ffn["cost_change"] == pytest.approx(-0.20) and ffn["yardstick"] == pytest.approx(0.02)
    assert ffn["verdict"] == "reproduced" and attention["verdict"] == "not reproduced"
    assert embeddings["verdict"] == "inconclusive"  # its cost falls 2 points, against a yardstick of 10
    text = widths.markdown(trend)
    assert "| ffn | 72% ± 1 (50% trainable) | 80% ± 0 (50% trainable) | 92% ± 1 (50% trainable) | -20.0 points | 2.0 | " \
           "reproduced |" in text
    with pytest.raises(ValueError, match="two reports have the same width"):
        widths.trend([narrow, narrow])


def test_a_width_plot_without_any_share_says_so(tmp_path):
    trend = dict(widths=[8, 16], settings=dict(ffn=dict(verdict=None, points=[
        dict(hidden_size=8, mean=None, std=None), dict(hidden_size=16, mean=None, std=None)])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of a legend without entries
        path = widths.plot(str(tmp_path), trend, "tiny")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_width_results_are_read_and_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"--width_results: .*missing.json does not exist"):
        widths.read([str(tmp_path / "missing.json")])
    (tmp_path / "results.json").write_text(json.dumps(dict(experiment="lm_figure1")))
    with pytest.raises(ValueError, match=r"is a report of 'lm_figure1', not of freezing_nmt"):
        widths.read([str(tmp_path)])


@pytest.mark.long
@pytest.mark.eager
def test_a_micro_width_report_sets_another_width_beside_its_own(monkeypatch, tmp_path):
    paths = synthetic.write_task(str(tmp_path / "data"), seed=0, num_train=300, num_dev=10, num_test=10)
    data = dict(train_tsv=paths.train, dev_tsv=paths.dev, test_tsv=paths.test)
    monkeypatch.setitem(nmt_experiments.SCALES, "small_d32", dataclasses.replace(
        MICRO, name="small_d32", shrink=32, freezings=("", "ffn"), shrunk_rows=False))
    monkeypatch.setitem(nmt_experiments.SCALES, "small_d128", dataclasses.replace(
        MICRO, name="small_d128", shrink=16, freezings=("", "ffn"), shrunk_rows=False))
    narrow = studies.run(_options(tmp_path / "d32", experiment="freezing_nmt", scale="small_d32", **data))
    assert "widths" not in narrow["results"]
    wide = studies.run(_options(tmp_path / "d128", experiment="freezing_nmt", scale="small_d128",
                                width_results=str(tmp_path / "d32"), **data))
    trend = wide["results"]["widths"]
    assert trend["widths"] == [8, 16] and list(trend["settings"]) == ["ffn"]
    # Each width's share as its own report gives it (None where a micro baseline scored no BLEU).
    shares = [row["share_of_baseline_bleu"] for row in (narrow["results"]["rows"][1], wide["results"]["rows"][1])]
    assert [p["mean"] for p in trend["settings"]["ffn"]["points"]] == [
        None if share is None else pytest.approx(share) for share in shares]
    assert [p["hidden_size"] for p in trend["settings"]["ffn"]["points"]] == [8, 16]
    text = open(wide["results_md"]).read()
    assert "## Across widths" in text and "| ffn | " in text and "| frozen | d = 8 | d = 16 |" in text
    with open(tmp_path / "d128" / widths.PLOT_FILE, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_labels_of_close_points_go_to_opposite_sides():
    # ffn at half and a quarter width sit 10 points of share and 0.1 BLEU apart: one label above, one
    # below; a point far from both in BLEU keeps the default (above).
    rows = [dict(name="half", trainable_share=0.775, test_bleu=29.8),
            dict(name="attention", trainable_share=0.846, test_bleu=22.4),
            dict(name="quarter", trainable_share=0.872, test_bleu=29.7),
            dict(name="none", trainable_share=1.0, test_bleu=34.0)]
    sides = {row["name"]: side for row, side in report._label_sides(rows, span=26.0)}
    assert sides == {"half": 1, "attention": 1, "quarter": -1, "none": 1}
