"""Results of a language-model experiment: results.json's rows, results.md with the paper's words beside our
numbers, and the PNG plot (matplotlib, Agg backend).

Figs. 1, 3a and 4: test perplexity against heads and against parameters, one
line per family. Fig. 3b: perplexity against head size, one line per head
count. freezing_lm: a bar of perplexity per frozen preset, labelled with the
trainable share of parameters. A scale that stops early (small_converged) adds
a panel of learning curves: every run's held-out perplexity against epochs,
one colour per row, one line per seed, a dot at its best checkpoint; its
table gives each row's epochs to that checkpoint.
"""

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

from freezing import PARAMETERS_FILE  # noqa: E402
from studies.lm import experiments as lm_experiments  # noqa: E402
from lm.config import LmConfig  # noqa: E402
from lm.parameter_groups import count_parameters  # noqa: E402
from reproduction.summary import mean_std_text, read_key_values as _read_key_values, seed_figures  # noqa: E402
from training import early_stopping  # noqa: E402


def collect(experiment, scale, output_dir):
    """Every row's shape, parameters, trainable share and perplexities, from its runs' files.

    With several seeds a row's perplexities and bits per character are their
    mean over the seeds (each seed's figures under "seeds", the sample standard
    deviation under "<key>_std"). A run that stopped early also gives its
    epochs to the best held-out checkpoint, whether the stopping rule ended it
    (else the step cap did) and its learning curve ([epochs, perplexity] per
    evaluation).
    """
    directories = lm_experiments.run_directories(experiment, scale, output_dir)
    rows = []
    for row in scale.rows(experiment):
        runs = []
        for seed, directory in zip(scale.row_seeds(row), directories[row.name]):
            evaluation = _read_key_values(os.path.join(directory, "eval_results.txt"))
            test = _read_key_values(os.path.join(directory, "test_results.txt"))
            runs.append(dict(seed=seed, run_dir=directory, eval_perplexity=evaluation["perplexity"],
                             test_perplexity=test["perplexity"], test_bits_per_character=test["bits_per_character"],
                             test_tokens=int(test["num_tokens"]), global_step=int(test["global_step"])))
            state = early_stopping.read_state(directory)
            if state:
                runs[-1].update(epochs_to_best=state["best_epochs"], stopped=state["stopped"],
                                curve=[[point["epochs"], point["perplexity"]] for point in state["history"]])
        directory = runs[0]["run_dir"]
        config = LmConfig.from_json_file(os.path.join(directory, "lm_config.json"))
        with open(os.path.join(directory, PARAMETERS_FILE), encoding="utf-8") as f:
            report = json.load(f)
        keys = ("eval_perplexity", "test_perplexity", "test_bits_per_character")
        if all("curve" in run for run in runs):
            keys += ("epochs_to_best",)
        figures = seed_figures(runs, keys)
        rows.append(dict(
            name=row.name, family=row.family, freeze=row.freeze, run_dir=directory,
            hidden_size=row.hidden_size, num_heads=row.num_heads, head_size=row.effective_head_size,
            intermediate_size=row.intermediate_size,
            run_config=dict(hidden_size=config.hidden_size, head_size=config.attention_head_size,
                            intermediate_size=config.intermediate_size, num_layers=config.num_hidden_layers),
            params=dict(run_scale=count_parameters(config)["total"],
                        paper_scale=lm_experiments.parameters(row)),
            trainable_share=report["trainable_share"], test_tokens=runs[0]["test_tokens"],
            global_step=runs[0]["global_step"], seeds=runs, **figures))
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
    converged = all("epochs_to_best" in row for row in results["rows"])
    if converged:
        header.append("epochs to best")
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results["rows"]:
        run = row["run_config"]
        cells = [row["name"], row["family"], "%d (%d)" % (row["hidden_size"], run["hidden_size"]), row["num_heads"],
                 "%d (%d)" % (row["head_size"], run["head_size"]),
                 "%d (%d)" % (row["intermediate_size"], run["intermediate_size"]), row["freeze"] or "—",
                 "%.3fM" % (row["params"]["run_scale"] / 1e6), "%.1fM" % (row["params"]["paper_scale"] / 1e6),
                 "%.1f%%" % (100 * row["trainable_share"]), mean_std_text(row, "eval_perplexity", 2),
                 mean_std_text(row, "test_perplexity", 2), mean_std_text(row, "test_bits_per_character", 3)]
        if converged:
            capped = not all(run["stopped"] for run in row["seeds"])
            cells.append(mean_std_text(row, "epochs_to_best", 1) + ("*" if capped else ""))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "Sizes are the paper's, with the run's own in parentheses."]
    if converged:
        lines += ["Perplexities are those of each run's best held-out checkpoint; 'epochs to best' counts the passes "
                  "over the training sequences up to it (* a run reached the step cap before the stopping rule "
                  "ended it: it may still have been improving)."]
    several = [row for row in results["rows"] if len(row["seeds"]) > 1]
    seeds = [run["seed"] for run in several[0]["seeds"]] if several else []
    if several and len(several) < len(results["rows"]):
        lines += ["Perplexities and bits per character of %s: mean ± sample standard deviation over seeds %s of "
                  "run_lm.py --random_seed (the initialisation, frozen values included, and the data order); the "
                  "other rows ran with seed %d." % (", ".join(row["name"] for row in several),
                                                    ", ".join(str(s) for s in seeds), seeds[0])]
    elif several:
        lines += ["Perplexities and bits per character: mean ± sample standard deviation over %d seeds (%s) of "
                  "run_lm.py --random_seed, which sets the initialisation and the data order." % (
                      len(seeds), ", ".join(str(s) for s in seeds))]
    return "\n".join(lines) + "\n"


