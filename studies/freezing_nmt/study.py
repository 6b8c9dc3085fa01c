"""The translation experiment freezing_nmt as a study of reproduce_paper_tables.py.

Tiny scale without data flags runs on the project's synthetic language pair
(nmt/synthetic.py with a quarter of its lexicon, about 70 source words:
10,000 training pairs, 200 dev, 200 test), written once under
output_dir/sample_data/nmt.
"""

import dataclasses
import os
from typing import Optional

from file_system import text_files
from nmt import synthetic, task
from nmt.parameter_groups import count_parameters
from options import option
import outputs
from reproduction.study import Plan, Study, expected_time, scale_of
from studies.freezing_nmt import experiments as nmt_experiments, report as nmt_report, widths

EXPERIMENT = "freezing_nmt"
SCALE_NOTES = {
    "paper": "Paper scale: transformer-big, -base and -tiny presets, trained to the best dev BLEU.",
    "small": "**Small scale** (transformer-tiny's shape at 3 + 1 layers and 8 heads, with d, d_p and the FFN "
             "divided by 4: d = 64, d_p = 8, FFN 384; a 4k joint vocabulary; batches of 128 pairs, trained to "
             "convergence: a dev BLEU every 250 steps, stopping after 5 without a better one and no rise beyond "
             "noise in the last 10, at most 20000 steps; seeds 1, 2 and 3 for the baseline and the one-frozen "
             "rows) on a real corpus given by path: what one machine with 2 CPU cores can show of the paper's "
             "findings. Not the paper's numbers: those need its corpora and models at paper scale.",
    "small_d32": "**Small scale, d = 32** (the small scale's data, 3 + 1 layers, 8 heads, vocabulary, schedule, "
                 "stopping rule and seeds, with d = 32, d_p = 4, FFN 192): the narrow end of the width ladder; "
                 "the baseline and the one-frozen rows only.",
    "small_d128": "**Small scale, d = 128** (the small scale's data, 3 + 1 layers, 8 heads, vocabulary, schedule, "
                  "stopping rule and seeds, with d = 128, d_p = 16, FFN 768): the wide end of the width ladder; "
                  "the baseline, the one-frozen rows, and embeddings with the FFN frozen (attention alone "
                  "trainable, one seed).",
    "tiny": "**Tiny scale** (transformer-tiny with d, d_p and the FFN divided by 4, 2 + 2 layers, 400 steps "
            "of 128 pairs on the project's synthetic language pair): this shows that every run lands in the table and "
            "the plot. It does not reproduce the paper's findings; only real data at paper scale can.",
}
PLAN_NOTES = (
    "# Unset paths (${NMT_TRAIN_TSV}, ${NMT_DEV_TSV}, ${NMT_TEST_TSV}) come from the environment.",
    "# The first row learns the joint SentencePiece vocabulary; the others read it from its folder.",
)
DATA_SPLITS = ("train", "dev", "test")
SYNTHETIC_SIZES = dict(num_train=10000, num_dev=200, num_test=200, lexicon_scale=0.25)


@dataclasses.dataclass(kw_only=True)
class NmtStudyOptions(task.NmtDataOptions):
    """freezing_nmt's flags: run_translation.py's data flags, and the vocabulary every row shares."""

    vocab_file: Optional[str] = option(
        None, "freezing_nmt: a SentencePiece model (default: the first row learns one from the training text).")
    width_results: Optional[str] = option(
        None, "freezing_nmt: other widths' finished reports (their results.json or output folders), comma-separated: "
        "the report adds each frozen row's share of its baseline's BLEU against the width, with a verdict on "
        "whether a frozen component costs less in a wider model (results.md, freezing_nmt_widths.png).", new=True)


def data_flags(options):
    """run_translation.py's data flags for every row: the given ones, the tiny synthetic pair, or placeholders.

    Raises:
      ValueError: naming what a real run at paper scale lacks, or a given file flag that names no file (checked
        here, not in the first run's log; a dry run may name files of another machine).
    """
    given = {name: getattr(options, "%s_%s" % (split, kind)) for split in DATA_SPLITS
             for kind in ("tsv", "src", "tgt") for name in ["%s_%s" % (split, kind)]}
    given = {name: value for name, value in given.items() if value}
    languages = dict(source_language=options.source_language, target_language=options.target_language)
    if given:
        for split in DATA_SPLITS:
            if not (given.get(split + "_tsv") or (given.get(split + "_src") and given.get(split + "_tgt"))):
                raise ValueError("--experiment=%s needs --%s_tsv, or --%s_src with --%s_tgt."
                                 % (EXPERIMENT, split, split, split))
        for name, value in given.items():
            if not options.dry_run:
                text_files.expand(value, "--" + name)
        return dict(given, **languages)
    if options.scale == "tiny":
        directory = os.path.join(options.output_dir, "sample_data", "nmt")
        paths = synthetic.Task(*(os.path.join(directory, "%s.tsv" % split) for split in DATA_SPLITS))
        if not all(os.path.exists(p) for p in paths):
            paths = synthetic.write_task(directory, seed=0, **SYNTHETIC_SIZES)
        return dict(train_tsv=paths.train, dev_tsv=paths.dev, test_tsv=paths.test, **languages)
    if not options.dry_run:
        raise ValueError("--experiment=%s at --scale=%s needs --train_tsv, --dev_tsv and --test_tsv (or the "
                         "*_src/*_tgt pairs)." % (EXPERIMENT, options.scale))
    return dict(train_tsv="${NMT_TRAIN_TSV}", dev_tsv="${NMT_DEV_TSV}", test_tsv="${NMT_TEST_TSV}", **languages)


