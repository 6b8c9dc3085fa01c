"""The sequence-length study as a study of reproduce_paper_tables.py (`--experiment=lm_sequence_length`).

It reads the language-model studies' text flags (`--train_file`, `--eval_file`,
`--test_file`, `--vocab_file`); at tiny scale without them it uses their sample text.
"""

import os

from lm import task
from lm.parameter_groups import count_parameters
import outputs
from reproduction.study import Plan, Study, expected_time, scale_of
from studies.lm import study as lm_study
from studies.lm_sequence_length import experiments, report

EXPERIMENT = "lm_sequence_length"
SCALE_NOTES = {
    "paper": "Paper scale: the lm1b_paper model (6 layers, d = 256, V = 32k) and schedule on LM1B, at n = 32, 64, 128 "
             "and 256, each run stopped once 10 held-out evaluations bring no lower perplexity.",
    "small_converged": "**Small scale, trained to convergence** (lm_figure1's small converged scale: 3 layers, a 4k "
                       "vocabulary, warm-up then 1/sqrt(step) decay, held-out perplexity every 400 steps with the "
                       "trend-aware early stop, at most 40000 steps; three seeds) on real English text, at n = 16, 32, "
                       "64 and 128. Not the paper's setting: it never varies n alone.",
    "tiny": "**Tiny scale** (2 layers, d divided by 4, n = 8 and 16, 200 steps at most): this shows that every run "
            "lands in the table and the plot. It answers nothing about n.",
}


def plan_markdown(steps, scale):
    """plan.md: the two models at this scale with their exact parameter counts, the lengths, then the steps."""
    vocab = scale.base.vocab_size
    lines = ["# Plan: %s at %s scale" % (report.TITLE, scale.name), "",
             "Parameters at V = %d, embeddings and output bias included; the same two models at every n." % vocab, "",
             "| model | d | h | d_p | FFN | layers | parameters |", "|---|---|---|---|---|---|---|"]
    for model in experiments.MODELS:
        config = scale.config(model).replace(vocab_size=vocab)
        lines.append("| %s | %d | %d | %d | %d | %d | %s |" % (
            model.name, config.hidden_size, config.num_attention_heads, config.attention_head_size,
            config.intermediate_size, config.num_hidden_layers, "{:,}".format(count_parameters(config)["total"])))
    base = scale.base
    lines += ["", "Lengths n = %s, packed text, %d tokens per step (batch %s); learning rate %g (%s, %d warm-up), "
              "held-out perplexity every %d steps, stopping after %d evaluations without a lower one once the trend "
              "is flat (at most %d steps); seeds %s." % (
                  ", ".join(str(n) for n in scale.lengths), scale.tokens_per_step,
                  ", ".join(str(scale.batch_size(n)) for n in scale.lengths), base.learning_rate,
                  base.learning_rate_schedule, base.num_warmup_steps, base.save_checkpoints_steps,
                  base.early_stopping_patience, base.num_train_steps, ", ".join(str(s) for s in scale.seeds)),
              "", "What the paper states: %s" % experiments.PAPER_STATEMENT, "", "## Steps", ""]
    lines += ["%d. `%s` — %s" % (i, s.name, s.program) for i, s in enumerate(steps, 1)]
    return "\n".join(lines) + "\n"


class SequenceLengthStudy(Study):
    """lm_sequence_length: the fixed head size's advantage against n."""

    name = EXPERIMENT
    title = report.TITLE
    options = lm_study.LmStudyOptions
    scales = experiments.SCALES

    def programs(self):
        return {"run_lm.py": (task.LmOptions, task.run)}

    def plan(self, options):
        # Looked up now, so that a test can swap in a smaller scale.
        scale = scale_of(experiments.SCALES, options)
        paths = lm_study.data_paths(options)
        output_dir = options.output_dir
        os.makedirs(os.path.join(output_dir, "configs"), exist_ok=True)
        steps = experiments.build(scale, paths, output_dir, options.dtype or "float32")
        for model in experiments.MODELS:
            outputs.write_text(experiments.config_path(output_dir, model), scale.config(model).to_json_string())

        def collect():
            results = report.collect(scale, output_dir)
            return results, report.markdown(results, SCALE_NOTES[scale.name]), report.plot(output_dir, results)

        return Plan(steps, lm_study.PLAN_NOTES, plan_markdown(steps, scale), collect,
                    expected_time(scale.minutes_per_run, len(steps), scale.name, "the campaign's runs"))


STUDIES = (SequenceLengthStudy(),)
