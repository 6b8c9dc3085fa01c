"""--launcher=slurm without submitting (--dry_run): the job scripts, their resources and order, bad input.

Submitting to a real Slurm, and the results it gives, are tested in tests/slurm/.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from reproduction import slurm
import studies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAINING_PROGRAMS = {"run_pretraining.py", "run_classifier.py", "run_squad.py", "run_lm.py", "run_translation.py"}


def _options(tmp_path, **flags):
    values = dict(experiment="table2b", scale="paper", output_dir=str(tmp_path / "out"), dry_run=True,
                  launcher="slurm")
    values.update(flags)
    return studies.ReproduceOptions(**values)


def _write(path, text):
    path.write_text(text)
    return str(path)


def _timed(line):
    """(step, first output, dtype, command) of a job script's timed command line."""
    found = re.match(r"^\"\$\{PYTHON\}\" -c '(.*)' (\S+) (\S+) (\S+) -- (.*)$", line)
    assert found and found.group(1) == ("import sys; sys.path.insert(0, %s); from reproduction import timed_step; "
                                        "sys.exit(timed_step.main(sys.argv[1:]))" % json.dumps(ROOT)), line
    return found.groups()[1:]


def test_a_dry_run_writes_each_steps_script_with_its_resources_and_submit_sh_in_order(tmp_path):
    resources = _write(tmp_path / "resources.json", json.dumps({
        "default": {"cpus_per_task": 8, "time": "04:00:00"},
        "training": {"nodes": 2, "tasks_per_node": 4, "gpus_per_task": 1, "time": "2-00:00:00"},
        "pretrain_512": {"nodes": 4},
        "dp32/pretrain_512": {"time": "3-00:00:00", "mem": "200G"},
        "dp32/mnli_seed1": {"nodes": 1, "tasks_per_node": 1, "gpus_per_task": 2}}))
    defaults = _write(tmp_path / "defaults", "# our lab\n\n#SBATCH --qos=long\n#SBATCH --constraint=a100\n")
    written = studies.run(_options(tmp_path, slurm_resources=resources, slurm_sbatch_defaults=defaults,
                                   slurm_partition="gpu", slurm_account="lab"))
    launched = written["slurm"]
    directory = tmp_path / "out" / "slurm"
    steps = [line[2:] for line in open(written["plan_sh"]).read().splitlines()
             if line.startswith("# ") and "/" in line and " " not in line[2:]]
    assert len(steps) == 38 and list(launched["jobs"]) == steps + ["report"]
    assert not (directory / "jobs.json").exists()  # nothing submitted

    def script(name):
        return (directory / (slurm.file_name(name) + ".sbatch")).read_text()

    def sbatch(text):
        return [line for line in text.splitlines() if line.startswith("#SBATCH")]

    header = ["#SBATCH --qos=long", "#SBATCH --constraint=a100", "#SBATCH --partition=gpu", "#SBATCH --account=lab"]
    # The most specific key wins: step name over stage over "training" over "default".
    pretrain = script("dp32/pretrain_512")
    assert sbatch(pretrain) == header + [
        "#SBATCH --job-name=table2b:dp32/pretrain_512",
        "#SBATCH --output=%s/logs/dp32.pretrain_512.%%j.out" % directory, "#SBATCH --open-mode=append",
        "#SBATCH --requeue", "#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=4", "#SBATCH --cpus-per-task=8",
        "#SBATCH --gpus-per-task=1", "#SBATCH --time=3-00:00:00", "#SBATCH --mem=200G"]
    assert "DISTRIBUTION_FLAGS=--distribution_strategy=multi_worker_mirrored" in pretrain
    [line] = [line for line in pretrain.splitlines() if "run_pretraining.py" in line]
    # The plan.sh line, timed through reproduction/timed_step.py (the step, its first output, its dtype).
    name, first_output, dtype, line = _timed(line)
    assert (name, dtype, first_output) == ("dp32/pretrain_512", "float32", str(
        tmp_path / "out" / "dp32" / "pretrain_512" / "model.ckpt-50000.index"))
    assert line.startswith('srun --kill-on-bad-exit=1 "${PYTHON}" %s/run_pretraining.py --input_file=' % ROOT)
    assert line.endswith(" ${DISTRIBUTION_FLAGS}")
    # One task with two GPUs mirrors over them; a step that does not train runs alone, without srun.
    assert "DISTRIBUTION_FLAGS=--distribution_strategy=mirrored" in script("dp32/mnli_seed1")
    data = script("data/pretrain_128")
    assert "#SBATCH --nodes=1" in data and "#SBATCH --time=04:00:00" in data and "--gpus" not in data
    assert _timed(data.rstrip().splitlines()[-1])[3].startswith('"${PYTHON}" %s/create_pretraining_data.py ' % ROOT)
    # The inputs are recorded before the step runs (before its command), after the finished-already check.
    lines = [line for line in data.rstrip().splitlines() if not line.startswith("# ")]
    assert lines[-2] == "mkdir -p %s/out/data && cp %s/data.pretrain_128.inputs.json %s/out/data/pretrain_128.tfrecord" \
        ".inputs.json" % (tmp_path, directory, tmp_path)
    assert "create_pretraining_data.py" in lines[-1] and lines[-3].startswith("if test -e ")

    # submit.sh: each step after the jobs of the earlier steps it reads from; the report after every job.
    submit = open(launched["submit_sh"]).read()
    assert subprocess.run(["bash", "-n", launched["submit_sh"]]).returncode == 0
    variable = {name: "JOB_%d" % index for index, name in enumerate(launched["jobs"])}
    assert "%s=$(sbatch --parsable %s)" % (variable["data/pretrain_128"], directory / "data.pretrain_128.sbatch") in submit
    probe = re.search(r"^%s=\$\(sbatch --parsable --dependency=afterok:(\S+) --kill-on-invalid-dep=yes " % variable["dp32/probe"],
                      submit, re.M).group(1)
    assert "${%s}" % variable["dp32/pretrain_512"] in probe.split(":")
    assert "${%s}" % variable["dp64/pretrain_512"] not in probe.split(":")
    report = re.search(r"^%s=\$\(sbatch --parsable --dependency=afterok:(\S+) " % variable["report"], submit, re.M).group(1)
    assert report.split(":") == ["${%s}" % variable[name] for name in steps]
    # The report job: this command, run by the local launcher (which finds every step finished).
    [command] = [line for line in (directory / "report.sbatch").read_text().splitlines()
                 if "reproduce_paper_tables.py" in line and not line.startswith("#")]
    assert command.split()[1:] == [ROOT + "/reproduce_paper_tables.py", "--scale=paper", "--output_dir=%s" % (tmp_path / "out"),
                                   "--experiment=table2b", "--launcher=local"]