def plan_markdown(steps, scale):
    """plan.md: per row its model at this scale, exact parameter counts and trainable shares; then the steps."""
    vocab = scale.vocab_size
    lines = ["# Plan: %s at %s scale" % (nmt_report.TITLE, scale.name), "",
             "Parameters at V = %d (the joint vocabulary this scale learns), the shared embedding table and "
             "output bias included." % vocab, "",
             "| row | frozen | d (d_p, FFN), layers | parameters | trainable | trainable params |",
             "|---|---|---|---|---|---|"]
    for row in nmt_experiments.rows(scale):
        config = scale.config(row).replace(vocab_size=vocab)
        total = count_parameters(config)["total"]
        share = nmt_experiments.trainable_share(config, row.freeze)
        lines.append("| %s | %s | %d (%d, %d), %d+%d | %s | %.1f%% | %s |" % (
            row.name, row.freeze or "—", config.hidden_size, config.attention_head_size, config.intermediate_size,
            config.num_encoder_layers, config.num_decoder_layers, "{:,}".format(total), 100 * share,
            "{:,}".format(round(total * share))))
    if len(scale.seeds) > 1:
        lines += ["", "Seeds %s for %s; seed %d for the other rows." % (
            ", ".join(str(s) for s in scale.seeds),
            ", ".join(row.name for row in nmt_experiments.rows(scale) if len(scale.row_seeds(row)) > 1),
            scale.seeds[0])]
    lines += ["", "Schedule: each preset's (run_translation.py --preset), batch %d sentence pairs, at most %d steps, "
              "a dev BLEU evaluation every %d steps%s." % (
                  scale.train_batch_size, scale.num_train_steps, scale.save_checkpoints_steps,
                  ", stopping after %d without a better one and no rise beyond noise in the last %d" % (
                      scale.early_stopping_patience, 2 * scale.early_stopping_patience)
                  if scale.early_stopping_patience else ""),
              "", "What the paper states: %s" % nmt_experiments.PAPER_STATEMENT, "", "## Steps", ""]
    lines += ["%d. `%s` — %s" % (i, s.name, s.program) for i, s in enumerate(steps, 1)]
    return "\n".join(lines) + "\n"


class NmtStudy(Study):
    """freezing_nmt: Bogoychev (2021)'s frozen random components in translation."""

    name = EXPERIMENT
    title = nmt_report.TITLE
    options = NmtStudyOptions
    scales = nmt_experiments.SCALES

    def programs(self):
        return {"run_translation.py": (task.NmtOptions, task.run)}

    def plan(self, options):
        # Looked up now, so that a test can swap in a smaller scale.
        scale = scale_of(nmt_experiments.SCALES, options)
        output_dir = options.output_dir
        flags = data_flags(options)
        os.makedirs(os.path.join(output_dir, "configs"), exist_ok=True)
        # float32 at both scales unless --dtype: see studies/lm/study.py.
        steps = nmt_experiments.build(scale, flags, options.vocab_file, output_dir, options.dtype or "float32")
        for row in nmt_experiments.rows(scale):
            outputs.write_text(nmt_experiments.config_path(output_dir, row), scale.config(row).to_json_string())

        others = widths.read(options.width_results.split(",")) if options.width_results else []

        def collect():
            results = nmt_report.collect(scale, output_dir)
            text = nmt_report.markdown(results, SCALE_NOTES[scale.name])
            if others:
                results["widths"] = widths.trend([results] + others)
                text += widths.markdown(results["widths"])
                widths.plot(output_dir, results["widths"], scale.name)
            return results, text, nmt_report.plot(output_dir, results)

        return Plan(steps, PLAN_NOTES, plan_markdown(steps, scale), collect,
                    expected_time(scale.minutes_per_run, len(steps), scale.name, "Multi30k"))


STUDIES = (NmtStudy(),)
