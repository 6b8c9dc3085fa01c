"""The small-scale profiler's bookkeeping: exclusive phase times, the tracing estimate, the row's steps."""

import dataclasses
import itertools

import pytest

from benchmarks import small_scale_profile as profile
from reproduction.plan import Step


def test_a_timed_call_inside_another_counts_for_its_own_phase_only(monkeypatch):
    clock = itertools.count()  # each perf_counter() call is one second later
    monkeypatch.setattr(profile.time, "perf_counter", lambda: float(next(clock)))
    stopwatch = profile.Stopwatch()
    inner = stopwatch.timed("checkpoints", lambda: None)

    def outer_body(self, num_steps):
        inner()
        inner()

    outer = stopwatch.timed("training", outer_body)
    outer(None, 7)
    # outer reads the clock at 0 and 5, the inner calls at 1 and 2, then 3 and 4: 5 s, 2 s of them inside.
    assert stopwatch.seconds == {"checkpoints": 2.0}
    assert stopwatch.training_calls == [(7, 3.0)]


def test_tracing_is_the_first_loop_call_less_its_steps_at_the_later_rate():
    stopwatch = profile.Stopwatch()
    stopwatch.training_calls = [(100, 70.0), (100, 40.0), (50, 20.0), (100, 42.0)]
    tracing, steps = stopwatch.training_split()
    assert tracing == pytest.approx(30.0)  # 70 - 100 * 0.4 (median of 0.4, 0.4, 0.42)
    assert steps == pytest.approx(172.0 - 30.0)
    stopwatch.training_calls = [(100, 70.0)]
    assert stopwatch.training_split() == (0.0, 70.0)  # one call: nothing to estimate from


def _step(name, row, outputs, seed=None, **flags_):
    return Step(name, row, "stage", "run_pretraining.py", dict(flags_), tuple(outputs), seed=seed)


def test_the_row_runs_after_the_steps_whose_outputs_it_reads():
    data = _step("data/pretrain", "", ["/o/data/pretrain/a.tfrecord"])
    first = _step("dp32/pretrain_seed1", "dp32", ["/o/dp32_seed1/eval_results.txt"], seed=1,
                  input_file="/o/data/pretrain/*.tfrecord")
    probe = _step("dp32/probe_seed1", "dp32", ["/o/dp32_seed1/probe.json"], seed=1,
                  init_checkpoint="/o/dp32_seed1/model.ckpt")
    second = _step("dp32/pretrain_seed2", "dp32", ["/o/dp32_seed2/eval_results.txt"], seed=2,
                   input_file="/o/data/pretrain/*.tfrecord", vocab_file="/o/dp32_seed1/spm.model")
    other = _step("dp64/pretrain_seed1", "dp64", ["/o/dp64_seed1/eval_results.txt"], seed=1)
    plan = [data, first, probe, other, second]
    assert profile.select_steps(plan, None, None) == ([data], [first, probe])
    # (Every step writing into a folder the row reads from runs first: the probe too.)
    assert profile.select_steps(plan, "dp32", 2) == ([data, first, probe], [second])
    with pytest.raises(ValueError, match=r"^--row=dp16 is not in the plan; its rows: dp32, dp64\.$"):
        profile.select_steps(plan, "dp16", None)
    with pytest.raises(ValueError, match=r"^--seed=3: row dp64 runs with seeds 1\.$"):
        profile.select_steps(plan, "dp64", 3)


def test_the_table_gives_each_phase_its_share_and_the_row_total():
    result = dict(experiment="freezing_nmt", scale="small", steps=["none_seed1"], shared_steps=[],
                  shared_seconds=0.0, row_seconds=200.0, training_steps=1000, seconds_per_step=0.1,
                  input_seconds_per_batch=0.02, missing_hooks=[],
                  phases={"process start and imports": 10.0, "training: steps": 100.0, "training: tracing": 20.0,
                          "evaluation: beam search": 50.0, "checkpoints": 0.01, "other": 20.0})
    table = profile.table(result, "code: here")
    assert "| training: steps | 100.0 | 50% |" in table
    assert "| evaluation: beam search | 50.0 | 25% |" in table
    assert "checkpoints" not in table  # under 0.05 s
    assert "| **row, end to end** | **200.0** | 100% |" in table
    assert "training: 1000 steps, 100.0 ms a step" in table
    assert "input pipeline alone: 20.0 ms a batch" in table


def test_step_flags_are_added_where_the_entry_point_has_them_and_parsed_as_its_flags():
    from lm import task  # pylint: disable=import-outside-toplevel

    step = dataclasses.replace(_step("fixed_h4", "fixed_h4", [], seed=1, num_train_steps=120), program="run_lm.py")
    added = profile.with_flags(step, ["jit_compile=true", "num_train_steps=7", "no_such_flag=1"],
                               {"run_lm.py": (task.LmOptions, task.run)})
    assert added.flags == dict(num_train_steps=7, jit_compile=True)
    assert step.flags == dict(num_train_steps=120)  # the plan's step is left as it was
