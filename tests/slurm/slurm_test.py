"""On a real Slurm: a study's plan as jobs, and two workers under srun that resume exactly after a cancel.

Both compare with what runs without Slurm: the tiny Table 2B's results with
the local launcher's, the two workers' checkpoints with one process training
on the same global batch (training/testing/multi_worker.py).
"""

import json
import os
import subprocess
import sys
import time

import tensorflow as tf

from checkpoints import training_checkpoint
from modeling import pretraining
from training.testing import multi_worker

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Slower than this is a hang (a worker waiting for a lost peer), or a job Slurm never starts.
TIMEOUT = 300
# The tiny Table 2B: 22 steps, each a process of its own under Slurm.
STUDY_TIMEOUT = 2400


def _slurm(command, environment):
    completed = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout.strip()


def _queued(job_id, environment):
    """Whether Slurm still holds the job as pending or running."""
    state = subprocess.run(["squeue", "--noheader", "--jobs=%s" % job_id, "--format=%T"], env=environment,
                           capture_output=True, text=True, check=False).stdout.strip()
    return state not in ("", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")


def _wait(condition, timeout, what, log=None):
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise AssertionError("%s after %d s%s" % (what, timeout, ("; the log ends:\n" + _read(log)[-3000:])
                                                       if log else ""))
        time.sleep(2)


def _read(path):
    return open(path).read() if os.path.exists(path) else ""


def _batch_script(path, log, command):
    """A batch script of two tasks, one CPU each, starting `command` on both with srun."""
    path.write_text("\n".join([
        "#!/bin/bash", "#SBATCH --job-name=two-workers", "#SBATCH --ntasks=2", "#SBATCH --cpus-per-task=1",
        "#SBATCH --output=%s" % log, "#SBATCH --open-mode=append", "set -euo pipefail", "cd %s" % ROOT,
        "srun --kill-on-bad-exit=1 " + " ".join(command)]) + "\n")
    return str(path)


def test_two_workers_under_srun_train_as_one_process_and_resume_exactly_after_the_job_is_cancelled(
        slurm_environment, tmp_path):
    flags = multi_worker.write_setup(str(tmp_path / "data"))
    output, reference = tmp_path / "output", tmp_path / "reference"
    worker_flags = multi_worker.command_line(dict(flags, output_dir=str(output),
                                                  distribution_strategy="multi_worker_mirrored"))
    log = str(tmp_path / "job.log")
    # Both workers stop making progress after step 6 (the checkpoint of step 4 written), as a job
    # stuck or about to be preempted; no TF_CONFIG anywhere: the cluster comes from Slurm.
    hanging = _batch_script(tmp_path / "hanging.sbatch", log, [
        sys.executable, "-m", "modeling.testing.crash_after_step", "--hang_after_step=6"] + worker_flags)
    assert "TF_CONFIG" not in slurm_environment
    job = _slurm(["sbatch", "--parsable", hanging], slurm_environment).split(";")[0]
    try:
        # Meanwhile, the reference here: one device, the global batch, uninterrupted.
        pretraining.run(pretraining.PretrainingOptions(**flags, output_dir=str(reference)))
        # (modeling/testing/crash_after_step.py says so; not imported here: it defines run_pretraining.py's flags.)
        _wait(lambda: _read(log).count("crash_after_step: hanging after step 6") == 2, TIMEOUT,
              "The workers are not at step 6",
              log)
    finally:
        _slurm(["scancel", job], slurm_environment)
    _wait(lambda: not _queued(job, slurm_environment), TIMEOUT, "Job %s is not cancelled" % job)
    text = _read(log)
    host = os.uname().nodename
    assert ("Distribution: multi_worker_mirrored with 2 replica(s): worker 0 of 2 (found by Slurm: job %s, task 0 "
            "of 2 on %s), the chief." % (job, host)) in text
    assert ("Distribution: multi_worker_mirrored with 2 replica(s): worker 1 of 2 (found by Slurm: job %s, task 1 "
            "of 2 on %s)." % (job, host)) in text
    assert training_checkpoint.latest(str(output)) == str(output / "model.ckpt-4")
    multi_worker.assert_checkpoints_agree(str(output / "model.ckpt-4"), str(reference / "model.ckpt-4"))

    # The same command in a new job: both workers resume from step 4 and finish as the uninterrupted run.
    resumed_log = str(tmp_path / "resumed.log")
    resumed = _batch_script(tmp_path / "resumed.sbatch", resumed_log,
                            [sys.executable, "run_pretraining.py"] + worker_flags)
    _slurm(["sbatch", "--wait", resumed], slurm_environment)
    text = _read(resumed_log)
    assert text.count("Resumed from %s at global step 4." % (output / "model.ckpt-4")) == 2, text[-3000:]
    assert text.count("Training from step 4 to 8.") == 2
    multi_worker.assert_checkpoints_agree(str(output / "model.ckpt-8"), str(reference / "model.ckpt-8"))
    # The tolerance tells training steps apart: steps 5 to 8 move a kernel 100 times as far.
    kernel = "bert/encoder/layer_0/output/dense/kernel"
    step_4, step_8 = (tf.train.load_checkpoint(str(reference / name)).get_tensor(kernel)
                      for name in ("model.ckpt-4", "model.ckpt-8"))
    assert abs(step_8 - step_4).max() > 100 * 1e-5 * abs(step_8).max()
    assert sorted(os.listdir(output / "training_state")) == ["worker-0-of-2", "worker-1-of-2"]


def _reproduce(output_dir, launcher, environment, *flags):
    return subprocess.run(
        [sys.executable, "reproduce_paper_tables.py", "--experiment=table2b", "--scale=tiny",
         "--output_dir=%s" % output_dir, "--launcher=%s" % launcher, *flags], cwd=ROOT, env=environment,
        capture_output=True, text=True, check=False)


def test_a_training_step_given_two_tasks_trains_as_two_workers_from_its_job_script(slurm_environment, tmp_path):
    output = tmp_path / "run"
    resources = tmp_path / "resources.json"
    resources.write_text(json.dumps({"dp32/pretrain_512": {"tasks_per_node": 2, "cpus_per_task": 1}}))
    submitted = _reproduce(output, "slurm", slurm_environment, "--rows=dp32", "--slurm_resources=%s" % resources)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    jobs = json.loads((output / "slurm" / "jobs.json").read_text())
    assert sorted(jobs) == ["data/pretrain_128", "data/pretrain_512", "dp32/mnli_seed1", "dp32/pretrain_128",
                            "dp32/pretrain_512", "dp32/probe", "dp32/squad_seed1", "report"]
    try:
        _wait(lambda: not any(_queued(job["job_id"], slurm_environment) for job in jobs.values()), STUDY_TIMEOUT,
              "The jobs of dp32 have not run")
    finally:
        still_queued = [job["job_id"] for job in jobs.values() if _queued(job["job_id"], slurm_environment)]
        if still_queued:
            _slurm(["scancel"] + still_queued, slurm_environment)
    job = jobs["dp32/pretrain_512"]["job_id"]
    log = _read(output / "slurm" / "logs" / ("dp32.pretrain_512.%s.out" % job))
    for worker in (0, 1):
        assert ("Distribution: multi_worker_mirrored with 2 replica(s): worker %d of 2 (found by Slurm: job %s, task %d "
                "of 2 on %s)" % (worker, job, worker, os.uname().nodename)) in log, log[-3000:]
    # The step finished and kept its inputs, and the steps reading its checkpoint ran from it.
    assert (output / "dp32" / "pretrain_512" / "eval_results.txt").exists()
    assert list((output / "dp32" / "pretrain_512").glob("*.inputs.json"))
    for reader in ("probe", "mnli_seed1", "squad_seed1"):
        assert list((output / "dp32" / reader).glob("*.inputs.json")), reader
    # The report job waits for the rows left out (their steps that keep files).
    report = _read(output / "slurm" / "logs" / ("report.%s.out" % jobs["report"]["job_id"]))
    assert "The report waits for 12 unfinished step(s) of the plan (dp64/pretrain_512, dp64/probe," in report, \
        report[-3000:]


def test_a_tiny_table_runs_as_slurm_jobs_with_the_local_launchers_results(slurm_environment, tmp_path):
    on_slurm, local = tmp_path / "slurm_run", tmp_path / "local_run"
    submitted = _reproduce(on_slurm, "slurm", slurm_environment)
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    jobs = json.loads((on_slurm / "slurm" / "jobs.json").read_text())
    assert len(jobs) == 23 and "Submitted 23 job(s)" in submitted.stdout
    # Each step waits for the steps it reads from: the probe for its row's last pre-training.
    assert jobs["dp32/probe"]["after"]["dp32/pretrain_512"] == jobs["dp32/pretrain_512"]["job_id"]
    assert set(jobs["report"]["after"]) == set(jobs) - {"report"}
    # Submitted again at once: the steps still queued keep their jobs, a new report job replaces the first.
    early = _reproduce(on_slurm, "slurm", slurm_environment)
    assert early.returncode == 0, early.stderr[-3000:]
    resubmitted = json.loads((on_slurm / "slurm" / "jobs.json").read_text())
    assert resubmitted["dp256/squad_seed1"]["job_id"] == jobs["dp256/squad_seed1"]["job_id"]
    assert resubmitted["report"]["job_id"] != jobs["report"]["job_id"]
    assert not _queued(jobs["report"]["job_id"], slurm_environment)
    jobs = resubmitted
    try:
        # Meanwhile the same plan with the local launcher, the reference.
        ran_here = _reproduce(local, "local", dict(slurm_environment, SLURM_CONF="/nonexistent"))
        assert ran_here.returncode == 0, ran_here.stderr[-3000:]
        report_log = on_slurm / "slurm" / "logs" / ("report.%s.out" % jobs["report"]["job_id"])
        _wait(lambda: not _queued(jobs["report"]["job_id"], slurm_environment), STUDY_TIMEOUT,
              "The report job has not run", report_log)
    finally:
        still_queued = [job["job_id"] for job in jobs.values() if _queued(job["job_id"], slurm_environment)]
        if still_queued:
            _slurm(["scancel"] + still_queued, slurm_environment)
    assert (on_slurm / "results.json").exists(), _read(report_log)[-3000:]
    assert json.loads((on_slurm / "results.json").read_text()) == json.loads((local / "results.json").read_text())
    assert (on_slurm / "results.md").read_text() == (local / "results.md").read_text()
    # Each step kept the inputs it ran with, as the local launcher does.
    inputs = sorted(path.relative_to(on_slurm) for path in on_slurm.rglob("*.inputs.json") if "slurm" not in path.parts)
    assert inputs == sorted(path.relative_to(local) for path in local.rglob("*.inputs.json"))
    assert len(inputs) == 22
    # And where it ran, once it succeeded (reproduction/timed_step.py): the local launcher's records, job for job.
    records = sorted(path.relative_to(on_slurm) for path in on_slurm.rglob("*.machine.json") if "slurm" not in path.parts)
    assert records == sorted(path.relative_to(local) for path in local.rglob("*.machine.json"))
    for path in records:
        record = json.loads((on_slurm / path).read_text())
        assert record["attempts"] == 1 and record["seconds"] > 0 and record["cpu"], record

    # Submitting again skips every finished step: only the report job goes.
    again = _reproduce(on_slurm, "slurm", slurm_environment)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Submitted 1 job(s)" in again.stdout and "22 step(s) finished or still queued" in again.stdout
    report = json.loads((on_slurm / "slurm" / "jobs.json").read_text())["report"]["job_id"]
    assert report != jobs["report"]["job_id"]
    _wait(lambda: not _queued(report, slurm_environment), TIMEOUT, "The second report job has not run")
