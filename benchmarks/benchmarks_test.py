"""Smoke test: the benchmark scripts run in-process at tiny sizes.

Checks that the printed figures are positive numbers and that the two
tokenization paths agree. No timing is asserted: the machine is shared.
"""

import json
import re
import sys

import numpy as np
import pytest
from absl import logging
from absl.testing import flagsaver

from benchmarks import child
from benchmarks import create_pretraining_data_benchmark
from benchmarks import demo_benchmark
from benchmarks import dense_gradient_benchmark
from benchmarks import feature_conversion_benchmark
from benchmarks import inference_benchmark
from benchmarks import lm_benchmark
from benchmarks import model_benchmark
from benchmarks import nmt_benchmark
from benchmarks import pretraining_step_benchmark
from benchmarks import saved_model_load_benchmark
from benchmarks import tokenization_benchmark

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def test_tokenization_benchmark_prints_positive_figures_and_parity(capsys):
    with flagsaver.flagsaver(num_lines=300, repeats=1, wordpiece_vocab_size=2000, vocab_builder="frequency"):
        assert tokenization_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "parity: ok" in out, out
    rows = re.findall(
        r"^\s*(pure|original|fast|fast-1-part|cached-cold|cached-warm|tf-text-op)\s+300\s+(\d+)\s+%s\s+\d+%%"
        r"\s+%s\s+%s\s*$" % (_NUMBER, _NUMBER, _NUMBER),
        out, re.MULTILINE)
    expected = ["pure", "fast", "fast-1-part", "cached-cold", "cached-warm", "tf-text-op"]
    if "original: bert-tensorflow is not installed" not in out:
        expected.insert(1, "original")
    assert [row[0] for row in rows] == expected, out
    for _, tokens, seconds, tokens_per_second, megabytes_per_second in rows:
        assert int(tokens) > 300
        assert float(seconds) > 0 and float(tokens_per_second) > 0
        assert float(megabytes_per_second) > 0
    for name in ("fast", "fast-1-part", "cached-cold", "cached-warm"):
        ratio = re.search(r"ratio %s/pure: %sx" % (name, _NUMBER), out)
        assert ratio and float(ratio.group(1)) > 0, out
    assert re.search(r"^FastFullTokenizer with its defaults: %sM tokens/s; CachedFullTokenizer on a first pass: %sM$"
                     % (_NUMBER, _NUMBER), out, re.MULTILINE), out


def test_feature_conversion_benchmark_quick_checks_features_and_prints_each_tokenizer(capsys):
    level = logging.get_absl_logger().level
    with flagsaver.flagsaver(conversion_quick=True):
        assert feature_conversion_benchmark.main([]) == 0
    assert logging.get_absl_logger().level == level  # Quiet conversions, but not for later tests.
    out = capsys.readouterr().out
    names = ["pure", "cached"]
    if "original: bert-tensorflow is not installed" not in out:
        names.insert(0, "original")
    assert "features: identical across %s on every round" % ", ".join(names) in out, out
    rows = re.findall(r"^\s*(MNLI \(run_classifier\)|SQuAD 2\.0 \(run_squad\))\s+(\w+)\s+%s\s+\d+%%"
                      r"\s+(\d+)\s+%sx\s*$" % (_NUMBER, _NUMBER), out, re.MULTILINE)
    assert [(task, name) for task, name, *_ in rows] == [
        (task, name) for task in ("MNLI (run_classifier)", "SQuAD 2.0 (run_squad)") for name in names], out
    assert all(float(seconds) > 0 and int(per_second) > 0 for _, _, seconds, per_second, _ in rows)
    # The first tokenizer is the baseline of the speed-up column.
    assert [float(row[4]) for row in rows if row[1] == names[0]] == [1.0, 1.0], out


