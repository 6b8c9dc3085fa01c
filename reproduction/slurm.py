"""--launcher=slurm: a study's plan as Slurm jobs, one `sbatch` per step, dependencies as `afterok`.

Each unfinished step becomes a batch script in <output_dir>/slurm/ that runs
the step's plan.sh line (so the plan is still what runs): a training step
with several tasks under `srun` with --distribution_strategy=multi_worker_mirrored
(each task finds the cluster from Slurm's variables: training/slurm_cluster.py),
with one task and several GPUs with `mirrored`. A step that reads from an
earlier unfinished one waits for that job (`--dependency=afterok:<id>`, and is
cancelled should it fail). A last job, once every step's job succeeded, runs
the same reproduce_paper_tables.py command with --launcher=local, which finds
every step finished and writes the report (and keeps the runs in --runs_dir).

A step's resources come from one place: RESOURCES below, overridden by the
JSON file of --slurm_resources, key by key, the most specific winning: a step's
name ("dp32/pretrain_128"), its stage ("pretrain_128"), "training" (steps that
train), "default". Partition and account come from their flags, anything else
(a QOS, a constraint, mail) from --slurm_sbatch_defaults, a file of `#SBATCH`
lines put at the top of every script. Job ids go to <output_dir>/slurm/jobs.json.

Submitting again skips what is finished (the same checks as the local
launcher, inputs included) and what is still queued or running (the new
report job takes the place of an earlier one still waiting); a job
requeued by Slurm (a node lost, a preemption) starts its step again, which
resumes from its last checkpoint. A step records its inputs (as the local
runner does) before it starts, and one found half-run with other inputs is
refused at submission. With --dry_run the scripts
are written with submit.sh, which submits them in order; nothing is submitted,
but finished runs of --runs_dir are restored into --output_dir as without it,
since the jobs of submit.sh read them there.
"""

import dataclasses
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
from typing import Optional

from options import Options, option
import outputs
from reproduction import runner

