"""The job behind reproduce_paper_tables.py: plan an experiment, run it, collect and plot its results.

`ReproduceOptions` declares the command line; `run(options)` writes the row
configs, plan.sh and plan.md, then (unless --dry_run) runs every unfinished
step and writes results.json, results.md and the plot.
"""

import dataclasses
import glob
import json
import os
import shlex
from typing import Optional

from absl import logging

import outputs
from modeling import parameter_matching
from options import option
from reproduction import experiments, lm_experiments, plan as plan_lib, plots, results as results_lib, runner, scales
from training import compute_dtype
from training.language_modeling import LmTextOptions
from training.translation import NmtDataOptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPER_VOCAB_SIZE = results_lib.PAPER_VOCAB_SIZE
MNLI_FILES = ("train.tsv", "dev_matched.tsv", "dev_mismatched.tsv")
SQUAD_FILES = ("train-v1.1.json", "dev-v1.1.json")
SCALE_NOTES = {
    "paper": "Paper scale: 24 layers, the paper's pre-training and fine-tuning recipes.",
    "tiny": "**Tiny scale** (2 layers, d, d_p and I divided by 8, seconds of training on a sample of "
            "Python docstrings, one fine-tuning seed by default): this shows that every stage of the "
            "pipeline runs and lands in the table. It does not reproduce the paper's numbers or "
            "trends; only runs at paper scale can.",
}


NMT_EXPERIMENTS = ("freezing_nmt",)
ALL_EXPERIMENTS = tuple(experiments.EXPERIMENTS) + tuple(lm_experiments.EXPERIMENTS) + NMT_EXPERIMENTS


@dataclasses.dataclass(kw_only=True)
class ReproduceOptions(LmTextOptions, NmtDataOptions):
    """The reproduce_paper_tables.py flags (the lm_* and freezing_lm experiments read run_lm.py's text
    flags, freezing_nmt run_translation.py's data flags)."""

    experiment: str = option(
        help="The table or figure: %s." % ", ".join(ALL_EXPERIMENTS), choices=ALL_EXPERIMENTS)
    scale: str = option("tiny", "paper: the paper's sizes and schedules (write the plan with --dry_run); "
                        "tiny: every row shrunk the same way, runnable on 2 CPU cores.",
                        choices=tuple(scales.SCALES))
    output_dir: str = option(help="Where the plan, every run and the results go.")
    corpus: Optional[str] = option(
        None, "Pre-training text for create_pretraining_data.py (files or globs, comma-separated). "
        "Tiny scale without it: the bundled sample data.")
    mnli_dir: Optional[str] = option(None, "MNLI's GLUE folder (train.tsv, dev_matched.tsv, dev_mismatched.tsv).")
    squad_dir: Optional[str] = option(None, "SQuAD v1.1 folder (train-v1.1.json, dev-v1.1.json).")
    vocab_file: Optional[str] = option(
        None, "BERT tables: the WordPiece vocabulary (paper: BERT's 30522-entry uncased one). lm_*, "
        "freezing_lm and freezing_nmt: a SentencePiece model (default: the first row learns one from the "
        "training text).")
    do_lower_case: bool = option(True, "Lower-case the text (an uncased vocabulary).")
    num_seeds: Optional[int] = option(
        None, "Fine-tuning seeds per row and task; results are mean ± std over them. Default: 3 at "
        "paper scale, 1 at tiny.", minimum=1)
    dtype: Optional[str] = option(
        None, "--dtype of every training run. Default: float32, except the BERT tables at tiny scale: "
        "bfloat16 where the CPU has native bfloat16 (AVX512-BF16 or AMX), else float32.",
        choices=("float32", "bfloat16", "float16"))
    dry_run: bool = option(False, "Write and print the plan (plan.sh, plan.md); run nothing.")

    def data_paths(self):
        """The DataPaths of the run; tiny scale without data makes the sample data."""
        given = dict(corpus=self.corpus, mnli_dir=self.mnli_dir, squad_dir=self.squad_dir,
                     vocab_file=self.vocab_file)
        if self.scale == "tiny" and not any(given.values()):
            from reproduction import tiny_data  # pylint: disable=import-outside-toplevel
            return tiny_data.make(os.path.join(self.output_dir, "sample_data"))
        missing = [name for name, value in given.items() if not value]
        if missing and not self.dry_run:
            raise ValueError("--scale=%s needs %s (where the data lives)."
                             % (self.scale, ", ".join("--" + name for name in missing)))
        for name in ("mnli_dir", "squad_dir"):
            if given[name] and not self.dry_run and not os.path.isdir(given[name]):
                raise ValueError("--%s=%s is not a directory." % (name, given[name]))
        # Checked now, not when fine-tuning starts after hours of pre-training.
        for name, files in (("mnli_dir", MNLI_FILES), ("squad_dir", SQUAD_FILES)):
            missing_files = [f for f in files if given[name] and not self.dry_run
                             and not os.path.exists(os.path.join(given[name], f))]
            if missing_files:
                raise ValueError("--%s=%s lacks %s." % (name, given[name], ", ".join(missing_files)))
        if self.vocab_file and not self.dry_run and not os.path.exists(self.vocab_file):
            raise ValueError("--vocab_file=%s does not exist." % self.vocab_file)
        # A dry run without paths writes shell variables, for the cluster to set.
        return plan_lib.DataPaths(
            corpus=self.corpus or "${CORPUS}", mnli_dir=self.mnli_dir or "${MNLI_DIR}",
            squad_dir=self.squad_dir or "${SQUAD_DIR}", vocab_file=self.vocab_file or "${VOCAB_FILE}",
            do_lower_case=self.do_lower_case)


