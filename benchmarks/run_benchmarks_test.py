"""Tests of benchmarks/run_benchmarks.py (the results file, the commands) and of harness.py and child.py."""

import datetime
import sys

import pytest
from absl import flags
from absl.testing import flagsaver

from benchmarks import child, harness, run_benchmarks

NOW = datetime.datetime(2026, 11, 28, 9, 30, 5, tzinfo=datetime.timezone.utc)
CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16

processor\t: 1
model name\t: another
"""


def _script(tmp_path, body):
    path = tmp_path / "fake_benchmark.py"
    path.write_text(body)
    return [sys.executable, str(path)]


def test_results_file_holds_date_machine_command_and_output(tmp_path, capsys):
    command = _script(tmp_path, "print('| what | seq/s |')\nprint('| ours | 55.3 |')\n")
    path, status = run_benchmarks.run_one("model_benchmark", command, str(tmp_path / "results"), now=NOW)
    assert status == 0
    assert path == str(tmp_path / "results" / "model_benchmark" / "2026-11-28T093005Z.md")
    text = open(path).read()
    assert text.startswith("# model_benchmark, 2026-11-28 09:30 UTC\n")
    assert "- date: 2026-11-28 09:30 UTC\n" in text
    assert "- machine: %s\n" % harness.machine() in text
    assert "- command: `python %s`\n" % command[1] in text
    assert "- exit status: 0\n" in text
    assert text.endswith("```\n| what | seq/s |\n| ours | 55.3 |\n```\n")
    assert "| ours | 55.3 |" in capsys.readouterr().out  # Printed live too.


def test_a_failed_benchmark_still_gets_its_file(tmp_path):
    command = _script(tmp_path, "import sys\nprint('half a table')\nsys.exit(3)\n")
    path, status = run_benchmarks.run_one("lm_benchmark", command, str(tmp_path), now=NOW)
    assert status == 3
    text = open(path).read()
    assert "- exit status: 3 (failed: the output below says why)\n" in text and "half a table\n" in text


def test_machine_line(tmp_path):
    (tmp_path / "cpuinfo").write_text(CPUINFO)
    (tmp_path / "meminfo").write_text("MemTotal:       25165824 kB\n")
    line = harness.machine(str(tmp_path / "cpuinfo"), str(tmp_path / "meminfo"))
    assert line.startswith("AMD EPYC 9R14, family 25 model 17, flags avx2,avx512f,avx512_bf16, ")
    assert line.endswith(" usable CPUs, 24 GiB")
    assert harness.machine(str(tmp_path / "missing"), str(tmp_path / "missing")).split(", ")[1:3] == [
        "family ? model ?", "flags -"]


def test_commands():
    assert run_benchmarks.command_of("lm_benchmark", "/t/python", ["--lm_shape=small"])[1:] == [
        "benchmarks/lm_benchmark.py", "--torch_python=/t/python", "--lm_shape=small"]
    assert run_benchmarks.command_of("model_benchmark", "/t/python")[1:] == ["benchmarks/model_benchmark.py"]
    with pytest.raises(flags.IllegalFlagValueError, match="unknown benchmark; expected some of tokenization_benchmark"):
        with flagsaver.flagsaver(benchmarks=["model_benchmark", "modle_benchmark"]):
            pass
    # Every benchmark the runner names exists.
    for name in run_benchmarks.ALL_BENCHMARKS:
        assert (run_benchmarks.os.path.exists(run_benchmarks.os.path.join(run_benchmarks.ROOT, "benchmarks",
                                                                          name + ".py"))), name


FAKE_CHILD = """
import sys
sys.path.insert(0, %r)
from benchmarks import child

contender, dtype, spec = child.request()


def build():
    if contender == "broken":
        raise MemoryError("too   big")
    if contender == "crashing":
        sys.exit(3)
    rounds = []

    def run_round():
        rounds.append(1)
        if contender == "flaky" and len(rounds) == 2:
            raise MemoryError("out of memory in round 2")
        return spec["value"] + len(rounds)
    return run_round, spec["value"] * 100


