"""The job behind reproduce_paper_tables.py: plan a study's run, run its steps, report.

`ReproduceOptions` declares the flags every study reads, and
`options_class(registry)` joins them with each registered study's own into
the class reproduce_paper_tables.py defines its flags from; `run(options,
registry)` finds the study of --experiment, writes its plan (plan.sh,
plan.md), then (unless --dry_run) runs every unfinished step (or those of
--rows and --seeds: reproduction/selection.py), keeping each finished run in
--runs_dir and reusing the runs kept there (reproduction/archive.py), and,
once every step of the plan is finished, writes results.json, results.md
and the plot. With --launcher=slurm the steps are submitted as Slurm jobs
instead, the report as the last (reproduction/slurm.py).
"""

import dataclasses
import json
import os
import shlex
import typing
from typing import Optional

from absl import logging

from options import Options, option
import outputs
from reproduction import archive, plan as plan_lib, processes, runner, selection, slurm, timing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALES = ("paper", "small", "small_converged", "small_d32", "small_d128", "tiny", "tiny_converged")


@dataclasses.dataclass(kw_only=True)
class ReproduceOptions(slurm.SlurmOptions):
    """The flags of every study (each study's data flags are its own), and how the steps are launched."""

    scale: str = option("tiny", "paper: the paper's sizes and schedules (write the plan with --dry_run); "
                        "small: sized so the paper's effect can show on real text given by path on 2 CPU cores, "
                        "in hours per experiment (runs kept between sessions with --runs_dir); tiny: every row "
                        "shrunk the same way, a check that the pipeline runs, in minutes; small_converged, "
                        "tiny_converged (the language-model studies): the same sizes trained until held-out "
                        "perplexity stops improving; small_d32, small_d128 (freezing_nmt): its small scale at "
                        "other widths.", choices=SCALES)
    output_dir: str = option(help="Where the plan, every run and the results go.", path="output_dir")
    dtype: Optional[str] = option(
        None, "--dtype of every training run. Default: the study's (float32 unless its README says otherwise).",
        choices=("float32", "bfloat16", "float16"))
    parallel_runs: Optional[int] = option(
        None, "How many of the plan's runs go at once, each in a process of its own on its share of the cores "
        "(with 2 cores and 2 runs: one core each), a run starting once the runs it reads from are finished; its "
        "log goes to <output_dir>/logs/. 1: one after the other in this process. Default: the study's, measured "
        "per scale and number of cores (docs/reproduction.md#runs-side-by-side).", minimum=1)
    dry_run: bool = option(False, "Write and print the plan (plan.sh, plan.md) and the times measured so far (the "
                           "machine records of the runs finished here and in --runs_dir); run nothing (with "
                           "--launcher=slurm: also write the job scripts and submit.sh; submit nothing).")
    rows: Optional[str] = option(
        None, "Run these rows of the plan only, comma-separated, named as plan.md names them (or by their last "
        "part where that names one row: --rows=none,ffn), with the earlier steps they read from (the row that "
        "learns the vocabulary, the pre-training records). The report is written once every step of the plan "
        "is finished, here or in --runs_dir. Default: every row.")
    seeds: Optional[str] = option(
        None, "Run the runs of these seeds only, comma-separated (--seeds=1,2), of a plan whose rows run with "
        "several. Default: every seed.")
    runs_dir: Optional[str] = option(
        None, "A folder of finished runs kept between sessions and machines: each finished step's result "
        "files (never checkpoints) are copied there as it finishes, and a step found there that ran with the "
        "same inputs (flags, and files of the same content wherever they are) is restored instead of run; one "
        "with other inputs is refused. The committed evidence's runs go to docs/results/<scale>/<experiment>/"
        "runs/ of the checkout. Default: none.", path="output_dir")


_SAME_OPTION = ("type", "default", "choices", "minimum", "new", "path")


def _option_facts(hints, field):
    return dict(type=hints[field.name], default=field.default, choices=field.metadata.get("choices"),
                minimum=field.metadata.get("minimum"), new=field.metadata.get("new"), path=field.metadata.get("path"))