def vocab_size_of(vocab_file):
    """Entries of the vocabulary file, or BERT's 30522 when it is not there (a dry run)."""
    if vocab_file and os.path.exists(vocab_file):
        with open(vocab_file, encoding="utf-8") as f:
            return sum(1 for _ in f)
    return PAPER_VOCAB_SIZE


def write_probe_input(paths, path, num_examples=64):
    """The attention-rank probe's input: pairs of consecutive sentences from the corpus's documents.

    Returns False (and writes nothing) when the corpus is not here (a dry run).
    """
    files = sorted(f for pattern in paths.corpus.split(",") for f in glob.glob(pattern.strip()))
    if not files:
        return False
    pairs = []
    for name in files:
        with open(name, encoding="utf-8", errors="replace") as f:
            previous = ""
            for line in f:
                line = line.strip()
                if previous and line:
                    pairs.append("%s ||| %s" % (previous, line))
                previous = line
                if len(pairs) == num_examples:
                    break
        if len(pairs) == num_examples:
            break
    if not pairs:
        raise ValueError("--corpus=%s holds no two consecutive sentences for the probe." % paths.corpus)
    outputs.write_text(path, "\n".join(pairs) + "\n")
    return True


def write_configs(output_dir, experiment, scale, vocab_size):
    for row in experiment.rows:
        path = plan_lib.config_path(output_dir, row)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        outputs.write_text(path, scale.config(row, vocab_size).to_json_string())


def output_directories(steps):
    """Every folder the steps write into: create_pretraining_data and the probe need them to exist."""
    return sorted({os.path.dirname(path) for step in steps for path in step.outputs})


BERT_PLAN_NOTES = (
    "# Unset paths (${CORPUS}, ${MNLI_DIR}, ${SQUAD_DIR}, ${VOCAB_FILE}) come from the environment.",
    "# The probe reads data/probe_input.txt: sentence pairs of the corpus that",
    "# reproduce_paper_tables.py writes when it can read the corpus.",
)


def plan_script(steps, experiment, scale, notes=BERT_PLAN_NOTES):
    """plan.sh: every command in order, each skipped when its outputs exist."""
    lines = [
        "#!/bin/bash",
        "# %s at %s scale, written by reproduce_paper_tables.py: every step in order. A step whose"
        % (experiment.name, scale.name),
        "# outputs exist is skipped, and the training entry points resume, so re-running continues.",
        "# Training commands end with ${DISTRIBUTION_FLAGS}; set it for your cluster, e.g.",
        "#   DISTRIBUTION_FLAGS='--distribution_strategy=tpu --tpu_name=my-tpu' bash plan.sh",
        *notes,
        "set -euo pipefail",
        'DISTRIBUTION_FLAGS="${DISTRIBUTION_FLAGS:-}"',
        'PYTHON="${PYTHON:-python}"',
        "cd %s" % shlex.quote(ROOT),
        "mkdir -p %s" % " ".join(shlex.quote(d) for d in output_directories(steps)),
        "",
    ]
    for step in steps:
        done = " && ".join("test -e %s" % shlex.quote(path) for path in step.outputs)
        lines.append("# %s" % step.name)
        lines.append("%s || %s" % (done, step.command_line(python='"${PYTHON}"')))
    return "\n".join(lines) + "\n"


