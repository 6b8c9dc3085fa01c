"""Tests of benchmarks/pretraining_step_benchmark.py: its shapes, ratios, and a --quick run.

The --quick runs start real child processes (one per contender) at a tiny shape; no timing is
asserted: the machine is shared. The PyTorch peer (Hugging Face BertForPreTraining) runs only where
the TORCH_PYTHON environment variable names an interpreter with torch and transformers.
"""

import json
import os
import re

import pytest
from absl.testing import flagsaver

from benchmarks import child
from benchmarks import pretraining_step_benchmark

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_TORCH_PYTHON = os.environ.get("TORCH_PYTHON")
_SHAPE_KEYS = ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size", "seq_length",
               "max_predictions_per_seq", "train_batch_size", "steps_per_round")


def _shape(settings):
    return tuple(settings[key] for key in _SHAPE_KEYS)


def test_default_shape_is_unchanged():
    with flagsaver.flagsaver(quick=False, shape="default"):
        settings = pretraining_step_benchmark._settings()
    assert _shape(settings) == (4, 512, 8, 2048, 30522, 128, 20, 32, 2)


def test_table2b_small_shape_is_the_standard_head_size_row_at_small_scale():
    with flagsaver.flagsaver(quick=False, shape="table2b_small"):
        settings = pretraining_step_benchmark._settings()
    # 2 layers, hidden 128, 8 heads of the standard d/h = 16, intermediate 1024, sequence 32, 5 predictions, batch 64.
    assert _shape(settings) == (2, 128, 8, 1024, 30522, 32, 5, 64, 10)
    with flagsaver.flagsaver(quick=True, shape="table2b_small"):
        quick = pretraining_step_benchmark._settings()
    assert quick["hidden_size"] == 64 and quick["timed_rounds"] == 1


def test_children_get_the_shape_and_the_contender():
    with flagsaver.flagsaver(quick=False, shape="table2b_small"):
        settings = pretraining_step_benchmark._settings()
    command = pretraining_step_benchmark.commands(settings, "bfloat16")["ours-xla"]
    assert command[1].endswith("pretraining_step_benchmark.py") and command[2].startswith(child.FLAG)
    assert child.request(command) == ("ours-xla", "bfloat16", settings)
    torch_command = pretraining_step_benchmark.commands(settings, "float32", "/fake/python")["pytorch"]
    assert torch_command[0] == "/fake/python" and torch_command[1].endswith("torch_peers.py")
    assert json.loads(torch_command[2][len(child.FLAG):])["contender"] == "pretraining_step"
    assert pretraining_step_benchmark.contenders(None) == ("ours", "ours-xla", "baseline")
    assert pretraining_step_benchmark.contenders("/fake/python")[-1] == "pytorch"