def options_class(registry):
    """reproduce_paper_tables.py's options: ReproduceOptions, `--experiment`, then every study's own flags.

    A flag several studies read (--vocab_file: a WordPiece vocabulary for the BERT
    tables, a SentencePiece model for the language models) is one flag: the
    studies must declare it with the same type, default, choices, minimum and
    path kind, and its help joins theirs (each says which study it speaks for).
    The joined class checks each flag's choices, minimum and path; a check across
    flags belongs in the study's plan(), so a study options class with a
    validate() of its own is refused rather than left unchecked.

    Args:
      registry: reproduction.registry.Registry of the known studies.

    Raises:
      TypeError: naming the flag and the two studies that declare it differently,
        a study flag that redeclares one of the engine's, or a study options class
        with a validate() of its own.
    """
    engine = {field.name for field in dataclasses.fields(ReproduceOptions)} | {"experiment"}
    first_study = {}  # options class -> the first study reading it (several studies may share one)
    for study in registry.studies():
        if study.options is not None:
            first_study.setdefault(study.options, study)
    declared = {}  # flag -> (study, options class, facts, helps)
    for klass, study in first_study.items():
        if klass.validate is not Options.validate:
            raise TypeError("%s (--experiment=%s) has a validate() of its own, which reproduce_paper_tables.py's "
                            "options would not run: check across flags in the study's plan()." % (
                                klass.__name__, study.name))
        hints = typing.get_type_hints(klass)
        for field in dataclasses.fields(klass):
            if field.name in engine:
                raise TypeError("%s.%s (--experiment=%s) redeclares the engine's --%s." % (
                    klass.__name__, field.name, study.name, field.name))
            facts = _option_facts(hints, field)
            if field.name not in declared:
                declared[field.name] = (study, klass, facts, [field.metadata["help"]])
                continue
            first, first_class, first_facts, helps = declared[field.name]
            different = [fact for fact in _SAME_OPTION if facts[fact] != first_facts[fact]]
            if different:
                raise TypeError("--%s is declared differently by --experiment=%s (%s) and --experiment=%s (%s): %s "
                                "differ%s." % (field.name, first.name, first_class.__name__, study.name,
                                                klass.__name__, ", ".join(different),
                                                "s" if len(different) == 1 else ""))
            if field.metadata["help"] not in helps:
                helps.append(field.metadata["help"])
    fields = [("experiment", str, option(help="The table or figure: %s." % ", ".join(registry.names()),
                                         choices=registry.names()))]
    for name, (_, _, facts, helps) in declared.items():
        default = {} if facts["default"] is dataclasses.MISSING else dict(default=facts["default"])
        fields.append((name, facts["type"], option(
            **default, help=" ".join(helps), choices=facts["choices"], minimum=facts["minimum"], new=facts["new"],
            path=facts["path"])))
    joined = dataclasses.make_dataclass("ReproduceOptions", fields, bases=(ReproduceOptions,), kw_only=True)
    joined.__module__ = __name__
    return joined


def _refuse_unread_flags(options, study):
    """ValueError naming the flags set to other than their default that `study` does not read (another study's
    data flags, say): nothing given on the command line is silently ignored."""
    own = [field.name for field in dataclasses.fields(study.options)] if study.options else []
    read = {field.name for field in dataclasses.fields(ReproduceOptions)} | {"experiment"} | set(own)
    unread = ["--" + field.name for field in dataclasses.fields(options) if field.name not in read
              and field.default is not dataclasses.MISSING and getattr(options, field.name) != field.default]
    if unread:
        them = "it" if len(unread) == 1 else "them"
        raise ValueError("%s: --experiment=%s does not read %s; leave %s out (its own flags: %s)." % (
            ", ".join(unread), study.name, them, them, ", ".join("--" + name for name in own) or "none"))


def plan_script(steps, experiment, scale, notes=()):
    """plan.sh: every command in order, each skipped when its outputs exist.

    Args:
      experiment, scale: their names, for the header.
      notes: comment lines of the study's own.
    """
    lines = [
        "#!/bin/bash",
        "# %s at %s scale, written by reproduce_paper_tables.py: every step in order. A step whose"
        % (experiment, scale),
        "# outputs exist is skipped, and the training entry points resume, so re-running continues.",
        "# Training commands end with ${DISTRIBUTION_FLAGS}; set it for your cluster, e.g.",
        "#   DISTRIBUTION_FLAGS='--distribution_strategy=tpu --tpu_name=my-tpu' bash plan.sh",
        *notes,
        "set -euo pipefail",
        'DISTRIBUTION_FLAGS="${DISTRIBUTION_FLAGS:-}"',
        'PYTHON="${PYTHON:-python}"',
        "cd %s" % shlex.quote(ROOT),
        "mkdir -p %s" % " ".join(shlex.quote(d) for d in plan_lib.output_directories(steps)),
        "",
    ]
    for step in steps:
        done = " && ".join("test -e %s" % shlex.quote(path) for path in step.outputs)
        lines.append("# %s" % step.name)
        lines.append("%s || %s" % (done, step.command_line(python='"${PYTHON}"')))
    return "\n".join(lines) + "\n"


def _launch_on_slurm(steps, plan_steps, options, experiment, output_dir, kept_runs):
    """--launcher=slurm: submits the unfinished steps and the report (reproduction/slurm.py), says what it did."""
    launched = slurm.launch(steps, options, experiment, output_dir, kept_runs, plan_steps=plan_steps)
    if options.dry_run:
        message = ("Wrote %d job script(s) to %s; submit them in order with %s (nothing submitted)."
                   % (len(launched["jobs"]), launched["directory"], launched["submit_sh"]))
    else:
        submitted = [job_id for name, job_id in launched["jobs"].items() if name not in launched["queued"]]
        message = ("Submitted %d job(s) (ids %s), the report last; %d step(s) finished or still queued%s. Watch them with "
                   "`squeue --me`; their logs are in %s, their ids by step in %s."
                   % (len(submitted), ", ".join(submitted), len(launched["skipped"]),
                      ": " + ", ".join(launched["skipped"]) if launched["skipped"] else "",
                      os.path.join(launched["directory"], "logs"),
                      os.path.join(launched["directory"], slurm.JOBS_FILE)))
    if not options.slurm_resources and any(step.distributed for step in steps):
        message += (" Without --slurm_resources every step asks for one task, no GPU and the partition's default time "
                    "(docs/cluster.md, section 2).")
    logging.info("%s", message)
    print(message, flush=True)
    return launched


