"""Results of `lm_sequence_length`: per n the two rows' test perplexities, the standard row's gap, the plot.

The gap at n is the standard row's mean test perplexity minus the fixed row's
(> 0: the fixed head size is better); its yardstick is the results page's:
twice the larger of the two rows' sample standard deviations over seeds. The
gap "grows with n" when the gap at the longest n exceeds the gap at the
shortest by more than twice the largest standard deviation of the four rows.
"""

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

from freezing import PARAMETERS_FILE  # noqa: E402
from lm.config import LmConfig  # noqa: E402
from lm.parameter_groups import count_parameters  # noqa: E402
from reproduction.summary import mean_std_text, read_key_values, seed_figures  # noqa: E402
from studies.lm_sequence_length import experiments  # noqa: E402
from training import early_stopping  # noqa: E402

TITLE = "Sequence length n against the head size: the standard d_p = d/h against a fixed d_p >= n, matched parameters"
KEYS = ("eval_perplexity", "test_perplexity", "test_bits_per_character", "epochs_to_best", "best_step")


def _run(directory, seed):
    evaluation = read_key_values(os.path.join(directory, "eval_results.txt"))
    test = read_key_values(os.path.join(directory, "test_results.txt"))
    state = early_stopping.read_state(directory)
    return dict(seed=seed, run_dir=directory, eval_perplexity=evaluation["perplexity"],
                test_perplexity=test["perplexity"], test_bits_per_character=test["bits_per_character"],
                best_step=int(test.get("best_step", test["global_step"])), epochs_to_best=state["best_epochs"], stopped=state["stopped"],
                curve=[[point["global_step"], point["perplexity"]] for point in state["history"]])


def _yardstick(*rows):
    stds = [row["test_perplexity_std"] for row in rows if row["test_perplexity_std"] is not None]
    return 2 * max(stds) if stds else None


def collect(scale, output_dir):
    """Every row's model, parameters and perplexities (mean and std over seeds), and the gap at each n."""
    rows = []
    for row in experiments.rows(scale):
        runs = [_run(experiments.run_directory(output_dir, row, seed), seed) for seed in scale.seeds]
        config = LmConfig.from_json_file(os.path.join(runs[0]["run_dir"], "lm_config.json"))
        with open(os.path.join(runs[0]["run_dir"], PARAMETERS_FILE), encoding="utf-8") as f:
            trainable_share = json.load(f)["trainable_share"]
        rows.append(dict(name=row.name, length=row.length, model=row.model.name, family=row.model.family,
                         batch_size=scale.batch_size(row.length), hidden_size=config.hidden_size,
                         num_heads=config.num_attention_heads, head_size=config.attention_head_size,
                         intermediate_size=config.intermediate_size, num_layers=config.num_hidden_layers,
                         params=count_parameters(config)["total"], trainable_share=trainable_share, seeds=runs,
                         **seed_figures(runs, KEYS)))
    gaps = []
    for length in scale.lengths:
        fixed, standard = [row for row in rows if row["length"] == length]
        yardstick = _yardstick(fixed, standard)
        gap = standard["test_perplexity"] - fixed["test_perplexity"]
        gaps.append(dict(length=length, gap=gap, yardstick=yardstick,
                         verdict=None if yardstick is None else "fixed better" if gap > yardstick else
                         "standard better" if -gap > yardstick else "within the seeds' spread"))
    growth = gaps[-1]["gap"] - gaps[0]["gap"]
    yardstick = _yardstick(*[row for row in rows if row["length"] in (scale.lengths[0], scale.lengths[-1])])
    return dict(experiment="lm_sequence_length", title=TITLE, scale=scale.name, tokens_per_step=scale.tokens_per_step,
                paper_statement=experiments.PAPER_STATEMENT, rows=rows, gaps=gaps,
                growth=dict(shortest=scale.lengths[0], longest=scale.lengths[-1], change=growth, yardstick=yardstick,
                            grows=None if yardstick is None else growth > yardstick))


def _seeds_text(runs):
    seeds = [str(run["seed"]) for run in runs]
    if len(seeds) == 1:
        return "one run per row (seed %s)" % seeds[0]
    return "mean ± sample standard deviation over seeds %s" % ", ".join(seeds)


