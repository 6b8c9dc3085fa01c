"""The language-model experiments as studies of reproduce_paper_tables.py: lm_figure1/3a/3b/4, freezing_lm.

Tiny scale without text flags makes its text from the bundled sample corpus
(the standard library's docstrings, one sentence per line): every 20th line
held out for evaluation, the next one for the test set, the rest for training.
"""

import dataclasses
import os
from typing import Optional

from file_system import text_files
from lm import task
from lm.parameter_groups import count_parameters
from options import option
import outputs
from reproduction import tiny_data
from reproduction.study import Plan, Study, expected_time, scale_of
from studies.lm import experiments as lm_experiments, report

SCALE_NOTES = {
    "paper": "Paper scale: 6 layers, LM1B, the lm1b_paper schedule (250k steps).",
    "small": "**Small scale** (3 layers; d, d_p and the FFN halved; sequences of up to 32 sub-words; 1200 steps of "
             "64 sequences with a 4k-piece vocabulary learned from the training text; three seeds per row, in "
             "freezing_lm for the unfrozen and the embeddings-frozen rows) on real English text given by path: "
             "what one machine with 2 CPU cores can show of the paper's direction "
             "in about an hour. Not the paper's numbers: those need LM1B at paper scale.",
    "small_converged": "**Small scale, trained to convergence** (the small scale's text, models, parameter matching, "
                       "batches, peak learning rate and warm-up; warm-up then 1/sqrt(step) decay; held-out "
                       "perplexity every 400 steps, stopping once 5 evaluations bring no lower one and the last 10 "
                       "show no fall beyond their noise, at most 40000 steps; the test perplexity is that of the "
                       "best held-out checkpoint): what the small models can reach, not what they reach in an "
                       "equal small budget. Not the paper's numbers: those need LM1B at paper scale.",
    "tiny_converged": "**Tiny scale, with early stopping** (the tiny scale's sizes; held-out perplexity every 20 "
                      "steps, patience 2, at most 200 steps): this shows that the curves, the best checkpoint and "
                      "the report work. It does not reproduce the paper's findings.",
    "tiny": "**Tiny scale** (2 layers; d, d_p and the FFN divided by 4; 120 steps on the standard "
            "library's docstrings with a 2k-piece vocabulary): this shows that every run lands in the "
            "table and the plot. It does not reproduce the paper's findings; only LM1B at paper scale can.",
}
PLAN_NOTES = (
    "# Unset paths (${LM_TRAIN_FILE}, ${LM_EVAL_FILE}, ${LM_TEST_FILE}) come from the environment.",
    "# The first row learns the SentencePiece vocabulary; the others read it from its folder.",
)
HELD_OUT_EVERY = 20


@dataclasses.dataclass(kw_only=True)
class LmStudyOptions(task.LmTextOptions):
    """The language-model studies' flags: run_lm.py's text flags, and the vocabulary every row shares."""

    vocab_file: Optional[str] = option(
        None, "lm_* and freezing_lm: a SentencePiece model (default: the first row learns one from the training "
        "text).")