def plan_markdown(steps, experiment, scale, vocab_size):
    """plan.md: per row the exact parameter count, compute and checkpoint size; then the steps."""
    from modeling import compute_cost  # pylint: disable=import-outside-toplevel

    lines = ["# Plan: %s at %s scale" % (experiment.title, scale.name), "",
             "Parameters include the pre-training heads (V = %d). FLOPs count the matrix products "
             "of a pre-training step, forward and backward (3x the forward)." % vocab_size, "",
             "| row | config | parameters | FLOPs per step (%s) | pre-training FLOPs | checkpoint |"
             % " / ".join("n=%d" % stage.max_seq_length for stage in scale.stages),
             "|---|---|---|---|---|---|"]
    for row in experiment.rows:
        config = scale.config(row, vocab_size)
        params = results_lib.total_parameters(config)
        per_step = [compute_cost.pretraining_step_flops(
            config, scale.train_batch_size, stage.max_seq_length, stage.max_predictions_per_seq)
            for stage in scale.stages]
        total = sum(flops * stage.num_train_steps for flops, stage in zip(per_step, scale.stages))
        lines.append("| %s | %s, I=%d, %d layers | %s | %s | %s | %s model, %s with Adam slots |" % (
            row.name, row.label(), config.intermediate_size, config.num_hidden_layers, "{:,}".format(params),
            " / ".join(compute_cost.format_flops(f) for f in per_step), compute_cost.format_flops(total),
            compute_cost.format_bytes(compute_cost.checkpoint_bytes(config)),
            compute_cost.format_bytes(compute_cost.checkpoint_bytes(config, with_adam_slots=True))))
    if scale.name == "paper" and vocab_size == PAPER_VOCAB_SIZE:
        lines += ["", "The paper compares families at equal parameter counts. The standard model "
                  "(16 heads of size d/h, I = 4d) matching each row's count "
                  "(modeling.parameter_matching, d in multiples of 16):", "",
                  "| row | parameters | matched standard model | its parameters |", "|---|---|---|---|"]
        for row in experiment.rows:
            params = results_lib.total_parameters(scale.config(row, vocab_size))
            matched = parameter_matching.match_params(parameter_matching.BASELINE, params)
            lines.append("| %s | %s | d=%d, h=16, d_p=%d, I=%d | %s |" % (
                row.name, "{:,}".format(params), matched.config.hidden_size,
                matched.config.attention_head_size, matched.config.intermediate_size,
                "{:,}".format(matched.parameters)))
    lines += ["", "Schedule: batch %d, learning rate %g; %s. Fine-tuning: MNLI %s; SQuAD v1.1 %s." % (
        scale.train_batch_size, scale.learning_rate,
        "; ".join("%s: %d steps at n=%d (%d warm-up)" % (s.name, s.num_train_steps, s.max_seq_length,
                                                        s.num_warmup_steps) for s in scale.stages),
        _flags_text(scale.mnli), _flags_text(scale.squad)), "", "## Steps", ""]
    lines += ["%d. `%s` — %s" % (i, s.name, s.program) for i, s in enumerate(steps, 1)]
    return "\n".join(lines) + "\n"


def _flags_text(flags):
    return ", ".join("%s=%s" % item for item in flags.items())


def run(options):
    """Plans, runs and reports an experiment.

    Returns:
      dict with the paths written (plan_sh, plan_md; and results_json,
      results_md, plot unless --dry_run) and the results.
    """
    options.validate()
    if options.experiment in lm_experiments.EXPERIMENTS:
        from reproduction import lm_driver  # pylint: disable=import-outside-toplevel
        return lm_driver.run(options)
    if options.experiment in NMT_EXPERIMENTS:
        from reproduction import nmt_driver  # pylint: disable=import-outside-toplevel
        return nmt_driver.run(options)
    experiment, scale = experiments.get(options.experiment), scales.SCALES[options.scale]
    paths = options.data_paths()
    vocab_size = vocab_size_of(paths.vocab_file)
    num_seeds = options.num_seeds or scale.default_num_seeds
    dtype = options.dtype or (compute_dtype.preferred_dtype() if scale.name == "tiny" else "float32")
    output_dir = options.output_dir
    os.makedirs(output_dir, exist_ok=True)
    steps = plan_lib.build(experiment, scale, paths, output_dir, num_seeds, dtype)
    for directory in output_directories(steps):
        os.makedirs(directory, exist_ok=True)
    write_configs(output_dir, experiment, scale, vocab_size)
    probe_input = plan_lib.probe_input_path(output_dir)
    if not os.path.exists(probe_input) and not write_probe_input(paths, probe_input):
        logging.warning("%s is not written (no corpus here): write sentence pairs there, one "
                        "'a ||| b' per line, before the probe steps run.", probe_input)

    def report():
        results = results_lib.collect(experiment, scale, steps, vocab_size)
        return results, results_lib.markdown(results, SCALE_NOTES[scale.name]), plots.write(output_dir, results)

    return plan_and_run(options, steps, plan_script(steps, experiment, scale),
                        plan_markdown(steps, experiment, scale, vocab_size), report)


def plan_and_run(options, steps, plan_sh, plan_md, report):
    """Writes plan.sh and plan.md; unless --dry_run, runs the unfinished steps and reports.

    Args:
      report: () -> (results dict, results.md text, plot path), once every step is done.

    Returns:
      dict of the paths written (plan_sh, plan_md; and results_json,
      results_md, plot unless --dry_run) and the results.
    """
    output_dir = options.output_dir
    written = dict(plan_sh=outputs.write_text(os.path.join(output_dir, "plan.sh"), plan_sh),
                   plan_md=outputs.write_text(os.path.join(output_dir, "plan.md"), plan_md))
    logging.info("Plan of %d steps: %s, %s", len(steps), written["plan_sh"], written["plan_md"])
    if options.dry_run:
        print(plan_md)
        return written
    ran, skipped = runner.run(steps)
    logging.info("Ran %d steps, skipped %d finished ones.", ran, skipped)
    results, markdown, written["plot"] = report()
    written["results_json"] = outputs.write_text(os.path.join(output_dir, "results.json"),
                                                 json.dumps(results, indent=2, sort_keys=True) + "\n")
    written["results_md"] = outputs.write_text(os.path.join(output_dir, "results.md"), markdown)
    print(markdown)
    written["results"] = results
    return written
