"""A Slurm job script, run by bash as a job would run it: its step timed over a failed attempt and a requeued one."""

import json
import os
import subprocess
import sys

from reproduction import slurm, timing
from reproduction.plan import Step
from training import compute_dtype

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = """import os, sys, time
flags = dict(arg[2:].split("=", 1) for arg in sys.argv[1:])
time.sleep(0.5)
if os.path.exists(flags["fail_marker"]):  # the first attempt fails, as a job killed part-way
    os.remove(flags["fail_marker"])
    sys.exit(3)
with open(flags["output_file"], "w") as f:
    f.write("done")
"""


def test_a_job_records_its_step_with_the_time_of_every_attempt_once_it_succeeds(tmp_path):
    program, output, marker = tmp_path / "program.py", tmp_path / "out" / "run" / "result.txt", tmp_path / "fail"
    program.write_text(PROGRAM)
    marker.write_text("")
    step = Step("run_seed1", "run", "train", str(program),
                dict(output_file=str(output), fail_marker=str(marker), dtype="bfloat16"), (str(output),), seed=1)
    os.makedirs(tmp_path / "slurm" / "logs")
    script = slurm.step_script(step, slurm.Resources(), "fake", str(tmp_path / "slurm"), ROOT, sys.executable, [])
    environment = dict(os.environ, SLURM_JOB_ID="1", SLURM_JOB_NODELIST="localhost")

    def job():
        return subprocess.run(["bash", script], env=environment, capture_output=True, text=True, cwd=tmp_path)

    first = job()
    assert first.returncode == 3, first.stderr
    assert not os.path.exists(step.machine_file())  # only a step that succeeded is recorded
    elapsed = json.loads(open(str(output) + timing.ELAPSED_SUFFIX).read())
    assert elapsed["attempts"] == 1 and elapsed["seconds"] >= 0.5
    second = job()  # the job requeued
    assert second.returncode == 0, second.stderr
    assert output.read_text() == "done"
    record = json.loads(open(step.machine_file()).read())
    assert record["step"] == "run_seed1" and record["dtype"] == "bfloat16" and record["parallel_runs"] == 1
    assert record["attempts"] == 2 and record["seconds"] >= elapsed["seconds"] + 0.5
    assert record["cores"] == record["threads"] == len(os.sched_getaffinity(0))
    assert record["cpu"] == compute_dtype.describe_cpu()
    assert not os.path.exists(str(output) + timing.ELAPSED_SUFFIX)
    # Requeued once more after it finished: nothing runs, the record stays.
    assert job().returncode == 0 and json.loads(open(step.machine_file()).read()) == record
