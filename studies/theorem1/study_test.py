"""theorem1 through reproduce_paper_tables: plan, the fit, the knee in results.md, the plot, a re-run."""

import dataclasses
import json

import pytest

from analysis import testing
from studies.freezing_nmt import experiments as nmt_experiments
from studies.theorem1 import report, study as theorem1_study
import studies

MICRO = dataclasses.replace(theorem1_study.TINY, lengths=(4,), fit_steps=600, theorem2_length=4,
                            theorem2_hidden_size=8, theorem2_num_heads=(1, 4))


def _options(output_dir, **values):
    return studies.ReproduceOptions(experiment="theorem1", output_dir=str(output_dir), **values)


def test_theorem1_runs_reports_the_knee_and_resumes(monkeypatch, tmp_path, caplog):
    monkeypatch.setitem(theorem1_study.SCALES, "tiny", MICRO)
    written = studies.run(_options(tmp_path / "out", scale="tiny"))
    results = written["results"]
    knees = {k["target"]: k for k in results["knees"]}
    # Softmax ignores row shifts: n - 1 = 3 is where every fit reaches the tolerance.
    assert knees["near_permutation"]["knee"] == 3 and knees["dirichlet"]["knee"] == 3
    for knee in knees.values():
        assert knee["smallest_kl_below_n_minus_1"] > 100 * knee["largest_kl_from_n_minus_1"]
    two_heads = {r["family"]: r for r in results["theorem2"] if r["num_heads"] == 4}
    assert two_heads["standard"]["head_size"] == 2 and two_heads["fixed"]["head_size"] == 4
    assert two_heads["standard"]["kl"] > report.TOLERANCE > two_heads["fixed"]["kl_max"]
    table = open(written["results_md"]).read()
    assert "| 4 | near_permutation | 1: " in table and "| 3 (= n-1) |" in table
    assert "What the paper states" in table and "| 4 | 2 | " in table
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert json.loads(open(written["results_json"]).read()) == written["results"]
    caplog.clear()
    with caplog.at_level("INFO"):
        again = studies.run(_options(tmp_path / "out", scale="tiny"))
    assert "Ran 0 steps, skipped 1 finished ones." in caplog.messages
    assert again["results"] == results


def test_real_inputs_reach_the_entry_point_and_scales_are_named(tmp_path, monkeypatch):
    model = testing.write_random_model(str(tmp_path), head_size=4)
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("the big red dog ran under a mat and sat .\n")
    written = studies.run(_options(tmp_path / "plan", scale="small", dry_run=True,
                                   bert_config_file=model["bert_config_file"], init_checkpoint=model["init_checkpoint"],
                                   vocab_file=model["vocab_file"], input_file=str(sentences)))
    plan_text = open(written["plan_sh"]).read()
    assert "measure_head_capacity.py" in plan_text and "--lengths=8,16,32" in plan_text
    assert "--init_checkpoint=%s" % model["init_checkpoint"] in plan_text and "--do_lower_case=true" in plan_text
    # An experiment without the scale asked for names those it has.
    monkeypatch.delitem(nmt_experiments.SCALES, "small")
    with pytest.raises(ValueError, match=r"^--scale=small: --experiment=freezing_nmt runs at paper or small_d128 or small_d32 or tiny "
                                         r"scale\.$"):
        studies.run(studies.ReproduceOptions(experiment="freezing_nmt", scale="small", output_dir=str(tmp_path / "n")))