LAUNCHERS = ("local", "slurm")
DIRECTORY = "slurm"
JOBS_FILE = "jobs.json"
REPORT = "report"
# Job states in which a submitted job still stands for its step (squeue's %T).
_QUEUED = frozenset(("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                     "RESIZING", "SUSPENDED", "SIGNALING", "STAGE_OUT"))


@dataclasses.dataclass(kw_only=True)
class SlurmOptions(Options):
    """How reproduce_paper_tables.py runs the steps: here, or as Slurm jobs."""

    launcher: str = option(
        "local", "local: run the steps one after another in this process; slurm: submit each unfinished step as a "
        "Slurm job (sbatch) with the steps it reads from as its dependencies, and a last job that writes the "
        "report. With --dry_run, slurm writes the job scripts and submit.sh without submitting.",
        choices=LAUNCHERS)
    slurm_partition: Optional[str] = option(None, "--launcher=slurm: the partition of every job (sbatch "
                                            "--partition). Default: the cluster's.")
    slurm_account: Optional[str] = option(None, "--launcher=slurm: the account every job is charged to (sbatch "
                                          "--account). Default: yours.")
    slurm_sbatch_defaults: Optional[str] = option(
        None, "--launcher=slurm: a file of #SBATCH lines put at the top of every job script (a QOS, a constraint, "
        "mail); the step's resources, given after them, win.", path="file")
    slurm_resources: Optional[str] = option(
        None, "--launcher=slurm: a JSON file of each step's resources, over the defaults of reproduction/slurm.py: "
        "{\"default\" | \"training\" | <stage> | <step name>: {\"nodes\", \"tasks_per_node\", \"cpus_per_task\", "
        "\"gpus_per_task\", \"time\", \"mem\"}}, the most specific key winning, and \"report\" for the last job "
        "(docs/cluster.md).", path="file")

    def validate(self):
        """Also refuses --slurm_* flags without --launcher=slurm, which would be ignored."""
        super().validate()
        given = ["--" + field.name for field in dataclasses.fields(SlurmOptions)
                 if field.name.startswith("slurm_") and getattr(self, field.name) is not None]
        if given and self.launcher != "slurm":
            raise ValueError("%s only tell%s --launcher=slurm how to submit; with --launcher=%s nothing is submitted."
                             % (", ".join(given), "" if len(given) > 1 else "s", self.launcher))


@dataclasses.dataclass(frozen=True)
class Resources:
    """What one step's job asks Slurm for; None leaves it to the cluster's defaults.

    nodes, tasks_per_node: the workers of a training step (nodes x tasks_per_node tasks; one for other steps).
    cpus_per_task, gpus_per_task: each task's. time: sbatch --time ("2-00:00:00"). mem: sbatch --mem ("64G").
    """

    nodes: int = 1
    tasks_per_node: int = 1
    cpus_per_task: Optional[int] = None
    gpus_per_task: int = 0
    time: Optional[str] = None
    mem: Optional[str] = None

    @property
    def tasks(self):
        return self.nodes * self.tasks_per_node

    def sbatch_lines(self):
        lines = ["--nodes=%d" % self.nodes, "--ntasks-per-node=%d" % self.tasks_per_node]
        if self.cpus_per_task is not None:
            lines.append("--cpus-per-task=%d" % self.cpus_per_task)
        if self.gpus_per_task:
            lines.append("--gpus-per-task=%d" % self.gpus_per_task)
        if self.time is not None:
            lines.append("--time=%s" % self.time)
        if self.mem is not None:
            lines.append("--mem=%s" % self.mem)
        return ["#SBATCH " + line for line in lines]

    def distribution_flags(self):
        """The training flags of these resources: a worker per task, else the GPUs of one task, else none."""
        if self.tasks > 1:
            return "--distribution_strategy=multi_worker_mirrored"
        if self.gpus_per_task > 1:
            return "--distribution_strategy=mirrored"
        return ""


# Every step's resources unless --slurm_resources says otherwise: one task, the cluster's defaults for the rest.
RESOURCES = {"default": {}, "training": {}}
_FIELDS = {field.name: field for field in dataclasses.fields(Resources)}
_INTEGERS = {"nodes": 1, "tasks_per_node": 1, "cpus_per_task": 1, "gpus_per_task": 0}  # field -> minimum


def read_resources(path):
    """--slurm_resources's file: {key: {field: value}}, each checked.

    Raises:
      ValueError: naming the file, the key and the field, and what was expected.
    """
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except ValueError as error:
        raise ValueError("--slurm_resources=%s is not JSON (%s)." % (path, error)) from None
    if not isinstance(table, dict):
        raise ValueError("--slurm_resources=%s must hold a JSON object of keys (\"default\", \"training\", a stage "
                         "or a step name), not %s." % (path, type(table).__name__))
    for key, fields in table.items():
        if not isinstance(fields, dict):
            raise ValueError("--slurm_resources=%s: %r must be an object of resources, not %s."
                             % (path, key, json.dumps(fields)))
        for name, value in fields.items():
            if name not in _FIELDS:
                raise ValueError("--slurm_resources=%s: %r has %r; expected among %s."
                                 % (path, key, name, ", ".join(_FIELDS)))
            if name in _INTEGERS:
                if not isinstance(value, int) or isinstance(value, bool) or value < _INTEGERS[name]:
                    raise ValueError("--slurm_resources=%s: %r: %s must be an integer of at least %d, not %s."
                                     % (path, key, name, _INTEGERS[name], json.dumps(value)))
            elif not isinstance(value, str) or not value.strip():
                raise ValueError("--slurm_resources=%s: %r: %s must be a string as sbatch takes it (e.g. %s), not %s."
                                 % (path, key, name, "\"2-00:00:00\"" if name == "time" else "\"64G\"",
                                    json.dumps(value)))
    return table


def read_sbatch_defaults(path):
    """--slurm_sbatch_defaults's `#SBATCH` lines (blank and other comment lines dropped).

    Raises:
      ValueError: naming the file and line that is not an #SBATCH line.
    """
    lines = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or (line.startswith("#") and not line.startswith("#SBATCH")):
                continue
            if not re.match(r"^#SBATCH\s+--?\w", line):
                raise ValueError("--slurm_sbatch_defaults=%s line %d is not an #SBATCH line (\"#SBATCH --qos=long\"): "
                                 "%r." % (path, number, line))
            lines.append(line)
    return lines


def _merged(table, keys):
    """Resources of RESOURCES, then `table`, each key over the ones before it."""
    fields = {}
    for source in (RESOURCES, table):
        for key in keys:
            fields.update(source.get(key, {}))
    return Resources(**fields)


def resources_of(step, table):
    """The step's Resources: RESOURCES, then `table` (read_resources), default < training < stage < step name.

    Raises:
      ValueError: a step that does not train given several tasks.
    """
    keys = ["default"] + (["training"] if step.distributed else []) + [step.stage, step.name]
    resources = _merged(table, keys)
    if resources.tasks > 1 and not step.distributed:
        raise ValueError("--slurm_resources: step %s (%s) does not train, so it runs as one task; %d nodes x %d tasks "
                         "per node were asked for (keys %s)." % (step.name, step.program, resources.nodes,
                                                                 resources.tasks_per_node, ", ".join(keys)))
    return resources


def report_resources(table):
    """The report job's Resources: "default", then "report" (RESOURCES, then `table`); one task.

    Raises:
      ValueError: several nodes or tasks asked for.
    """
    resources = _merged(table, ["default", REPORT])
    if resources.tasks > 1:
        raise ValueError("--slurm_resources: the report job runs as one task; %d nodes x %d tasks per node were asked "
                         "for (keys default, report)." % (resources.nodes, resources.tasks_per_node))
    return resources


def unknown_keys(table, steps):
    """Keys of --slurm_resources that name no step or stage of the plan (a typo would go unnoticed)."""
    known = {"default", "training", REPORT} | {step.stage for step in steps} | {step.name for step in steps}
    return sorted(set(table) - known)


def file_name(step_name):
    """A step's name as a file name: "dp32/pretrain_128" -> "dp32.pretrain_128"."""
    return re.sub(r"[^A-Za-z0-9_.-]", ".", step_name)


@dataclasses.dataclass
class Job:
    """A job to submit: its step name (REPORT for the report), script and the jobs it waits for."""

    name: str
    script: str
    after: list


def step_script(step, resources, experiment, directory, root, python, header):
    """The batch script of one step: its resources, its inputs recorded, then its plan.sh line.

    The job runs where reproduce_paper_tables.py was run (relative paths mean the same), the
    entry point from the checkout `root`.

    Args:
      header: the #SBATCH lines every job carries (defaults file, partition, account).
    """
    name = file_name(step.name)
    inputs = os.path.join(directory, name + ".inputs.json")
    outputs.write_text(inputs, json.dumps(step.inputs(), indent=1, sort_keys=True) + "\n")
    done = " && ".join("test -e %s" % shlex.quote(path) for path in step.outputs)
    launch = "srun --kill-on-bad-exit=1 " if resources.tasks > 1 else ""
    lines = [
        "#!/bin/bash",
        "# %s of %s, written by reproduce_paper_tables.py --launcher=slurm." % (step.name, experiment),
        *header,
        "#SBATCH --job-name=%s:%s" % (experiment, step.name),
        "#SBATCH --output=%s" % os.path.join(directory, "logs", name + ".%j.out"),
        "#SBATCH --open-mode=append",
        "#SBATCH --requeue",
        *resources.sbatch_lines(),
        "set -euo pipefail",
        "cd %s" % shlex.quote(os.getcwd()),
        "PYTHON=%s" % shlex.quote(python),
        "DISTRIBUTION_FLAGS=%s" % shlex.quote(resources.distribution_flags()),
        'echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID} on ${SLURM_JOB_NODELIST}: step ' + step.name + '"',
        "# Finished already (a requeued job whose step completed): nothing to do.",
        "if %s; then exit 0; fi" % done,
        "# The step's inputs, recorded beside its outputs before it runs, as the local launcher records them.",
        "mkdir -p %s && cp %s %s" % (shlex.quote(os.path.dirname(step.inputs_file())), shlex.quote(inputs),
                                     shlex.quote(step.inputs_file())),
        "# Its plan.sh line, timed over the job's attempts; once it succeeds, where it ran is recorded beside its",
        "# outputs, as the local launcher records it (reproduction/timed_step.py).",
        '"${PYTHON}" -c %s %s %s %s -- ' % (
            shlex.quote("import sys; sys.path.insert(0, %s); from reproduction import timed_step; "
                        "sys.exit(timed_step.main(sys.argv[1:]))" % json.dumps(root)),
            shlex.quote(step.name), shlex.quote(step.outputs[0]), shlex.quote(step.flags.get("dtype") or ""))
        + launch + dataclasses.replace(step, program=os.path.join(root, step.program)).command_line(python='"${PYTHON}"'),
    ]
    path = os.path.join(directory, name + ".sbatch")
    outputs.write_text(path, "\n".join(lines) + "\n")
    return path


def report_script(command, resources, experiment, directory, python, header):
    """The last job's script: the same reproduce_paper_tables.py command, --launcher=local, writing the report."""
    lines = [
        "#!/bin/bash",
        "# The report of %s, written by reproduce_paper_tables.py --launcher=slurm: every step is finished" % experiment,
        "# when this runs, so the local launcher only checks them, keeps them and writes the results.",
        *header,
        "#SBATCH --job-name=%s:%s" % (experiment, REPORT),
        "#SBATCH --output=%s" % os.path.join(directory, "logs", REPORT + ".%j.out"),
        "#SBATCH --open-mode=append",
        *resources.sbatch_lines(),
        "set -euo pipefail",
        "cd %s" % shlex.quote(os.getcwd()),
        "%s %s" % (shlex.quote(python), " ".join(shlex.quote(word) for word in command)),
    ]
    path = os.path.join(directory, REPORT + ".sbatch")
    outputs.write_text(path, "\n".join(lines) + "\n")
    return path


def command_flags(options):
    """The flags of reproduce_paper_tables.py that give `options` (those away from their defaults), but how it launches."""
    skip = {"dry_run"} | {field.name for field in dataclasses.fields(SlurmOptions)}
    words = []
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        if field.name in skip or value is None or (field.default is not dataclasses.MISSING and value == field.default):
            continue
        words.append("--%s=%s" % (field.name, ("true" if value else "false") if isinstance(value, bool) else value))
    return words


def _submit_line(job, variables):
    after = ":".join("${%s}" % variables[name] for name in job.after)
    dependency = " --dependency=afterok:%s --kill-on-invalid-dep=yes" % after if after else ""
    return "%s=$(sbatch --parsable%s %s)" % (variables[job.name], dependency, shlex.quote(job.script))


def submit_script(jobs, directory):
    """submit.sh: sbatch each job in order, each waiting for the jobs of the steps it reads from."""
    variables = {job.name: "JOB_%d" % index for index, job in enumerate(jobs)}
    lines = ["#!/bin/bash",
             "# Submits the jobs of this plan in order (reproduce_paper_tables.py --launcher=slurm --dry_run).",
             "set -euo pipefail"]
    for job in jobs:
        lines.append("# " + job.name)
        lines.append(_submit_line(job, variables))
        lines.append("echo \"%s: job ${%s}\"" % (job.name, variables[job.name]))
    path = os.path.join(directory, "submit.sh")
    outputs.write_text(path, "\n".join(lines) + "\n")
    os.chmod(path, 0o755)
    return path


def _run(command):
    """Runs a Slurm command, its output.

    Raises:
      FileNotFoundError: the command is not on PATH.
      ValueError: it failed (sbatch refusing a job: a partition, account or resources the cluster does not have).
    """
    try:
        completed = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise FileNotFoundError("--launcher=slurm: %s is not on PATH: run reproduce_paper_tables.py on a login node "
                                "of the cluster (or use --dry_run to write the job scripts)." % command[0]) from None
    if completed.returncode != 0:
        raise ValueError("--launcher=slurm: `%s` failed (exit %d): %s" % (
            " ".join(shlex.quote(word) for word in command), completed.returncode, completed.stderr.strip()))
    return completed.stdout.strip()


def queued_state(job_id):
    """The job's state while Slurm still counts it as queued or running (squeue's %T), else None."""
    try:
        state = _run(["squeue", "--noheader", "--jobs=%s" % job_id, "--format=%T"])
    except ValueError:
        return None  # squeue refuses an id it no longer knows
    state = state.splitlines()[0].strip() if state else ""
    return state if state in _QUEUED else None


def read_jobs(path):
    """jobs.json of an earlier submission: {step name: {"job_id", ...}}, or {} when there is none.

    Raises:
      ValueError: naming the file, when it is not such an object.
    """
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            recorded = json.load(f)
    except ValueError as error:
        recorded, problem = None, "is not JSON (%s)" % error
    else:
        problem = "does not map step names to {\"job_id\": ...}"
    if not isinstance(recorded, dict) or not all(isinstance(job, dict) for job in recorded.values()):
        raise ValueError("%s, the job ids of an earlier --launcher=slurm submission, %s: move it away to submit as "
                         "if for the first time (jobs it names that still run are then submitted again)."
                         % (path, problem))
    return recorded


def launch(steps, options, experiment, output_dir, archive=None, root=None, python=None, plan_steps=None):
    """Submits the unfinished steps (or, with options.dry_run, writes their scripts and submit.sh).

    Args:
      steps: the steps to run (after --rows/--seeds), in plan order.
      options: reproduce_paper_tables.py's options (SlurmOptions among them).
      experiment: the study's name.
      output_dir: the study's --output_dir.
      archive: an archive.RunArchive of kept runs, or None.
      root, python: the checkout whose entry points the jobs run, and its interpreter (this one's by
        default). The jobs run in the current directory, as the local launcher does.
      plan_steps: every step of the plan (`steps` when None), whose names and stages --slurm_resources may use.

    Returns:
      dict: directory, jobs ({name: job id}, or the scripts' paths with --dry_run), submit_sh (--dry_run),
      skipped (names of steps finished, restored, left out or still queued).

    Raises:
      ValueError: bad --slurm_resources, --slurm_sbatch_defaults or jobs.json, a finished step's inputs
        changed, or sbatch refusing a job.
      FileNotFoundError: sbatch or squeue not on PATH.
    """
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    python = python or sys.executable
    table = read_resources(options.slurm_resources) if options.slurm_resources else {}
    plan_steps = steps if plan_steps is None else plan_steps
    unknown = unknown_keys(table, plan_steps)
    if unknown:
        raise ValueError("--slurm_resources=%s names no step or stage of this plan: %s; its stages: %s."
                         % (options.slurm_resources, ", ".join(unknown),
                            ", ".join(sorted({step.stage for step in plan_steps}))))
    report = report_resources(table)
    header = read_sbatch_defaults(options.slurm_sbatch_defaults) if options.slurm_sbatch_defaults else []
    if options.slurm_partition:
        header.append("#SBATCH --partition=%s" % options.slurm_partition)
    if options.slurm_account:
        header.append("#SBATCH --account=%s" % options.slurm_account)
    directory = os.path.abspath(os.path.join(output_dir, DIRECTORY))
    os.makedirs(os.path.join(directory, "logs"), exist_ok=True)
    jobs_path = os.path.join(directory, JOBS_FILE)
    recorded = read_jobs(jobs_path)

    produced = set().union(*(step.folders() for step in steps)) if steps else set()
    done, restored, left_out = runner.schedule(steps, archive)
    skipped, queued, to_submit = [], {}, []
    for step in steps:
        if step.name in done:
            runner.check_inputs(step, output_dir, produced)
            skipped.append(step.name)
        elif step.name in restored:
            archive.restore(step)
            skipped.append(step.name)
        elif step.name in left_out:
            skipped.append(step.name)
        else:
            runner.check_inputs(step, output_dir, produced, finished=False)
            job_id = recorded.get(step.name, {}).get("job_id")
            if job_id and not options.dry_run and queued_state(job_id):
                queued[step.name] = recorded[step.name]["job_id"]
                skipped.append(step.name)
            else:
                to_submit.append(step)
    waiting = set(queued) | {step.name for step in to_submit}
    jobs = []
    for step in to_submit:
        resources = resources_of(step, table)
        after = [earlier.name for earlier in steps[:steps.index(step)]
                 if earlier.name in waiting and step.reads_from(earlier)]
        jobs.append(Job(step.name, step_script(step, resources, experiment, directory, root, python, header), after))
    command = [os.path.join(root, "reproduce_paper_tables.py")] + command_flags(options) + ["--launcher=local"]
    jobs.append(Job(REPORT, report_script(command, report, experiment, directory, python, header),
                    [step.name for step in to_submit] + list(queued)))
    result = dict(directory=directory, skipped=skipped)
    if options.dry_run:
        result["submit_sh"] = submit_script(jobs, directory)
        result["jobs"] = {job.name: job.script for job in jobs}
        return result

    ids = dict(queued)
    earlier_report = recorded.get(REPORT, {}).get("job_id")
    if earlier_report and queued_state(earlier_report):
        _run(["scancel", earlier_report])  # the new report job waits for everything the earlier one did
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    for job in jobs:
        command = ["sbatch", "--parsable"]
        if job.after:
            command += ["--dependency=afterok:" + ":".join(ids[name] for name in job.after), "--kill-on-invalid-dep=yes"]
        job_id = _run(command + [job.script]).split(";")[0]
        ids[job.name] = job_id
        recorded[job.name] = dict(job_id=job_id, script=job.script, submitted=now,
                                  after={name: ids[name] for name in job.after})
        outputs.write_text(jobs_path, json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    result["jobs"] = {job.name: ids[job.name] for job in jobs}
    result["queued"] = queued
    return result