def markdown(results, scale_note):
    lines = ["# %s" % results["title"], "", scale_note, "", "**What the paper states**: %s" % results["paper_statement"],
             "", "Every run reads packed text: %d tokens per step at every n (batch = %d / n), so only the context "
             "length changes. Perplexity is per sub-word token, of the best held-out checkpoint; %s." % (
                 results["tokens_per_step"], results["tokens_per_step"], _seeds_text(results["rows"][0]["seeds"])),
             "", "| n | row | d | h | d_p | FFN | params | batch | eval ppl | test ppl | test bits/char | epochs to best |",
             "|" + "---|" * 12]
    for row in results["rows"]:
        capped = not all(run["stopped"] for run in row["seeds"])
        lines.append("| %d | %s | %d | %d | %d | %d | %.3fM | %d | %s | %s | %s | %s%s |" % (
            row["length"], row["model"], row["hidden_size"], row["num_heads"], row["head_size"],
            row["intermediate_size"], row["params"] / 1e6, row["batch_size"], mean_std_text(row, "eval_perplexity", 2),
            mean_std_text(row, "test_perplexity", 2), mean_std_text(row, "test_bits_per_character", 3),
            mean_std_text(row, "epochs_to_best", 1), "*" if capped else ""))
    lines += ["", "(* a run reached the step cap before the stopping rule ended it.)", "",
              "The standard row's gap (its test perplexity minus the fixed row's; > 0: the fixed head size is better) "
              "against the yardstick (twice the larger standard deviation of the two rows):", "",
              "| n | gap | yardstick | reading |", "|---|---|---|---|"]
    for gap in results["gaps"]:
        lines.append("| %d | %+.2f | %s | %s |" % (gap["length"], gap["gap"],
                                                  "—" if gap["yardstick"] is None else "%.2f" % gap["yardstick"],
                                                  gap["verdict"] or "one seed: no yardstick"))
    growth = results["growth"]
    if growth["grows"] is None:
        reading = "one seed per row: no yardstick to tell"
    else:
        reading = ("it grows" if growth["grows"] else
                   "it does not grow beyond the seeds' spread (a finding: the argument predicts it should)")
    lines += ["", "From n = %d to n = %d the gap changes by %+.2f against a yardstick of %s: %s." % (
        growth["shortest"], growth["longest"], growth["change"],
        "—" if growth["yardstick"] is None else "%.2f" % growth["yardstick"], reading)]
    return "\n".join(lines) + "\n"


def plot(output_dir, results):
    """Writes lm_sequence_length.png: perplexity against n per row, the gap against n, the learning curves."""
    path = os.path.join(output_dir, "lm_sequence_length.png")
    rows = results["rows"]
    lengths = [gap["length"] for gap in results["gaps"]]
    figure, axes = plt.subplots(1, 3, figsize=(18, 4.8))
    for model in dict.fromkeys(row["model"] for row in rows):
        own = [row for row in rows if row["model"] == model]
        axes[0].errorbar(lengths, [row["test_perplexity"] for row in own],
                         yerr=[row["test_perplexity_std"] or 0 for row in own], fmt="o-", capsize=3,
                         label="%s: d = %d, h = %d, d_p = %d, %.2fM params" % (
                             model, own[0]["hidden_size"], own[0]["num_heads"], own[0]["head_size"],
                             own[0]["params"] / 1e6))
        for row in own:  # each seed as a dot
            axes[0].plot([row["length"]] * len(row["seeds"]), [run["test_perplexity"] for run in row["seeds"]], ".",
                         color="grey", markersize=3)
    axes[0].set_ylabel("test perplexity (mean ± std over seeds; dots: seeds)")
    axes[0].legend(fontsize=8)
    axes[1].errorbar(lengths, [gap["gap"] for gap in results["gaps"]],
                     yerr=[gap["yardstick"] or 0 for gap in results["gaps"]], fmt="o-", capsize=3, color="tab:red")
    axes[1].axhline(0, color="black", linewidth=0.8)
    axes[1].set_ylabel("standard - fixed test perplexity (bars: yardstick)")
    for ax in axes[:2]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths)
        ax.set_xticklabels([str(n) for n in lengths])
        ax.minorticks_off()
        ax.set_xlabel("sequence length n (tokens per step fixed)")
        ax.grid(alpha=0.3)
    colours = plt.get_cmap("tab10")
    for index, row in enumerate(rows):
        for number, run in enumerate(row["seeds"]):
            steps, perplexity = zip(*run["curve"])
            axes[2].plot(steps, perplexity, color=colours(index % 10), linewidth=1,
                         linestyle="-" if row["model"] == "fixed" else "--", label=row["name"] if number == 0 else None)
    axes[2].set_yscale("log")
    axes[2].yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    axes[2].yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    axes[2].set_xlabel("training steps (%d tokens each)" % results["tokens_per_step"])
    axes[2].set_ylabel("held-out perplexity (one line per seed)")
    axes[2].legend(fontsize=7, ncol=2)
    axes[2].grid(alpha=0.3, which="both")
    figure.suptitle("%s\n%s scale as run: %d layers, seeds per row: %d" % (
        results["title"], results["scale"], rows[0]["num_layers"], len(rows[0]["seeds"])), fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.92))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
