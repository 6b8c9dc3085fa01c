"""The demo's command runner: logs, failures named with their log, side-by-side runs, stage times."""

import json
import sys
import time

import pytest

from demo import commands


def test_run_returns_the_output_and_logs_it(tmp_path, capsys):
    log = tmp_path / "new_dir" / "a.log"  # made if missing
    out = commands.run([sys.executable, "-c", "print('hello')"], str(log))
    assert out == "hello\n" and log.read_text() == "hello\n"
    assert "$ %s \\\n    -c" % sys.executable in capsys.readouterr().out


def test_a_failure_names_the_command_and_its_log(tmp_path, capsys):
    log = tmp_path / "bad.log"
    with pytest.raises(SystemExit, match=r"failed \(exit 3\); its log: .*bad.log"):
        commands.run([sys.executable, "-c", "import sys; print('why'); sys.exit(3)"], str(log))
    assert "why" in capsys.readouterr().out


def _meets(mine, other):
    """A process that marks `mine`, then waits up to 20 s for `other`: it meets it only if both run at once."""
    return [sys.executable, "-c", "import os, time\nopen(%r, 'w').close()\nend = time.time() + 20\n"
            "while not os.path.exists(%r) and time.time() < end: time.sleep(0.05)\n"
            "print('met' if os.path.exists(%r) else 'alone')" % (mine, other, other)]


def test_run_together_runs_side_by_side_and_stops_the_rest_on_a_failure(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    commands.run_together([(_meets(a, b), str(tmp_path / "1.log")), (_meets(b, a), str(tmp_path / "x" / "2.log"))])
    assert (tmp_path / "1.log").read_text() == (tmp_path / "x" / "2.log").read_text() == "met\n"
    fail = [sys.executable, "-c", "import sys; sys.exit(2)"]
    hang = [sys.executable, "-c", "import time; time.sleep(600)"]
    start = time.time()
    with pytest.raises(SystemExit, match=r"failed \(exit 2\); its log: .*fail.log"):
        commands.run_together([(hang, str(tmp_path / "hang.log")), (fail, str(tmp_path / "fail.log"))])
    assert time.time() - start < 300  # the hanging one was stopped, not waited for


def test_stages_are_written_in_order(tmp_path):
    stages = commands.Stages()
    with stages.stage("first"):
        time.sleep(0.05)
    with stages.stage("second"):
        pass
    path = stages.write(str(tmp_path))
    with open(path) as f:
        written = json.load(f)
    assert [s["name"] for s in written["stages"]] == ["first", "second"]
    assert written["stages"][0]["seconds"] >= 0.05 and written["total_seconds"] >= written["stages"][0]["seconds"]


def test_fresh_output_dir_keeps_only_the_names_given(tmp_path):
    for name in ("data", "papers", "mnli"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text("x")
    (tmp_path / "stage_times.json").write_text("{}")
    commands.fresh_output_dir(str(tmp_path), keep=("data", "papers"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "papers"]
    assert (tmp_path / "data" / "file").read_text() == "x"
    commands.fresh_output_dir(str(tmp_path / "missing"), keep=())  # nothing to empty yet