child.serve(build, classify=lambda error: ("OOM", error) if isinstance(error, MemoryError) else None)
""" % run_benchmarks.ROOT


def test_children_take_turns_and_report_rounds_values_and_memory(tmp_path):
    script = tmp_path / "fake_child.py"
    script.write_text(FAKE_CHILD)
    commands = {name: harness.child_command(str(script), name, "float32", dict(value=value))
                for name, value in (("a", 1), ("b", 5))}
    assert child.request(commands["a"]) == ("a", "float32", dict(value=1))
    for together_first in (False, True):
        results = harness.take_turns(commands, warmup_rounds=1, timed_rounds=3, together_first=together_first)
        for name, value in (("a", 1), ("b", 5)):
            result = results[name]
            assert result["params"] == value * 100 and result["build_seconds"] >= 0 and result["failure"] is None
            assert result["values"] == [value + 2, value + 3, value + 4]  # after the untimed round
            assert len(result["seconds"]) == 3 and all(seconds >= 0 for seconds in result["seconds"])
            assert result["peak_kb"] > 1000


def test_a_failing_child_is_named_or_drops_out(tmp_path):
    script = tmp_path / "fake_child.py"
    script.write_text(FAKE_CHILD)
    commands = {name: harness.child_command(str(script), name, "float32", dict(value=1))
                for name in ("ok", "broken", "flaky", "crashing")}
    results = harness.take_turns(commands, warmup_rounds=0, timed_rounds=3, tolerate=True)
    assert results["ok"]["values"] == [2, 3, 4] and results["ok"]["failure"] is None
    assert results["broken"]["failure"] == ("OOM", "too big") and results["broken"]["peak_kb"] > 0
    assert results["flaky"]["failure"] == ("OOM", "out of memory in round 2") and results["flaky"]["values"] == [2]
    assert results["flaky"]["peak_kb"] > 0  # It still reports the peak it reached.
    assert results["crashing"]["failure"] == ("failed", "the process ended while building (exit code 3)")
    with pytest.raises(RuntimeError, match="The broken child failed while building: OOM too big; its stderr ends"):
        harness.take_turns({name: commands[name] for name in ("ok", "broken")}, 0, 1)
    with pytest.raises(RuntimeError, match="The flaky child failed in round 2: OOM out of memory in round 2"):
        harness.take_turns({name: commands[name] for name in ("flaky", "ok")}, 1, 1)


def test_interleave_runs_each_contender_once_a_round_in_turns():
    calls = []
    contenders = {name: (lambda name=name: calls.append(name) or len(calls)) for name in "abc"}
    seen = []
    seconds, last = harness.interleave(contenders, 2, warmup=1, rotate=True, each=lambda *call: seen.append(call))
    assert "".join(calls) == "abc" + "bca" + "cab"
    assert {name: len(values) for name, values in seconds.items()} == dict(a=2, b=2, c=2)
    assert last == dict(a=8, b=9, c=7)
    assert seen == [(0, "b", 4), (0, "c", 5), (0, "a", 6), (1, "c", 7), (1, "a", 8), (1, "b", 9)]


def test_tables_add_up(capsys):
    assert harness.format_table(["name", "x"], [["a", "1.5"], ["long", "22"]]) == (
        "name    x\n----  ---\n   a  1.5\nlong   22")
    assert harness.median_and_spread([1.0, 2.0, 4.0]) == (2.0, 1.5) and harness.spread([1.0, 2.0, 4.0]) == "150%"
    assert harness.paired_ratio([2.0, 3.0, 8.0], [1.0, 3.0, 2.0]) == 2.0
    results = dict(ours=dict(seconds=[1.0, 2.0, 1.0], peak_kb=2048), peer=dict(seconds=[2.0, 2.0, 3.0], peak_kb=3072))
    harness.throughput_table("dtype", [("float32", results, ["ours", "peer"], 8)], "ours", " (note)")
    out = capsys.readouterr().out
    assert "peak MB = VmHWM (RSS high-water mark) of each contender's own process (note)" in out
    lines = out.splitlines()
    assert lines[-3].split() == ["dtype", "ours", "seq/s", "spread", "peer", "seq/s", "spread", "ours/peer", "ours",
                                 "peak", "MB", "peer", "peak", "MB"]
    # 8 sequences over medians of 1 s and 2 s; peer/ours per round 2, 1, 3; 2048 kB and 3072 kB.
    assert lines[-1].split() == ["float32", "8.00", "100%", "4.00", "50%", "2.000", "2", "3"]
    assert harness.fastest(results, ["ours", "peer"]) == "ours"