def split_sample_text(corpus, data_dir):
    """train.txt, eval.txt and test.txt from the sample corpus (once); returns their paths."""
    paths = {name: os.path.join(data_dir, "lm_%s.txt" % name) for name in ("train", "eval", "test")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    with open(corpus, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    parts = {"train": [], "eval": [], "test": []}
    for index, line in enumerate(lines):
        position = index % HELD_OUT_EVERY
        parts["eval" if position == 0 else "test" if position == 1 else "train"].append(line)
    for name, path in paths.items():
        outputs.write_text(path, "\n".join(parts[name]) + "\n")
    return paths


def data_paths(options):
    """The LmDataPaths of the run: the flags, the tiny sample text, or a dry run's placeholders.

    Raises:
      ValueError: naming the flags a real run at paper scale lacks, or a given file flag that names no file
        (checked here, not in the first run's log; a dry run may name files of another machine).
    """
    given = dict(train_file=options.train_file, eval_file=options.eval_file, test_file=options.test_file)
    if options.tfds_data_dir or all(given.values()):
        for name, value in given.items():
            if value and not options.dry_run:
                text_files.expand(value, "--" + name)
        return lm_experiments.LmDataPaths(tfds_data_dir=options.tfds_data_dir, vocab_file=options.vocab_file,
                                          **given)
    if options.scale.startswith("tiny") and not any(given.values()):  # Small scale never reads the sample text.
        corpus = tiny_data.make_corpus(os.path.join(options.output_dir, "sample_data"))
        split = split_sample_text(corpus, os.path.join(options.output_dir, "sample_data"))
        return lm_experiments.LmDataPaths(train_file=split["train"], eval_file=split["eval"],
                                          test_file=split["test"], vocab_file=options.vocab_file)
    if not options.dry_run:
        missing = [name for name, value in given.items() if not value]
        raise ValueError("--experiment=%s needs %s, or --tfds_data_dir." % (
            options.experiment, ", ".join("--" + name for name in missing)))
    return lm_experiments.LmDataPaths(train_file=options.train_file or "${LM_TRAIN_FILE}",
                                      eval_file=options.eval_file or "${LM_EVAL_FILE}",
                                      test_file=options.test_file or "${LM_TEST_FILE}", vocab_file=options.vocab_file)


def plan_markdown(steps, experiment, scale, output_dir):
    """plan.md: per row its model at this scale and the exact parameter count; then the steps."""
    vocab = scale.vocab_size
    lines = ["# Plan: %s at %s scale" % (experiment.title, scale.name), "",
             "Parameters at V = %d (the vocabulary this scale learns), embeddings and output bias included." % vocab,
             "", "| row | family | frozen | model | parameters | paper-scale parameters | run |",
             "|---|---|---|---|---|---|---|"]
    directories = lm_experiments.run_directories(experiment, scale, output_dir)
    for row in scale.rows(experiment):
        config = scale.config(row).replace(vocab_size=vocab)
        lines.append("| %s | %s | %s | d=%d h=%d d_p=%d FFN=%d, %d layers | %s | %s | %s |" % (
            row.name, row.family, row.freeze or "—", config.hidden_size, config.num_attention_heads,
            config.attention_head_size, config.intermediate_size, config.num_hidden_layers,
            "{:,}".format(count_parameters(config)["total"]), "{:,}".format(lm_experiments.parameters(row)),
            ", ".join(os.path.basename(d) for d in directories[row.name])))
    schedule = ("run_lm.py --preset=%s" % scale.preset if scale.preset else
                "batch %d sequences of up to %d tokens, %d steps (%d warm-up), learning rate %g (%s)" % (
                    scale.train_batch_size, scale.max_seq_length, scale.num_train_steps, scale.num_warmup_steps,
                    scale.learning_rate, scale.learning_rate_schedule))
    if scale.early_stopping_patience:
        schedule += ("; held-out perplexity every %d steps, stopping after %d evaluations without a lower one and "
                     "no fall beyond noise in the last %d (at most %d steps); test perplexity of the best "
                     "checkpoint" % (scale.save_checkpoints_steps, scale.early_stopping_patience,
                                     2 * scale.early_stopping_patience, scale.num_train_steps))
    if len(scale.seeds) > 1:
        schedule += "; seeds %s (run_lm.py --random_seed)" % ", ".join(str(s) for s in scale.seeds)
    lines += ["", "Schedule: %s." % schedule, "", "What the paper states: %s" % experiment.paper_statement,
              "", "## Steps", ""]
    lines += ["%d. `%s` — %s" % (i, s.name, s.program) for i, s in enumerate(steps, 1)]
    return "\n".join(lines) + "\n"


class LmStudy(Study):
    """One language-model experiment (lm_experiments.EXPERIMENTS[name])."""

    options = LmStudyOptions
    scales = lm_experiments.SCALES

    def __init__(self, name):
        self.name = name
        self.title = lm_experiments.EXPERIMENTS[name].title

    def programs(self):
        return {"run_lm.py": (task.LmOptions, task.run)}

    def plan(self, options):
        # Looked up now, so that a test can swap in smaller experiments and scales.
        experiment, scale = lm_experiments.EXPERIMENTS[self.name], scale_of(lm_experiments.SCALES, options)
        paths = data_paths(options)
        output_dir = options.output_dir
        os.makedirs(os.path.join(output_dir, "configs"), exist_ok=True)
        # float32 at both scales: on a CPU without native bfloat16 these small models ran 2.5x slower in
        # bfloat16, and with it they are too small to gain much (not measured there).
        dtype = options.dtype or "float32"
        steps = lm_experiments.build(experiment, scale, paths, output_dir, dtype)
        for row in scale.rows(experiment):
            outputs.write_text(lm_experiments.config_path(output_dir, row), scale.config(row).to_json_string())

        def collect():
            results = report.collect(experiment, scale, output_dir)
            return results, report.markdown(results, SCALE_NOTES[scale.name]), report.plot(output_dir, results)

        return Plan(steps, PLAN_NOTES, plan_markdown(steps, experiment, scale, output_dir), collect,
                    expected_time(scale.minutes_per_run, len(steps), scale.name, scale.minutes_measured_on,
                                  scale.minutes_side_by_side))


STUDIES = tuple(LmStudy(name) for name in lm_experiments.EXPERIMENTS)