def test_without_a_resources_file_the_launcher_says_what_each_job_asks_for(tmp_path, capsys):
    studies.run(_options(tmp_path, experiment="theorem1", scale="tiny"))  # trains nothing
    assert "--slurm_resources" not in capsys.readouterr().out
    written = studies.run(_options(tmp_path, rows="dp32"))
    assert ("(nothing submitted). Without --slurm_resources every step asks for one task, no GPU and the partition's "
            "default time (docs/cluster.md, section 2).") in capsys.readouterr().out
    assert "--gpus" not in open(written["slurm"]["jobs"]["dp32/pretrain_512"]).read()


def test_jobs_run_where_the_command_was_run_so_that_relative_paths_mean_the_same(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written = studies.run(_options(tmp_path, output_dir="runs/t2b", experiment="theorem1", scale="tiny"))
    directory = tmp_path / "runs" / "t2b" / "slurm"
    assert written["slurm"]["directory"] == str(directory)
    for script in ("theorem1.sbatch", "report.sbatch"):
        text = (directory / script).read_text()
        assert "\ncd %s\n" % tmp_path in text
        assert ("--output_file=runs/t2b/capacity.json" if script == "theorem1.sbatch" else "--output_dir=runs/t2b ") in text
        assert "#SBATCH --output=%s/logs/" % directory in text


def test_every_training_step_of_every_study_takes_the_clusters_distribution_flags(tmp_path):
    for name in studies.STUDIES.names():
        options = _options(tmp_path / name, experiment=name, launcher="local")
        plan = studies.STUDIES.get(name).plan(options)
        for step in plan.steps:
            assert step.distributed == (step.program in TRAINING_PROGRAMS), (name, step.name)


@pytest.mark.parametrize("resources, message", [
    ("{", "--slurm_resources=.* is not JSON"),
    ("[]", "must hold a JSON object of keys"),
    ('{"training": 4}', "'training' must be an object of resources, not 4"),
    ('{"training": {"gpus": 1}}', "'training' has 'gpus'; expected among nodes, tasks_per_node, cpus_per_task, "
                                  "gpus_per_task, time, mem"),
    ('{"default": {"nodes": 0}}', "'default': nodes must be an integer of at least 1, not 0"),
    ('{"default": {"cpus_per_task": "8"}}', "'default': cpus_per_task must be an integer of at least 1, not \"8\""),
    ('{"default": {"time": 60}}', "'default': time must be a string as sbatch takes it \\(e.g. \"2-00:00:00\"\\), "
                                  "not 60"),
    ('{"pretrain_1024": {"nodes": 2}}', "names no step or stage of this plan: pretrain_1024; its stages: data, mnli, "
                                        "pretrain_128, pretrain_512, probe, squad"),
    ('{"data/pretrain_128": {"nodes": 2}}', "step data/pretrain_128 \\(create_pretraining_data.py\\) does not train, "
                                            "so it runs as one task; 2 nodes x 1 tasks per node were asked for"),
])
def test_bad_resources_are_named(tmp_path, resources, message):
    path = _write(tmp_path / "resources.json", resources)
    with pytest.raises(ValueError, match=message):
        studies.run(_options(tmp_path, slurm_resources=path))


def test_a_defaults_file_holds_sbatch_lines_only(tmp_path):
    path = _write(tmp_path / "defaults", "#SBATCH --qos=long\n--constraint=a100\n")
    with pytest.raises(ValueError, match="--slurm_sbatch_defaults=.*defaults line 2 is not an #SBATCH line "
                                         "\\(\"#SBATCH --qos=long\"\\): '--constraint=a100'"):
        studies.run(_options(tmp_path, slurm_sbatch_defaults=path))


def test_without_sbatch_the_launcher_says_where_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch, no squeue
    with pytest.raises(FileNotFoundError, match="--launcher=slurm: squeue is not on PATH|--launcher=slurm: sbatch is not on "
                                           "PATH: run reproduce_paper_tables.py on a login node of the cluster"):
        studies.run(_options(tmp_path, dry_run=False, experiment="theorem1", scale="tiny"))
    assert not os.path.exists(tmp_path / "out" / "slurm" / "jobs.json")


def _fake_slurm(tmp_path, monkeypatch, sbatch):
    """sbatch (a shell body) and squeue (knowing no job) on PATH, in tmp_path/bin."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name, body in (("sbatch", sbatch), ("squeue", "exit 1")):
        (directory / name).write_text("#!/bin/sh\n" + body + "\n")
        (directory / name).chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (directory, os.environ["PATH"]))


def test_sbatch_refusing_a_job_ends_the_command_line_with_its_message(tmp_path, monkeypatch):
    _fake_slurm(tmp_path, monkeypatch, 'echo "sbatch: error: invalid partition specified: gpu" >&2; exit 1')
    command = [sys.executable, os.path.join(ROOT, "reproduce_paper_tables.py"), "--experiment=theorem1",
               "--scale=tiny", "--launcher=slurm", "--slurm_partition=gpu", "--output_dir=%s" % (tmp_path / "out")]
    ended = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert ended.returncode == 1
    last = ended.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"reproduce_paper_tables.py: error: --launcher=slurm: `sbatch --parsable \S+theorem1.sbatch` "
                        r"failed \(exit 1\): sbatch: error: invalid partition specified: gpu", last), last
    assert "Traceback" not in ended.stderr


def test_a_damaged_jobs_file_is_named(tmp_path, monkeypatch):
    _fake_slurm(tmp_path, monkeypatch, "echo 17")
    jobs = tmp_path / "out" / "slurm" / "jobs.json"
    jobs.parent.mkdir(parents=True)
    jobs.write_text('{"theorem1": {"job_id": "12"')
    with pytest.raises(ValueError, match="%s, the job ids of an earlier --launcher=slurm submission, is not JSON "
                                         r"\(.*\): move it away" % re.escape(str(jobs))):
        studies.run(_options(tmp_path, dry_run=False, experiment="theorem1", scale="tiny"))
    jobs.write_text('{"theorem1": "12"}')
    with pytest.raises(ValueError, match=r"does not map step names to \{\"job_id\": ...\}"):
        studies.run(_options(tmp_path, dry_run=False, experiment="theorem1", scale="tiny"))


def test_slurm_flags_without_the_slurm_launcher_are_refused(tmp_path):
    with pytest.raises(ValueError, match="--slurm_partition, --slurm_account only tell --launcher=slurm how to submit; "
                                         "with --launcher=local nothing is submitted"):
        studies.run(_options(tmp_path, launcher="local", slurm_partition="gpu", slurm_account="lab"))


def test_resources_may_name_steps_outside_the_rows_run_and_the_report_job(tmp_path):
    resources = _write(tmp_path / "resources.json", json.dumps({
        "dp256/pretrain_512": {"time": "4-00:00:00"},  # a row left out by --rows
        "default": {"time": "01:00:00"},
        "report": {"time": "00:20:00", "mem": "8G"}}))
    written = studies.run(_options(tmp_path, slurm_resources=resources, rows="dp32"))
    assert "dp256/pretrain_512" not in written["slurm"]["jobs"]
    report = [line for line in (tmp_path / "out" / "slurm" / "report.sbatch").read_text().splitlines()
              if line.startswith("#SBATCH --")]
    assert report[-4:] == ["#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=1", "#SBATCH --time=00:20:00",
                           "#SBATCH --mem=8G"]
    several = _write(tmp_path / "several.json", json.dumps({"report": {"nodes": 2}}))
    with pytest.raises(ValueError, match="the report job runs as one task; 2 nodes x 1 tasks per node were asked for"):
        studies.run(_options(tmp_path, slurm_resources=several))
