"""Results of a language-model experiment: what results.json holds, and results.md with the paper's words beside our numbers."""

import json
import os

from freezing import PARAMETERS_FILE
from modeling.lm_config import LmConfig
from modeling.lm_parameter_groups import count_lm_parameters
from reproduction import lm_experiments, lm_plan


def _read_key_values(path):
    with open(path, encoding="utf-8") as f:
        return {key: float(value) for key, value in (line.strip().split(" = ", 1) for line in f if " = " in line)}


def collect(experiment, scale, output_dir):
    """Every row's shape, parameters, trainable share and perplexities, from its run's files."""
    directories = lm_plan.run_directories(experiment, scale, output_dir)
    rows = []
    for row in experiment.rows:
        directory = directories[row.name]
        config = LmConfig.from_json_file(os.path.join(directory, "lm_config.json"))
        with open(os.path.join(directory, PARAMETERS_FILE), encoding="utf-8") as f:
            report = json.load(f)
        evaluation = _read_key_values(os.path.join(directory, "eval_results.txt"))
        test = _read_key_values(os.path.join(directory, "test_results.txt"))
        rows.append(dict(
            name=row.name, family=row.family, freeze=row.freeze, run_dir=directory,
            hidden_size=row.hidden_size, num_heads=row.num_heads, head_size=row.effective_head_size,
            intermediate_size=row.intermediate_size,
            run_config=dict(hidden_size=config.hidden_size, head_size=config.attention_head_size,
                            intermediate_size=config.intermediate_size, num_layers=config.num_hidden_layers),
            params=dict(run_scale=count_lm_parameters(config)["total"],
                        paper_scale=lm_experiments.parameters(row)),
            trainable_share=report["trainable_share"],
            eval_perplexity=evaluation["perplexity"], test_perplexity=test["perplexity"],
            test_bits_per_character=test["bits_per_character"], test_tokens=int(test["num_tokens"]),
            global_step=int(test["global_step"])))
    return dict(experiment=experiment.name, title=experiment.title, scale=scale.name, varies=experiment.varies,
                paper_statement=experiment.paper_statement, rows=rows)


def markdown(results, scale_note):
    lines = ["# %s" % results["title"], "", scale_note, "",
             "**What the paper states** (it publishes this figure only as a plot, so there are no "
             "numbers to set beside ours): %s" % results["paper_statement"], "",
             "Perplexity is per sub-word token (exp of the mean negative log-likelihood, end-of-sentence "
             "included); bits per character compare across vocabularies. 'params (paper scale)' is the "
             "row at 6 layers and a 32k vocabulary.", ""]
    header = ["row", "family", "d", "h", "d_p", "FFN", "frozen", "params (ours)", "params (paper scale)",
              "trainable", "eval ppl", "test ppl", "test bits/char"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results["rows"]:
        run = row["run_config"]
        cells = [row["name"], row["family"], "%d (%d)" % (row["hidden_size"], run["hidden_size"]), row["num_heads"],
                 "%d (%d)" % (row["head_size"], run["head_size"]),
                 "%d (%d)" % (row["intermediate_size"], run["intermediate_size"]), row["freeze"] or "—",
                 "%.3fM" % (row["params"]["run_scale"] / 1e6), "%.1fM" % (row["params"]["paper_scale"] / 1e6),
                 "%.1f%%" % (100 * row["trainable_share"]), "%.2f" % row["eval_perplexity"],
                 "%.2f" % row["test_perplexity"], "%.3f" % row["test_bits_per_character"]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "Sizes are the paper's, with the run's own in parentheses."]
    return "\n".join(lines) + "\n"

