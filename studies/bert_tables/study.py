"""The BERT tables and figure of Bhojanapalli et al. (2020) as studies: table1, table2a, table2b, figure2.

Each row is pre-trained (create_pretraining_data.py, run_pretraining.py in
two stages), probed (probe_attention_rank.py) and fine-tuned on MNLI and
SQuAD v1.1 (run_classifier.py, run_squad.py), one fine-tuning run per seed.
Tiny scale without data flags makes its data from the sample corpus.
"""

import dataclasses
import glob
import os
from typing import Optional

from absl import logging

from analysis import attention_rank, unigram_baseline
from modeling import classification, pretraining, squad
from options import Options, option
import outputs
from pretraining_data import pipeline
from pretraining_data.instances import CreatePretrainingDataOptions
from reproduction import sample_data, tiny_data
from reproduction.plan import output_directories
from reproduction.study import Plan, Study, scale_of
from studies.bert_tables import (compute_cost, experiments, parameter_matching, plan as plan_lib, plots,
                                 results as results_lib, scales)
from tokenization import vocab_builder
from training import compute_dtype

PAPER_VOCAB_SIZE = results_lib.PAPER_VOCAB_SIZE
MNLI_FILES = ("train.tsv", "dev_matched.tsv", "dev_mismatched.tsv")
SQUAD_FILES = ("train-v1.1.json", "dev-v1.1.json")
SCALE_NOTES = {
    "paper": "Paper scale: 24 layers, the paper's pre-training and fine-tuning recipes.",
    "small": "**Small scale** (2 layers; d, I, d_p and the sequence length divided by 4: d = 128, h = 8, n = 32; "
             "a WordPiece vocabulary learned from the corpus; 10000 pre-training steps of 64 sequences, three "
             "pre-training seeds per row; masked LM evaluated on held-out text, beside the unigram baseline): "
             "what 2 CPU cores can show in hours of the paper's direction. Fine-tuning columns are 'not run' "
             "unless --mnli_dir / --squad_dir were given.",
    "tiny": "**Tiny scale** (2 layers, d, d_p and I divided by 8, seconds of training on a sample of "
            "Python docstrings, one fine-tuning seed by default): this shows that every stage of the "
            "pipeline runs and lands in the table. It does not reproduce the paper's numbers or "
            "trends; only runs at paper scale can.",
}
PLAN_NOTES = (
    "# Unset paths (${CORPUS}, ${MNLI_DIR}, ${SQUAD_DIR}, ${VOCAB_FILE}, ${EVAL_CORPUS}) come from the environment.",
    "# The probe reads data/probe_input.txt: sentence pairs of the corpus that",
    "# reproduce_paper_tables.py writes when it can read the corpus.",
)


@dataclasses.dataclass(kw_only=True)
class BertTableOptions(Options):
    """reproduce_paper_tables.py's flags of the BERT tables."""

    corpus: Optional[str] = option(
        None, "Pre-training text for create_pretraining_data.py (files or globs, comma-separated). "
        "Tiny scale without it: the bundled sample data.")
    eval_corpus: Optional[str] = option(
        None, "Held-out text in --corpus's format: the pre-trained models' masked-LM accuracy and loss are "
        "measured on it. Needed at small scale.")
    mnli_dir: Optional[str] = option(None, "MNLI's GLUE folder (train.tsv, dev_matched.tsv, dev_mismatched.tsv).")
    squad_dir: Optional[str] = option(None, "SQuAD v1.1 folder (train-v1.1.json, dev-v1.1.json).")
    vocab_file: Optional[str] = option(
        None, "BERT tables: the WordPiece vocabulary (paper: BERT's 30522-entry uncased one; small: "
        "default, one learned from --corpus by the plan's create_vocab.py step).")
    do_lower_case: bool = option(True, "Lower-case the text (an uncased vocabulary).")
    num_seeds: Optional[int] = option(
        None, "Fine-tuning seeds per row and task; results are mean ± std over them. Default: 3 at "
        "paper scale, 1 at tiny.", minimum=1)


def make_tiny_data(data_dir):
    """Makes (or finds, piece by piece) the tiny data in data_dir; returns its DataPaths.

    The sample corpus, its WordPiece vocabulary, an MNLI-format set and a SQuAD
    set built from the corpus; SQuAD v1.1 files are the 2.0 set without its
    unanswerable questions.
    """
    corpus = tiny_data.make_corpus(data_dir)
    vocab = os.path.join(data_dir, "vocab.txt")
    mnli_dir = os.path.join(data_dir, "MNLI")
    squad_dir = os.path.join(data_dir, "squad")
    if not os.path.exists(vocab):
        sample_data.build_vocab(corpus, vocab + ".incomplete")
        os.replace(vocab + ".incomplete", vocab)
    if not os.path.exists(os.path.join(mnli_dir, "dev_mismatched.tsv")):
        sample_data.build_mnli_sample(corpus, mnli_dir)
    if not os.path.exists(os.path.join(squad_dir, "dev-v2.0.json")):
        sample_data.build_squad_sample(corpus, squad_dir)
    sample_data.write_squad_v1(squad_dir)
    return plan_lib.DataPaths(corpus=corpus, mnli_dir=mnli_dir, squad_dir=squad_dir, vocab_file=vocab)


