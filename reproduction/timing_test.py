"""A step's wall time over its attempts (a kill loses at most one update), and the times the steps left need."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from reproduction import timing
from reproduction.plan import Step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _step(tmp_path, name, row="", stage="train"):
    return Step(name, row, stage, "fake.py", {}, (str(tmp_path / name / "result.txt"),))


def test_a_clock_counts_on_after_its_process_is_killed(tmp_path):
    step = _step(tmp_path, "run")
    os.makedirs(tmp_path / "run")
    # An attempt in a process of its own, killed with SIGKILL: nothing of its own ends it.
    script = ("import sys, time; sys.path.insert(0, %r); from reproduction import timing; "
              "timing.UPDATE_SECONDS = 0.05; "
              "timing.Clock(%r); "
              "print('started', flush=True); time.sleep(60)" % (ROOT, step.outputs[0]))
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "started\n"
    time.sleep(1.0)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = json.loads((tmp_path / "run" / ("result.txt" + timing.ELAPSED_SUFFIX)).read_text())
    assert written["attempts"] == 1 and 0.9 <= written["seconds"] < 5
    clock = timing.Clock(step.outputs[0])  # the next attempt counts on from what the killed one wrote
    time.sleep(0.2)
    seconds, attempts = clock.stop()
    assert attempts == 2 and written["seconds"] + 0.2 <= seconds < written["seconds"] + 5
    assert json.loads((tmp_path / "run" / ("result.txt" + timing.ELAPSED_SUFFIX)).read_text()) == dict(
        seconds=round(seconds, 1), attempts=2)


def test_each_row_is_expected_to_take_its_median_run_and_a_new_row_its_stages(tmp_path):
    steps = [_step(tmp_path, "vocabulary", stage="data")]
    steps += [_step(tmp_path, "%s_seed%d" % (row, seed), row) for row in ("a", "b", "c") for seed in (1, 2, 3)]
    steps.append(_step(tmp_path, "report", stage="report"))
    cpu = "Some CPU, family 1 model 2"
    measured = {"vocabulary": dict(seconds=30.0, cpu=cpu, cores=2, parallel_runs=1, attempts=1),
                "a_seed1": dict(seconds=3600.0, cpu=cpu, cores=1, parallel_runs=2, attempts=2),
                "a_seed2": dict(seconds=4200.0, cpu=cpu, cores=1, parallel_runs=2, attempts=1),
                "b_seed1": dict(seconds=600.0, cpu=cpu, cores=1, parallel_runs=2)}  # written before attempts
    expected = timing.estimates(steps, measured)
    # Row a: its median (3900 s); row b: its one run; row c, never run: the median of its stage's runs (3600 s).
    assert expected == {"a_seed3": 3900.0, "b_seed2": 600.0, "b_seed3": 600.0, "c_seed1": 3600.0,
                        "c_seed2": 3600.0, "c_seed3": 3600.0}
    # b_seed2 is finished but has no record (a run kept from before records were written): not left, not timed.
    lines = timing.measured_lines(steps, measured, done={"b_seed2"})
    assert "| a | 2 of 3 | 2 | 1h05m | 1h00m – 1h10m | 1 | 1h05m |" in lines
    assert "| b | 2 of 3 | 1 | 10m00s | — | 1 | 10m00s |" in lines
    assert "| c | 0 of 3 | 0 | — | — | 3 | 3h00m |" in lines
    assert "| vocabulary | 1 of 1 | 1 | 0m30s | — | 0 | — |" in lines
    total = 3900 + 600 + 3 * 3600
    assert ("The 6 step(s) left: about %s of runs (each row's median so far), so about %s with 2 at a time on "
            "machines like these; not counted, no run of their stage measured yet: report." % (
                timing.duration(total), timing.duration(total / 2))) in lines
    assert ("Measured on: Some CPU, family 1 model 2, 1 core(s) a run, 2 at a time (3 run(s)); Some CPU, family 1 "
            "model 2, 2 core(s) a run, 1 at a time (1 run(s)).") in lines
    assert ("Records written before attempts were counted give the last attempt only, a lower bound for a run "
            "stopped and resumed: b_seed1.") in lines
    assert "| b | 1 of 3 | 1 | 10m00s | — | 2 | 20m00s |" in timing.measured_lines(steps, measured)
    assert timing.measured_lines(steps, measured, parallel_runs=1)[-1].startswith(
        "The 7 step(s) left: about %s of runs (each row's median so far), so about %s with 1 at a time" % (
            (timing.duration(total + 600),) * 2))
    only_old = {"b_seed1": measured["b_seed1"]}
    assert ("Records written before attempts were counted give the last attempt only, a lower bound for a run "
            "stopped and resumed: all of them (1).") in timing.measured_lines(steps, only_old)
    assert timing.measured_lines(steps, {}) == []


def test_steps_under_way_are_named_with_their_time_so_far_and_expected_to_need_only_the_rest(tmp_path):
    steps = [_step(tmp_path, "a_seed%d" % seed, "a") for seed in (1, 2, 3)]
    for name, so_far in (("a_seed2", dict(seconds=1500.0, attempts=2)), ("a_seed3", dict(seconds=9000.0))):
        os.makedirs(tmp_path / name)
        (tmp_path / name / ("result.txt" + timing.ELAPSED_SUFFIX)).write_text(json.dumps(so_far))
    os.makedirs(tmp_path / "a_seed1")
    (tmp_path / "a_seed1" / ("result.txt" + timing.ELAPSED_SUFFIX)).write_text('{"seconds": 12')  # cut short
    started = timing.under_way(steps)
    assert started == {"a_seed2": dict(seconds=1500.0, attempts=2), "a_seed3": dict(seconds=9000.0, attempts=1)}
    assert timing.under_way(steps, done={"a_seed2"}) == {"a_seed3": dict(seconds=9000.0, attempts=1)}
    under_way = ("Under way (running now, or stopped part-way and resumed from their checkpoints when run again): "
                 "a_seed2 (25m00s so far, 2 attempt(s)), a_seed3 (2h30m so far, 1 attempt(s)).")
    # Nothing finished yet: the steps under way, and no figure to expect from.
    assert timing.measured_lines(steps, {}, started=started) == ["## Times measured so far", "", under_way]
    # a_seed1 took an hour: a_seed2 needs the 35 minutes left; a_seed3, past the median already, nothing.
    measured = {"a_seed1": dict(seconds=3600.0, cpu="Some CPU", cores=1, parallel_runs=1, attempts=1)}
    lines = timing.measured_lines(steps, measured, started=started)
    assert "| a | 1 of 3 | 1 | 1h00m | — | 2 | 35m00s |" in lines
    assert under_way in lines
    assert lines[-1] == ("The 2 step(s) left: about 35m00s of runs (each row's median so far, less what those "
                         "under way have run), so about 35m00s with 1 at a time on machines like these.")


@pytest.mark.parametrize("seconds, text", [(0, "0m00s"), (59.6, "1m00s"), (3599, "59m59s"), (3600, "1h00m"),
                                           (90061, "25h01m")])
def test_durations_read_as_the_progress_lines_print_them(seconds, text):
    assert timing.duration(seconds) == text
