"""Tests of benchmarks/run_benchmarks.py: the results file, the machine line, the commands."""

import datetime
import sys

import pytest

from benchmarks import harness, run_benchmarks

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
    with pytest.raises(ValueError, match="--benchmarks: unknown benchmark 'modle_benchmark'"):
        run_benchmarks.command_of("modle_benchmark")
    # Every benchmark the runner names exists.
    for name in run_benchmarks.ALL_BENCHMARKS:
        assert (run_benchmarks.os.path.exists(run_benchmarks.os.path.join(run_benchmarks.ROOT, "benchmarks",
                                                                          name + ".py"))), name