def _families(rows):
    return list(dict.fromkeys(row["family"] for row in rows))


def _span(values):
    """"128" or "128–192"."""
    low, high = min(values), max(values)
    return "%d" % low if low == high else "%d–%d" % (low, high)


def _as_run(rows):
    """The sizes the rows ran with: "d = 128, d_p = 16" (ranges where they differ)."""
    return "d = %s, d_p = %s" % (_span([row["run_config"]["hidden_size"] for row in rows]),
                                 _span([row["run_config"]["head_size"] for row in rows]))


def _title(results):
    """The figure's title (the paper's sizes) and a line with the sizes as run."""
    rows = results["rows"]
    run = rows[0]["run_config"]
    return "%s\nthe paper's sizes; %s scale as run: layers %d, %s, FFN %s, seeds per row: %s" % (
        results["title"], results["scale"], run["num_layers"], _as_run(rows),
        _span([row["run_config"]["intermediate_size"] for row in rows]), _span([len(row["seeds"]) for row in rows]))


def _lines(ax, rows, x_of, xlabel, logx=False):
    for family in _families(rows):
        own = [row for row in rows if row["family"] == family]
        points = sorted((x_of(row), row["test_perplexity"], row["test_perplexity_std"] or 0) for row in own)
        x, y, spread = zip(*points)
        ax.errorbar(x, y, yerr=spread if any(spread) else None, fmt="o-", capsize=3,
                    label="%s (as run: %s)" % (family, _as_run(own)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test perplexity")
    if logx:
        ax.set_xscale("log", base=2)
        ticks = sorted({x_of(row) for row in rows})
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
        ax.minorticks_off()
    ax.grid(alpha=0.3)


def _freezing(results, path):
    rows = results["rows"]
    figure, ax = plt.subplots(figsize=(9, 4.2))
    names = [row["name"] for row in rows]
    bars = ax.bar(names, [row["test_perplexity"] for row in rows], color="tab:blue")
    # Error bars (the seeds' std) only on the rows run with several seeds; each bar says how many it has.
    seeded = [(index, row) for index, row in enumerate(rows) if row["test_perplexity_std"] is not None]
    if seeded:
        ax.errorbar([index for index, _ in seeded], [row["test_perplexity"] for _, row in seeded],
                    yerr=[row["test_perplexity_std"] for _, row in seeded], fmt="none", ecolor="black", capsize=3)
    for bar, row in zip(bars, rows):
        count = len(row["seeds"])
        ax.annotate("%.0f%% trainable\n%d seed%s" % (100 * row["trainable_share"], count, "" if count == 1 else "s"),
                    (bar.get_x() + bar.get_width() / 2, bar.get_height() + (row["test_perplexity_std"] or 0)),
                    ha="center", va="bottom", fontsize=8)
    ax.margins(y=0.15)  # room above the tallest bar for its label
    ax.set_ylabel("test perplexity")
    ax.set_xlabel("frozen at random initialisation")
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_title(_title(results), fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _curves(ax, rows):
    """Every run's held-out perplexity against epochs: a colour per row, a line per seed, a dot at its best."""
    colours = plt.get_cmap("tab10")
    for index, row in enumerate(rows):
        for number, run in enumerate(row["seeds"]):
            epochs, perplexity = zip(*run["curve"])
            ax.plot(epochs, perplexity, color=colours(index % 10), linewidth=1, alpha=0.8,
                    label=row["name"] if number == 0 else None)
            ax.plot([run["epochs_to_best"]], [run["eval_perplexity"]], "o", color=colours(index % 10), markersize=3)
    ax.set_yscale("log")  # early perplexities are several times the last: log keeps the end readable
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_xlabel("epochs (passes over the training sequences); a dot marks each run's best")
    ax.set_ylabel("held-out perplexity (one line per seed)")
    ax.set_title("learning curves", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)


def plot(output_dir, results):
    """Writes <experiment>.png in output_dir; returns its path."""
    path = os.path.join(output_dir, "%s.png" % results["experiment"])
    rows = results["rows"]
    if results["varies"] == "freeze":
        _freezing(results, path)
        return path
    curves = all("curve" in run for row in rows for run in row["seeds"])
    figure, axes = plt.subplots(1, 3 if curves else 2, figsize=(18 if curves else 12, 4.6 if curves else 4.2))
    if curves:
        _curves(axes[2], rows)
    if results["varies"] == "head_size":
        _lines(axes[0], rows, lambda row: row["run_config"]["head_size"], "head size d_p, as run", logx=True)
    else:
        _lines(axes[0], rows, lambda row: row["num_heads"], "heads h (as run)", logx=True)
    _lines(axes[1], rows, lambda row: row["params"]["run_scale"] / 1e6, "parameters (millions, as run)")
    axes[0].legend(fontsize=8)
    figure.suptitle(_title(results), fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.93))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
