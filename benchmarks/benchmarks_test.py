"""Smoke test: the benchmark scripts run in-process at tiny sizes.

Checks that the printed figures are positive numbers and that the two
tokenization paths agree. No timing is asserted: the machine is shared.
"""

import re

import pytest
from absl import flags
from absl.testing import flagsaver

from benchmarks import model_benchmark
from benchmarks import pretraining_step_benchmark
from benchmarks import tokenization_benchmark

FLAGS = flags.FLAGS

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


@pytest.fixture(autouse=True)
def _parsed_flags():
    # Under pytest nobody parses argv; use the defaults (overridden below).
    if not FLAGS.is_parsed():
        FLAGS.mark_as_parsed()


def test_tokenization_benchmark_prints_positive_figures_and_parity(capsys):
    with flagsaver.flagsaver(num_lines=300, repeats=1, wordpiece_vocab_size=2000):
        assert tokenization_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "parity: ok" in out, out
    rows = re.findall(
        r"^\s*(pure|fast)\s+300\s+(\d+)\s+%s\s+\d+%%\s+%s\s+%s\s*$"
        % (_NUMBER, _NUMBER, _NUMBER),
        out, re.MULTILINE)
    assert sorted(row[0] for row in rows) == ["fast", "pure"], out
    for _, tokens, seconds, tokens_per_second, megabytes_per_second in rows:
        assert int(tokens) > 300
        assert float(seconds) > 0 and float(tokens_per_second) > 0
        assert float(megabytes_per_second) > 0
    ratio = re.search(r"ratio fast/pure: %sx" % _NUMBER, out)
    assert ratio and float(ratio.group(1)) > 0, out


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


def test_pretraining_step_benchmark_quick_prints_positive_figures(capsys):
    # Runs each contender in a child process of the script, at tiny shapes.
    with flagsaver.flagsaver(quick=True):
        assert pretraining_step_benchmark.main([]) == 0
    out = capsys.readouterr().out
    assert "WARNING" not in out, out
    rows = re.findall(
        r"^\s*(float32|bfloat16)\s+%s\s+\d+%%\s+%s\s+\d+%%\s+%s\s+%s\s+%s\s+%s\s+%s\s*$"
        % ((_NUMBER,) * 7),
        out, re.MULTILINE)
    assert sorted(row[0] for row in rows) == ["bfloat16", "float32"], out
    for row in rows:
        assert all(float(figure) > 0 for figure in row[1:]), row
    assert "not judged with --quick" in out, out
