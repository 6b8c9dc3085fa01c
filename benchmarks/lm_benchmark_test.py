"""Tests of benchmarks/lm_benchmark.py: its shapes, batches, table and ratios, and a --quick run.

The --quick runs start real child processes (one per contender) at a tiny
shape; no timing is asserted: the machine is shared. The PyTorch peer runs
only where the TORCH_PYTHON environment variable names an interpreter with
torch (e.g. `TORCH_PYTHON=/tmp/torch/bin/python`).
"""

import os
import re

import numpy as np
import pytest
from absl import flags
from absl.testing import flagsaver

from benchmarks import child
from benchmarks import lm_benchmark

FLAGS = flags.FLAGS

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_TORCH_PYTHON = os.environ.get("TORCH_PYTHON")


def _table_rows(out, names):
    """{(dtype, h): {column: text}} of the printed table's rows."""
    header = ["dtype", "h", "GFLOP/step"]
    for name in names:
        header += ["%s tok/s" % name, "%s MB" % name]
    header += ["spread", "best ours", "best peer", "ours/peer"]
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() and line.split()[:3] == header[:3])
    assert lines[start].split() == " ".join(header).split(), lines[start]
    rows = {}
    for line in lines[start + 2:]:
        cells = line.split()
        if len(cells) != len(header):
            break
        rows[cells[0], int(cells[1])] = dict(zip(header, cells))
    return rows


def test_small_shape_is_lm_figure1_fixed_family_at_small_scale():
    with flagsaver.flagsaver(quick=False, lm_heads=None, lm_steps_per_round=None):
        specs, rounds = lm_benchmark.settings("small")
    assert sorted(specs) == [4, 16, 32]
    for h, spec in specs.items():
        config = spec["config"]
        assert (config["num_hidden_layers"], config["hidden_size"], config["head_size"],
                config["num_attention_heads"]) == (3, 128, 16, h)
        assert (config["intermediate_size"], config["vocab_size"], spec["batch_size"], spec["seq_length"]) == (
            512, 4000, 64, 32)
        assert config["hidden_act"] == "relu" and config["hidden_dropout_prob"] == 0.1
        assert lm_benchmark.lm_config(spec).attention_head_size == 16
    assert rounds == dict(warmup=FLAGS.lm_warmup_rounds, timed=FLAGS.lm_timed_rounds)


def test_paper_shape_is_the_lm1b_paper_model_at_8_and_64_heads():
    with flagsaver.flagsaver(quick=False, lm_heads=None, lm_steps_per_round=None):
        specs, _ = lm_benchmark.settings("paper")
    assert sorted(specs) == [8, 64]
    for spec in specs.values():
        config = spec["config"]
        assert (config["num_hidden_layers"], config["hidden_size"], config["head_size"],
                config["intermediate_size"]) == (6, 256, 32, 1024)
        assert (config["vocab_size"], spec["batch_size"], spec["seq_length"]) == (32000, 8, 256)


def test_quick_shrinks_the_model_and_keeps_the_first_and_last_head_counts():
    with flagsaver.flagsaver(quick=True, lm_heads=None):
        specs, rounds = lm_benchmark.settings("small")
    assert sorted(specs) == [4, 32]
    assert rounds == dict(warmup=1, timed=1)
    assert all(spec["config"]["hidden_size"] == 32 and spec["config"]["num_hidden_layers"] == 1
               for spec in specs.values())


def test_training_flops_follow_the_closed_form():
    from lm.config import LmConfig  # pylint: disable=import-outside-toplevel

    low, high = (LmConfig(vocab_size=32000, num_attention_heads=h) for h in (8, 64))
    # d=256, d_p=32, FFN 1024, 6 layers, n=256: per token 6*(8*256*h*32 + 4*256*1024 + 4*h*256*32) + 2*256*32000.
    per_token = lambda h: 6 * (65536 * h + 1048576 + 32768 * h) + 16384000
    assert lm_benchmark.training_flops(low, 8, 256) == 3 * 8 * 256 * per_token(8)
    assert lm_benchmark.training_flops(high, 8, 256) / lm_benchmark.training_flops(low, 8, 256) == \
        pytest.approx(per_token(64) / per_token(8))