def test_create_pretraining_data_benchmark_quick_runs_whole_processes(capsys):
    # Our two contenders always; the original only where bert-tensorflow is installed.
    with flagsaver.flagsaver(cpd_quick=True):
        assert create_pretraining_data_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "same bytes from ours with 1 and 2 workers: yes" in out, out
    rows = re.findall(r"^\s*12\s+0\.0\s+(original|ours|ours -w2)\s+%s\s+\S+\s+%s\s+(\d+)\s*$"
                      % (_NUMBER, _NUMBER), out, re.MULTILINE)
    names = [row[0] for row in rows]
    assert names[-2:] == ["ours", "ours -w2"], out
    assert names[:-2] == (["original"] if create_pretraining_data_benchmark.original_installed()
                          else []), out
    for _, wall, _, peak in rows:
        assert float(wall) > 0 and int(peak) > 0


def test_model_benchmark_quick_prints_positive_figures(capsys):
    with flagsaver.flagsaver(quick=True):
        assert model_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "WARNING" not in out, out
    assert "architecture check: ours and BertEncoderV2" in out, out
    rows = re.findall(
        r"^\s*(float32|mixed_bfloat16)\s+(forward|train)\s+%s\s+\d+%%\s+%s\s+\d+%%"
        r"\s+%s\s+%s\s*$" % (_NUMBER, _NUMBER, _NUMBER, _NUMBER),
        out, re.MULTILINE)
    assert sorted(row[:2] for row in rows) == [
        ("float32", "forward"), ("float32", "train"),
        ("mixed_bfloat16", "forward"), ("mixed_bfloat16", "train")], out
    for row in rows:
        assert all(float(figure) > 0 for figure in row[2:]), row


def test_inference_benchmark_contenders_compute_the_same_encoder():
    # In process, at the --quick shapes: ours (XLA or not), the exported SavedModel and Model
    # Garden's encoder with the same seed give the same last layer, so the benchmark times like for like.
    with flagsaver.flagsaver(quick=True):
        s = inference_benchmark._settings()
    ours, params = inference_benchmark._build_ours(s, "float32", jit_compile=False)
    xla, _ = inference_benchmark._build_ours(s, "float32", jit_compile=True)
    savedmodel, savedmodel_params = inference_benchmark._build_savedmodel(s, "float32")
    baseline, baseline_params = inference_benchmark._build_baseline(s, "float32")
    last_layer = ours()[:, 0]
    assert last_layer.shape == (s["batch_size"], s["seq_length"], s["hidden_size"])
    assert params == savedmodel_params == baseline_params
    np.testing.assert_allclose(xla()[:, 0], last_layer, atol=1e-5)
    np.testing.assert_allclose(savedmodel()[0], last_layer, atol=1e-5)
    # Same architecture and seed, but Model Garden draws its weights in another order.
    assert baseline()[0].shape == last_layer.shape


def test_inference_benchmark_reports_the_table_and_the_ratios(capsys, monkeypatch):
    def fake_measure(s, dtype, torch_python=None):
        seconds = dict(ours=1.0, ours_tuned=2.0, savedmodel=1.5, baseline=1.25, pytorch=0.8)
        return {name: dict(params=10, build_seconds=1.0, seconds=[seconds[name]] * 3, values=[0.0] * 3,
                           peak_kb=2048, rss_kb=1024)
                for name in inference_benchmark.contenders(torch_python)}

    monkeypatch.setattr(inference_benchmark, "measure", fake_measure)
    with flagsaver.flagsaver(torch_python=sys.executable, inference_dtypes=["float32"]):
        assert inference_benchmark.main([]) == 0
    out = capsys.readouterr().out
    # 32 sequences per call: 32, 16, 21.33, 25.6, 40 seq/s; ratios 2, 1.5, 1.25, 0.8.
    assert re.search(r"float32\s+32\.00\s+0%\s+16\.00\s+0%\s+21\.33\s+0%\s+25\.60\s+0%\s+40\.00\s+0%"
                     r"\s+2\.000\s+1\.500\s+1\.250\s+0\.800\s+2\s+2\s+2\s+2\s+2", out), out
    assert ("float32: ours/peer, the lowest over the peers (baseline, pytorch): 0.800; "
            "default vs the other --inference_xla: 2.000") in out, out