def data_paths(options):
    """The DataPaths of the run; tiny scale without data makes the sample data.

    Raises:
      ValueError: naming the flag that lacks a path or points at the wrong thing.
    """
    given = dict(corpus=options.corpus, mnli_dir=options.mnli_dir, squad_dir=options.squad_dir,
                 vocab_file=options.vocab_file, eval_corpus=options.eval_corpus)
    if options.scale == "tiny" and not any(v for k, v in given.items() if k != "eval_corpus"):
        return make_tiny_data(os.path.join(options.output_dir, "sample_data"))
    scale = scales.SCALES[options.scale]
    # With held-out text, fine-tuning is optional: its columns say "not run" without the task's data.
    required = (("corpus", "vocab_file", "eval_corpus") if scale.held_out
                else ("corpus", "mnli_dir", "squad_dir", "vocab_file"))
    learned_vocab_size = None
    if scale.learned_vocab_size and not options.vocab_file:
        required = tuple(name for name in required if name != "vocab_file")
        learned_vocab_size = scale.learned_vocab_size
        given["vocab_file"] = plan_lib.learned_vocab_path(options.output_dir)
    missing = [name for name in required if not given[name]]
    if missing and not options.dry_run:
        raise ValueError("--scale=%s needs %s (where the data lives)."
                         % (options.scale, ", ".join("--" + name for name in missing)))
    for name in ("mnli_dir", "squad_dir"):
        if given[name] and not options.dry_run and not os.path.isdir(given[name]):
            raise ValueError("--%s=%s is not a directory." % (name, given[name]))
    # Checked now, not when fine-tuning starts after hours of pre-training.
    for name, files in (("mnli_dir", MNLI_FILES), ("squad_dir", SQUAD_FILES)):
        missing_files = [f for f in files if given[name] and not options.dry_run
                         and not os.path.exists(os.path.join(given[name], f))]
        if missing_files:
            raise ValueError("--%s=%s lacks %s." % (name, given[name], ", ".join(missing_files)))
    if options.vocab_file and not options.dry_run and not os.path.exists(options.vocab_file):
        raise ValueError("--vocab_file=%s does not exist." % options.vocab_file)
    # A dry run without a required path writes a shell variable (${CORPUS}, ...), for the cluster to set.
    paths = {name: value or ("${%s}" % name.upper() if name in required else None) for name, value in given.items()}
    return plan_lib.DataPaths(do_lower_case=options.do_lower_case, learned_vocab_size=learned_vocab_size, **paths)


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


def plan_markdown(steps, experiment, scale, vocab_size):
    """plan.md: per row the exact parameter count, compute and checkpoint size; then the steps."""
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
        label = row.label() if scale.shrink == 1 else "d=%d h=%d d_p=%d (paper: %s)" % (
            config.hidden_size, config.num_attention_heads, config.attention_head_size, row.label())
        lines.append("| %s | %s, I=%d, %d layers | %s | %s | %s | %s model, %s with Adam slots |" % (
            row.name, label, config.intermediate_size, config.num_hidden_layers, "{:,}".format(params),
            " / ".join(compute_cost.format_flops(f) for f in per_step), compute_cost.format_flops(total),
            compute_cost.format_bytes(compute_cost.checkpoint_bytes(config)),
            compute_cost.format_bytes(compute_cost.checkpoint_bytes(config, with_adam_slots=True))))
    if scale.name == "paper" and vocab_size == PAPER_VOCAB_SIZE:
        lines += ["", "The paper compares families at equal parameter counts. The standard model "
                  "(16 heads of size d/h, I = 4d) matching each row's count "
                  "(studies.bert_tables.parameter_matching, d in multiples of 16):", "",
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


class TableStudy(Study):
    """One table or figure of the paper's BERT experiments (experiments.EXPERIMENTS[name])."""

    options = BertTableOptions
    scales = scales.SCALES

    def __init__(self, name):
        self.name = name
        self.title = experiments.get(name).title

    def programs(self):
        return {
            "create_vocab.py": (vocab_builder.CreateVocabOptions, vocab_builder.run),
            "create_pretraining_data.py": (CreatePretrainingDataOptions, pipeline.run),
            "unigram_baseline.py": (unigram_baseline.UnigramBaselineOptions, unigram_baseline.run),
            "run_pretraining.py": (pretraining.PretrainingOptions, pretraining.run),
            "run_classifier.py": (classification.ClassifierOptions, classification.run),
            "run_squad.py": (squad.SquadOptions, squad.run),
            "probe_attention_rank.py": (attention_rank.ProbeAttentionRankOptions, attention_rank.run_from_options),
        }

    def plan(self, options):
        # Looked up now, so that a test can swap in smaller experiments and scales.
        experiment, scale = experiments.get(self.name), scale_of(scales.SCALES, options)
        paths = data_paths(options)
        # A learned vocabulary is not there yet when the configs are written: they take the size asked
        # for. A corpus too small for it gives fewer entries, and the rows past them are never an input or a target.
        vocab_size = paths.learned_vocab_size or vocab_size_of(paths.vocab_file)
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
            return (results, results_lib.markdown(results, SCALE_NOTES[scale.name]),
                    plots.write(output_dir, results))

        minutes = (scale.minutes or {}).get(self.name)
        expected = ("Expected time: about %d minutes for %d steps on 2 CPU cores (measured at %s scale; "
                    "finished steps are skipped)." % (minutes, len(steps), scale.name) if minutes else "")
        return Plan(steps, PLAN_NOTES, plan_markdown(steps, experiment, scale, vocab_size), report, expected)


STUDIES = tuple(TableStudy(name) for name in experiments.EXPERIMENTS)