def test_ratio_takes_the_better_ours_against_the_best_peer(capsys, monkeypatch):
    seconds = {
        # float32: ours-xla is the faster ours; the baseline 1.2x, pytorch 1.05x slower: pytorch the best peer.
        "float32": dict(ours=[2.0] * 3, **{"ours-xla": [1.0] * 3}, baseline=[1.2] * 3, pytorch=[1.05] * 3),
        # bfloat16: ours is the faster ours, and pytorch is faster than it.
        "bfloat16": dict(ours=[1.0] * 3, **{"ours-xla": [1.5] * 3}, baseline=[1.25] * 3, pytorch=[0.8] * 3),
    }

    def fake_measure(s, dtype, torch_python=None):
        return {name: dict(params=10, build_seconds=1.0, seconds=seconds[dtype][name], values=[7.0] * 3,
                           peak_kb=2048, failure=None)
                for name in pretraining_step_benchmark.contenders(torch_python)}

    monkeypatch.setattr(pretraining_step_benchmark, "measure", fake_measure)
    with flagsaver.flagsaver(quick=False, shape="table2b_small", torch_python="/fake/python",
                             train_dtypes=["float32", "bfloat16"]):
        assert pretraining_step_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "shape table2b_small: layers=2 hidden=128 heads=8 intermediate=1024" in out, out
    # 64 sequences x 10 steps per round: 320, 640, 533.33, 609.52 seq/s; ours/X 0.5, 0.6, 0.525.
    assert re.search(r"^\s*float32\s+320\.00\s+0%\s+640\.00\s+0%\s+533\.33\s+0%\s+609\.52\s+0%"
                     r"\s+0\.500\s+0\.600\s+0\.525\s+2\s+2\s+2\s+2$", out, re.MULTILINE), out
    assert ("the better of ours and ours-xla against the best peer measured (baseline, pytorch): "
            "float32: ours-xla/pytorch 1.050; bfloat16: ours/pytorch 0.800") in out, out

    seconds["bfloat16"]["pytorch"] = [1.2] * 3
    seconds["float32"]["pytorch"] = [1.25] * 3
    with flagsaver.flagsaver(quick=False, shape="table2b_small", torch_python="/fake/python",
                             train_dtypes=["float32", "bfloat16"]):
        pretraining_step_benchmark.main([])
    assert "(baseline, pytorch): float32: ours-xla/baseline 1.200; bfloat16: ours/pytorch 1.200" in \
        capsys.readouterr().out


def _run_quick(capsys, torch_python):
    with flagsaver.flagsaver(quick=True, torch_python=torch_python, train_dtypes=["float32"]):
        assert pretraining_step_benchmark.main([]) == 0
    return capsys.readouterr().out


def _check_quick_run(out, names):
    assert "WARNING" not in out, out
    assert out.index("machine: ") < out.index("shape default [--quick: tiny]:"), out
    assert re.search(r"^  float32: timed in \d+ s; parameters %s;" % ", ".join(
        r"%s (\d+)" % name for name in names), out, re.MULTILINE), out
    parameters = re.search(r"parameters ([^;]*);", out).group(1)
    assert len({count.split()[1] for count in parameters.split(", ")}) == 1, parameters  # The same model.
    row = re.search(r"^\s*float32\s+(.*)$", out, re.MULTILINE).group(1).split()
    # seq/s and spread per contender, ours/X per other contender, peak MB per contender.
    assert len(row) == 2 * len(names) + (len(names) - 1) + len(names), row
    figures = [float(cell) for cell in row[0:2 * len(names):2] + row[2 * len(names):]]
    assert all(figure > 0 for figure in figures), row
    assert re.search(r"^ours/X = median over rounds", out, re.MULTILINE), out
    assert re.search(r"^the better of ours and ours-xla against the best peer measured \(%s\): "
                     r"float32: (ours|ours-xla)/(%s) %s$" % (", ".join(names[2:]), "|".join(names[2:]), _NUMBER),
                     out, re.MULTILINE), out


@pytest.mark.long
def test_quick_runs_ours_ours_xla_and_the_baseline_and_notes_the_missing_peer(capsys):
    out = _run_quick(capsys, "none")
    assert "pytorch: not measured (--torch_python=none)" in out, out
    _check_quick_run(out, ["ours", "ours-xla", "baseline"])


@pytest.mark.skipif(not _TORCH_PYTHON, reason="set TORCH_PYTHON to an interpreter with torch and transformers")
def test_quick_runs_the_pytorch_peer_given_its_interpreter(capsys):
    out = _run_quick(capsys, _TORCH_PYTHON)
    assert "pytorch: Hugging Face BertForPreTraining + torch.compile" in out, out
    _check_quick_run(out, ["ours", "ours-xla", "baseline", "pytorch"])


def test_flags_refuse_values_out_of_range_naming_the_flag():
    from absl import flags  # pylint: disable=import-outside-toplevel

    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="--train_dtypes must be among float32, bfloat16"):
            flags.FLAGS.train_dtypes = ["float16"]
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="steps_per_round"):
            flags.FLAGS.steps_per_round = 0