def test_dense_gradient_benchmark_prints_each_way_per_shape(capsys):
    with flagsaver.flagsaver(dense_shapes=["512x64x256", "512x256x64"], dense_rounds=1):
        assert dense_gradient_benchmark.main([]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s*512 x (64|256) -> (256|64)\s+%s\s+%s\s+%s\s+%s\s*$" % ((_NUMBER,) * 4), out,
                      re.MULTILINE)
    assert [row[:2] for row in rows] == [("64", "256"), ("256", "64")], out
    for row in rows:
        assert all(float(value) > 0 for value in row[2:]), out


def test_translation_batches_follow_the_translation_schema():
    # What nmt_benchmark's contenders and its PyTorch peer read.
    batches = child.translation_batches(seed=1, vocab_size=50, batch_size=3, source_length=8, target_length=6)
    targets, inputs = batches["target_ids"], batches["target_input_ids"]
    assert batches["source_ids"].shape == (child.NUM_BATCHES, 3, 8) and targets.shape == (child.NUM_BATCHES, 3, 6)
    assert (inputs[..., 0] == child.BOS_ID).all()
    mask = targets != child.PAD_ID
    assert ((inputs != 0) == mask).all()
    assert (inputs[..., 1:] == targets[..., :-1] * mask[..., 1:]).all()
    for ids, length in ((batches["source_ids"], 8), (targets, 6)):
        lengths = (ids != 0).sum(-1)
        assert lengths.min() >= length // 2 and lengths.max() <= length
        last = np.take_along_axis(ids, lengths[..., None] - 1, axis=-1)[..., 0]
        assert (last == child.EOS_ID).all()
        assert (ids[ids != 0] >= child.FIRST_PIECE).sum() == (ids != 0).sum() - (ids == child.EOS_ID).sum()
    np.testing.assert_array_equal(child.decode_sources(1, 50, 3, 8), batches["source_ids"][0])  # the same sources
    np.testing.assert_array_equal(child.translation_batches(1, 50, 3, 8, 6)["target_ids"], targets)  # seeded


def test_demo_benchmark_reports_a_finished_demo(tmp_path, capsys):
    times = tmp_path / "stage_times.json"
    times.write_text(json.dumps({"stages": [{"name": "sample data", "seconds": 10.0},
                                            {"name": "run_squad.py", "seconds": 200.0}], "total_seconds": 230.0}))
    with flagsaver.flagsaver(demo_stage_times=str(times), demo_setup_seconds=90.0):
        assert demo_benchmark.main([]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s*(set-up \(.venv and packages\)|sample data|run_squad.py|start-up, imports and the rest|"
                      r"total, set-up included)\s+%s\s+(\d+)%%$" % _NUMBER, out, re.MULTILINE)
    assert rows == [("set-up (.venv and packages)", "90.0", "28"), ("sample data", "10.0", "3"),
                    ("run_squad.py", "200.0", "62"), ("start-up, imports and the rest", "20.0", "6"),
                    ("total, set-up included", "320.0", "100")], out
    assert "the demo on a fresh clone, set-up included: 5.3 min" in out
    with flagsaver.flagsaver(demo_stage_times=str(times), demo_setup_seconds=None):
        demo_benchmark.main([])
    out = capsys.readouterr().out
    assert "total, set-up NOT included" in out
    assert "the demo on a fresh clone, set-up included: 3.8 min (set-up unknown, not counted)" in out


def test_saved_model_load_benchmark_prints_sizes_loads_and_bitwise_outputs(capsys, tmp_path):
    with flagsaver.flagsaver(load_sizes=["tiny"], load_rounds=1, load_work_dir=str(tmp_path)):
        assert saved_model_load_benchmark.main([]) == 0
    out = capsys.readouterr().out
    row = re.search(r"^\s*tiny\s+([0-9,]+)\s+([0-9,]+)\s+%s\s+%s\s+0%%\s+%s\s+%s\s+0%%\s+%s\s+bitwise\s*$"
                    % ((_NUMBER,) * 5), out, re.MULTILINE)
    assert row, out
    parameters, drawn, values_mb, values_s, seed_mb, seed_s, ratio = (float(x.replace(",", "")) for x in row.groups())
    assert 0 < drawn < parameters and values_s > 0 and seed_s > 0
    assert ratio == pytest.approx(seed_s / values_s, rel=0.05, abs=0.01)