def test_batches_follow_run_lm_schema_and_the_dataset_starts_at_the_first():
    batches = child.lm_batches(seed=3, batch_size=5, seq_length=12, vocab_size=50)
    ids, targets, mask = batches["input_ids"], batches["target_ids"], batches["input_mask"]
    assert ids.shape == (child.NUM_BATCHES, 5, 12)
    lengths = mask.sum(-1)
    assert lengths.min() >= 6 and lengths.max() <= 12
    assert ((ids != 0) == (mask == 1)).all() and (ids[mask == 1] >= child.FIRST_PIECE).all()
    shifted = ids[..., 1:] * mask[..., :-1]
    assert (targets[..., :-1] == shifted).all()  # target t is token t+1
    np.testing.assert_array_equal(child.lm_batches(3, 5, 12, 50)["input_ids"], ids)  # seeded

    spec = dict(seed=3, batch_size=5, seq_length=12, config=dict(vocab_size=50), steps_per_round=3)
    first = next(iter(lm_benchmark.make_dataset(spec)))
    np.testing.assert_array_equal(first["input_ids"].numpy(), ids[0])
    # Round 1 holds steps 3, 4, 5: batches 3, 0, 1.
    assert lm_benchmark.round_tokens(spec, 1) == mask[3].sum() + mask[0].sum() + mask[1].sum()


def _fake_results(seconds, names):
    return {name: dict(params=10, build_seconds=1.0, seconds=list(seconds[name]), values=[4.5] * 3,
                       peak_kb=2048, failure=None) for name in names}


def test_table_names_the_better_ours_and_the_lowest_ratio(capsys, monkeypatch):
    seconds = {
        # h = 4: ours-xla is the better ours; pytorch the best peer, 1.5x slower per round.
        (4, "ours"): [2.0, 2.0, 2.0], (4, "ours-xla"): [1.0, 1.0, 1.0],
        (4, "model-garden"): [3.0, 3.0, 3.0], (4, "pytorch"): [1.5, 1.5, 1.5],
        # h = 16: ours is the better ours, 1.1x the best peer (model-garden): the lowest ratio.
        (16, "ours"): [1.0, 1.0, 1.0], (16, "ours-xla"): [1.2, 1.2, 1.2],
        (16, "model-garden"): [1.1, 1.1, 1.1], (16, "pytorch"): [4.0, 4.0, 4.0],
    }

    def fake_measure(spec, dtype, rounds, torch_python=None):
        assert torch_python == "/fake/python"
        names = ["ours", "ours-xla", "model-garden", "pytorch"]
        return _fake_results({name: seconds[spec["config"]["num_attention_heads"], name] for name in names}, names)

    monkeypatch.setattr(lm_benchmark, "measure", fake_measure)
    with flagsaver.flagsaver(quick=False, torch_python="/fake/python", lm_shape=["small"], lm_heads=["4", "16"],
                             lm_dtypes=["float32"], lm_steps_per_round=2, lm_warmup_rounds=1, lm_timed_rounds=3):
        assert lm_benchmark.main([]) == 0
        specs, rounds = lm_benchmark.settings("small")
    out = capsys.readouterr().out
    names = ["ours", "ours-xla", "model-garden", "pytorch"]
    rows = _table_rows(out, names)
    assert sorted(rows) == [("float32", 4), ("float32", 16)], out
    row = rows["float32", 4]
    assert (row["best ours"], row["best peer"], row["ours/peer"]) == ("ours-xla", "pytorch", "1.500"), row
    tokens = [lm_benchmark.round_tokens(specs[4], rounds["warmup"] + i) for i in range(3)]
    assert float(row["ours-xla tok/s"]) == pytest.approx(sorted(tokens)[1], abs=0.5)  # 1 s rounds
    assert float(row["ours tok/s"]) == pytest.approx(sorted(tokens)[1] / 2, abs=0.5)
    assert row["pytorch MB"] == "2" and float(row["GFLOP/step"]) > 0
    row = rows["float32", 16]
    assert (row["best ours"], row["best peer"], row["ours/peer"]) == ("ours", "model-garden", "1.100"), row
    assert ("small: ours against the best peer (model-garden, pytorch), the lowest ours/peer of each dtype: "
            "float32 1.100 (h=16)") in out, out
    assert re.search(r"^float32: ours' time per real token h=16 / h=4 = %s \(medians of separate runs\); "
                     r"FLOP ratio %s$" % (_NUMBER, _NUMBER), out, re.MULTILINE), out

    seconds[16, "model-garden"] = [1.3] * 3
    with flagsaver.flagsaver(quick=False, torch_python="/fake/python", lm_shape=["small"], lm_heads=["4", "16"],
                             lm_dtypes=["float32"], lm_steps_per_round=2, lm_warmup_rounds=1, lm_timed_rounds=3):
        lm_benchmark.main([])
    assert "the lowest ours/peer of each dtype: float32 1.300 (h=16)" in capsys.readouterr().out


