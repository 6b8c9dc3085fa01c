"""Smoke tests of the translation benchmark: its contenders run in child processes at tiny sizes, its table.

No timing is asserted: the machine is shared. The PyTorch peer needs an
interpreter with torch and transformers (--torch_python), which the project's
.venv does not have: here it is left out, and its skip note checked.
"""

import re
import sys

import pytest
from absl.testing import flagsaver

from benchmarks import child, harness
from benchmarks import nmt_benchmark


def _table(out, columns):
    """{(part, dtype): cells} of the table rows, each row split on runs of spaces ("tgt tok/s": one cell)."""
    rows = {}
    for line in out.splitlines():
        cells = line.replace("tgt tok/s", "tgt-tok/s").split()
        if len(cells) == columns and cells[0] in ("train", "decode") and cells[1] in ("float32", "bfloat16"):
            rows[(cells[0], cells[1])] = cells
    return rows


@pytest.mark.long
def test_quick_run_measures_every_contender_in_its_own_process(capsys):
    # Without --torch_python the PyTorch peer is skipped (unless this interpreter has torch: then say "none").
    torch_python = "none" if harness.torch_interpreter(None)[0] else None
    with flagsaver.flagsaver(nmt_quick=True, nmt_shape=["small"], nmt_dtypes=["float32"],
                             nmt_parts=["train", "decode"], torch_python=torch_python):
        assert nmt_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NMT throughput: ") and "\nmachine: " in out, out
    note = "--torch_python=none" if torch_python else "torch and transformers are not installed here"
    assert "pytorch: not measured (%s" % note in out, out
    assert "(--nmt_quick: figures mean nothing)" in out, out

    header = ["part", "dtype", "unit", "ours", "ours-xla", "model-garden", "ours MB", "ours-xla MB",
              "model-garden MB", "ours is", "ours/model-garden", "ours/best peer"]
    assert re.search(r"^\s*" + r"\s+".join(re.escape(cell) for cell in header) + r"\s*$", out, re.MULTILINE), out
    rows = _table(out, 13)  # the last, "1.234 (model-garden)", is two cells
    assert sorted(rows) == [("decode", "float32"), ("train", "float32")], out
    figures = {"train": ("ours", "ours-xla", "model-garden"), "decode": ("ours", "model-garden")}
    for (part, _), cells in rows.items():
        by_name = dict(zip(("ours", "ours-xla", "model-garden"), cells[3:6]))
        peaks = dict(zip(("ours", "ours-xla", "model-garden"), cells[6:9]))
        assert cells[2] == nmt_benchmark.UNITS[part].replace(" ", "-")
        for name in figures[part]:
            assert float(by_name[name]) > 0 and float(peaks[name]) > 0, cells
        if part == "decode":  # ours-xla trains only
            assert by_name["ours-xla"] == peaks["ours-xla"] == "-", cells
        best = cells[9]
        assert best in figures[part] and best != "model-garden", cells
        assert float(by_name[best]) == max(float(by_name[name]) for name in figures[part] if name != "model-garden")
        # One timed round: the paired ratio is the ratio of the two figures.
        ratio = float(cells[10])
        assert ratio == pytest.approx(float(by_name[best]) / float(by_name["model-garden"]), rel=0.01), cells
        assert cells[11:] == [cells[10], "(model-garden)"], cells
    assert re.search(r"^small: the lowest ours/best peer over the rows: \d+\.\d{3} \((train|decode) float32\)$",
                     out, re.MULTILINE), out

    # The same network in every TensorFlow contender: Model Garden has two LayerNorms more (each stack's
    # output), ours the output bias.
    from nmt.parameter_groups import count_parameters  # pylint: disable=import-outside-toplevel

    config = nmt_benchmark.nmt_config("small", quick=True)
    ours = count_parameters(config)["total"]
    garden = ours - config.vocab_size + 2 * 2 * config.hidden_size
    assert "float32 train: " in out and "parameters ours %d, ours-xla %d, model-garden %d;" % (
        ours, ours, garden) in out, out
    assert "parameters ours %d, model-garden %d;" % (ours, garden) in out, out
    length = nmt_benchmark._QUICK["decode_length"]  # pylint: disable=protected-access
    assert "mean decoded length of the timed rounds ours %.3f, model-garden %.3f;" % (length, length) in out, out


def _fake_results(seconds):
    return {name: dict(params=10, build_seconds=1.0, seconds=list(values), values=[1.0] * len(values),
                       peak_kb=2048, failure=None) for name, values in seconds.items()}


def test_table_shows_failures_ratios_and_the_lowest_ratio(capsys, monkeypatch):
    def fake_measure(s, part, dtype, torch_python=None):
        assert torch_python == sys.executable
        if part == "train":  # ours-xla is ours; model-garden 1.5x, pytorch 1.25x its time
            return _fake_results({"ours": [2.0, 2.0, 2.0], "ours-xla": [1.0, 1.0, 1.0],
                                  "model-garden": [1.5, 1.5, 1.5], "pytorch": [1.25, 1.25, 1.25]})
        # Model Garden out of memory; pytorch 1.1x ours' time: the lowest ratio.
        results = _fake_results({"ours": [1.0, 1.0, 1.0], "pytorch": [1.1, 1.1, 1.1]})
        results["model-garden"] = dict(seconds=[], values=[], peak_kb=4096,
                                       failure=("OOM", "OOM when allocating tensor with shape [64,4000]"))
        return results

    monkeypatch.setattr(nmt_benchmark, "measure", fake_measure)
    with flagsaver.flagsaver(nmt_shape=["small"], nmt_dtypes=["float32"], nmt_parts=["train", "decode"],
                             torch_python=sys.executable):
        assert nmt_benchmark.main([]) == 0
    out = capsys.readouterr().out
    s = nmt_benchmark.settings("small")
    batches = child.translation_batches(nmt_benchmark.SEED, 4000, s["batch"], s["source"], s["target"])
    tokens = (batches["target_ids"] != child.PAD_ID).sum() / child.NUM_BATCHES * s["steps_per_round"]
    train = r"^\s*train\s+float32\s+tgt tok/s\s+%.2f\s+%.2f\s+%.2f\s+%.2f\s+2\s+2\s+2\s+2\s+ours-xla" % (
        tokens / 2.0, tokens, tokens / 1.5, tokens / 1.25)
    assert re.search(train + r"\s+1\.500\s+1\.250\s+1\.250 \(pytorch\)\s*$", out, re.MULTILINE), out
    decode = r"^\s*decode\s+float32\s+sent/s\s+64\.00\s+-\s+OOM\s+%.2f\s+2\s+-\s+4\s+2\s+ours\s+-\s+1\.100\s+" \
             r"1\.100 \(pytorch\)\s*$" % (64 / 1.1)
    assert re.search(decode, out, re.MULTILINE), out
    assert "decode float32, model-garden OOM: OOM when allocating tensor with shape [64,4000]" in out, out
    assert "small: the lowest ours/best peer over the rows: 1.100 (decode float32)" in out, out


def test_flags_refuse_values_out_of_range_naming_the_flag():
    from absl import flags  # pylint: disable=import-outside-toplevel

    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="--nmt_parts must be among train, decode"):
            flags.FLAGS.nmt_parts = ["train", "score"]
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="--nmt_shape must be among small, base"):
            flags.FLAGS.nmt_shape = ["big"]
    with flagsaver.flagsaver():
        with pytest.raises(flags.IllegalFlagValueError, match="nmt_warmup_rounds"):
            flags.FLAGS.nmt_warmup_rounds = 0