def precision(steps):
    """The one --dtype of the plan's training steps (None when no step takes one).

    Raises:
      ValueError: when the steps would train in several precisions: the rows of one verdict must not mix them.
    """
    dtypes = sorted({step.flags["dtype"] for step in steps if "dtype" in step.flags})
    if len(dtypes) > 1:
        raise ValueError("The plan's steps train in several precisions (--dtype %s): a study's rows are compared "
                         "with each other, so they all run in one." % " and ".join(dtypes))
    return dtypes[0] if dtypes else None


def precision_line(dtype):
    """plan.md's line on the precision every training run of the study uses."""
    return ("\nPrecision: every training run in %s (--dtype), recorded with the CPU it ran on in each run's "
            "<output>.machine.json.\n" % dtype)


def run(options, registry):
    """Plans, runs and reports the experiment of `options` (a ReproduceOptions with `experiment`).

    Args:
      registry: reproduction.registry.Registry of the known studies.

    Returns:
      dict with the paths written (plan_sh, plan_md; and results_json,
      results_md, plot unless --dry_run) and the results.
    """
    options.validate()
    study = registry.get(options.experiment)
    _refuse_unread_flags(options, study)
    plan = study.plan(options)
    steps, added = selection.select(plan.steps, options.rows, options.seeds)  # a dry run checks them too
    dtype = precision(plan.steps)
    if dtype:
        plan.markdown = plan.markdown.rstrip("\n") + "\n" + precision_line(dtype)
    output_dir = options.output_dir
    os.makedirs(output_dir, exist_ok=True)
    written = dict(
        plan_sh=outputs.write_text(os.path.join(output_dir, "plan.sh"),
                                   plan_script(plan.steps, study.name, options.scale, plan.script_notes)),
        plan_md=outputs.write_text(os.path.join(output_dir, "plan.md"), plan.markdown))
    logging.info("Plan of %d steps: %s, %s", len(plan.steps), written["plan_sh"], written["plan_md"])
    if options.dry_run:
        print(plan.markdown)
    if plan.expected_time:
        logging.info("%s", plan.expected_time)
        print(plan.expected_time, flush=True)
    if options.dry_run and options.launcher == "local":
        kept_runs = archive.RunArchive(options.runs_dir, output_dir) if options.runs_dir else None
        done = timing.finished(plan.steps, kept_runs)
        measured = timing.measured_lines(plan.steps, timing.records(plan.steps, kept_runs), done,
                                         options.parallel_runs, timing.under_way(plan.steps, done))
        if measured:
            print("\n".join([""] + measured), flush=True)
        return written
    if options.rows or options.seeds:
        logging.info("--rows/--seeds: %d of the plan's %d steps%s.", len(steps), len(plan.steps),
                     "; with the earlier steps they read from: %s" % ", ".join(added) if added else "")
    kept_runs = archive.RunArchive(options.runs_dir, output_dir) if options.runs_dir else None
    if options.launcher == "slurm":
        written["slurm"] = _launch_on_slurm(steps, plan.steps, options, study.name, output_dir, kept_runs)
        return written
    cores = len(processes.usable_cores())
    parallel_runs = options.parallel_runs or study.parallel_runs(options.scale, cores)
    logging.info("--parallel_runs=%d%s on %d core(s).", parallel_runs, "" if options.parallel_runs else
                 " (the study's default at this scale)", cores)
    ran, skipped = runner.run(steps, study.programs(), output_dir=output_dir, archive=kept_runs,
                              parallel_runs=parallel_runs)
    logging.info("Ran %d steps, skipped %d finished ones.", ran, skipped)
    unfinished = [step.name for step in plan.steps if step.kept_files() and not step.is_done()]
    if unfinished:
        message = ("The report waits for %d unfinished step(s) of the plan (%s): run them (without --rows/--seeds, "
                   "or with theirs), or gather them from other machines with --runs_dir."
                   % (len(unfinished), ", ".join(unfinished)))
        logging.info("%s", message)
        print(message, flush=True)
        written["unfinished"] = unfinished
        return written
    results, markdown, written["plot"] = plan.report()
    written["results_json"] = outputs.write_text(os.path.join(output_dir, "results.json"),
                                                 json.dumps(results, indent=2, sort_keys=True) + "\n")
    written["results_md"] = outputs.write_text(os.path.join(output_dir, "results.md"), markdown)
    print(markdown)
    written["results"] = results
    return written