def _run_quick(capsys, torch_python):
    with flagsaver.flagsaver(quick=True, torch_python=torch_python, lm_shape=["small"], lm_heads=["4"],
                             lm_dtypes=["float32"]):
        assert lm_benchmark.main([]) == 0
    return capsys.readouterr().out


def _check_quick_run(out, names):
    assert "WARNING" not in out, out
    assert out.index("machine: ") < out.index("shape small:"), out
    assert "[--quick: a tiny model, figures are meaningless]" in out, out
    assert re.search(r"^  float32 h=4: timed in \d+ s; parameters %s;" % ", ".join(
        r"%s (\d+)" % name for name in names), out, re.MULTILINE), out
    rows = _table_rows(out, names)
    assert list(rows) == [("float32", 4)], out
    row = rows["float32", 4]
    for name in names:
        assert float(row["%s tok/s" % name]) > 0 and float(row["%s MB" % name]) > 0, row
    assert row["best ours"] in ("ours", "ours-xla"), row
    assert row["best peer"] in names[2:], row
    assert float(row["ours/peer"]) > 0, row
    assert re.search(r"^small: ours against the best peer \(%s\), the lowest ours/peer of each dtype: "
                     r"float32 %s \(h=4\)$" % (", ".join(names[2:]), _NUMBER), out, re.MULTILINE), out


@pytest.mark.long
def test_quick_runs_each_contender_in_its_own_process_and_notes_the_missing_peer(capsys):
    out = _run_quick(capsys, "none")
    assert "pytorch: not measured (--torch_python=none)" in out, out
    _check_quick_run(out, ["ours", "ours-xla", "model-garden"])


@pytest.mark.skipif(not _TORCH_PYTHON, reason="set TORCH_PYTHON to an interpreter with torch")
def test_quick_runs_the_pytorch_peer_given_its_interpreter(capsys):
    out = _run_quick(capsys, _TORCH_PYTHON)
    assert "pytorch: torch.nn causal Transformer LM + torch.compile" in out, out
    _check_quick_run(out, ["ours", "ours-xla", "model-garden", "pytorch"])


def test_flags_refuse_values_out_of_range_naming_the_flag():
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="--lm_dtypes must be among float32, bfloat16"):
            FLAGS.lm_dtypes = ["float16"]
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="--lm_shape must be among small, paper"):
            FLAGS.lm_shape = ["large"]
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="lm_timed_rounds"):
            FLAGS.lm_timed_rounds = 0
