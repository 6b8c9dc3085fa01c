"""Results of `freezing_nmt`: results.json's rows, results.md with the paper's findings beside ours, and the plot."""

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

from freezing import PARAMETERS_FILE  # noqa: E402
from nmt.config import NmtConfig  # noqa: E402
from nmt.parameter_groups import count_parameters  # noqa: E402
from studies.freezing_nmt import experiments as nmt_experiments  # noqa: E402
from training import early_stopping  # noqa: E402
from reproduction.summary import mean_std_text, read_key_values as _read_key_values, seed_figures  # noqa: E402

TITLE = "Bogoychev (2021), translation: parameter groups frozen at their random initialisation"


FIGURES = ("dev_bleu", "test_bleu", "test_chrf", "test_perplexity", "epochs_to_best")


def _run(directory, seed, patience):
    """One run's figures from its eval_results.txt and test_results.txt."""
    state = early_stopping.read_state(directory)
    dev = _read_key_values(os.path.join(directory, "eval_results.txt"))
    test = _read_key_values(os.path.join(directory, "test_results.txt"))
    return dict(seed=seed, run_dir=directory, dev_bleu=dev["bleu"], dev_chrf=dev["chrf"], test_bleu=test["bleu"],
                test_chrf=test["chrf"], test_perplexity=test["perplexity"],
                best_step=int(dev.get("best_step", dev["global_step"])),
                epochs_to_best=dev.get("best_epochs", dev["epochs"]),
                last_evaluated_step=int(dev.get("last_evaluated_step", dev["global_step"])),
                # The best dev BLEU came at the last evaluation: the run was still improving when it ended.
                still_improving=dev.get("evaluations_since_best", 0) == 0,
                # Every dev evaluation's (epochs, BLEU): the learning curve.
                dev_curve=[[point["epochs"], point["bleu"]]
                           for point in state.get("history", [])],
                # Stopped by an older rule that today's (--early_stopping_patience with the trend) would not follow.
                stopped_too_soon=early_stopping.stopped_too_soon(state, "bleu", True, patience))


def _sizes(config):
    """d, d_p, FFN and "encoder+decoder" layers of an NmtConfig."""
    return dict(hidden_size=config.hidden_size, head_size=config.attention_head_size,
                intermediate_size=config.intermediate_size,
                layers="%d+%d" % (config.num_encoder_layers, config.num_decoder_layers))


def collect(scale, output_dir):
    """Every row's model, trainable share, BLEU, chrF and epochs to its best dev BLEU, from its runs' files.

    With several seeds a figure is their mean, its sample standard deviation
    under "<figure>_std" (None for one run) and each run under "seeds".
    """
    rows = []
    for row in nmt_experiments.rows(scale):
        runs = [_run(nmt_experiments.directory_of(output_dir, row, scale, seed), seed, scale.early_stopping_patience)
                for seed in scale.row_seeds(row)]
        directory = runs[0]["run_dir"]
        config = NmtConfig.from_json_file(os.path.join(directory, "nmt_config.json"))
        with open(os.path.join(directory, PARAMETERS_FILE), encoding="utf-8") as f:
            report = json.load(f)
        figures = seed_figures(runs, FIGURES)
        paper_config = nmt_experiments.PAPER.config(row).replace(vocab_size=nmt_experiments.PAPER_VOCAB_SIZE)
        rows.append(dict(
            name=row.name, preset=row.preset, freeze=row.freeze, run_dir=directory,
            ffn_divisor=row.ffn_divisor, head_size_divisor=row.head_size_divisor,
            run_config=dict(_sizes(config), initializer=config.initializer), paper_config=_sizes(paper_config),
            params=dict(run_scale=count_parameters(config)["total"],
                        paper_scale=count_parameters(paper_config)["total"]),
            trainable_share=report["trainable_share"],
            paper_scale_trainable_share=nmt_experiments.trainable_share(paper_config, row.freeze),
            best_step=runs[0]["best_step"], last_evaluated_step=runs[0]["last_evaluated_step"],
            still_improving=any(run["still_improving"] for run in runs), seeds=runs, **figures))
    baselines = {row["preset"]: row["test_bleu"] for row in rows if not row["freeze"]}
    for row in rows:
        base = baselines.get(row["preset"])
        row["share_of_baseline_bleu"] = row["test_bleu"] / base if base else None
    return dict(experiment="freezing_nmt", title=TITLE, scale=scale.name, paper_statement=nmt_experiments.PAPER_STATEMENT,
                rows=rows)


def markdown(results, scale_note):
    lines = ["# %s" % results["title"], "", scale_note, "",
             "**What the paper states** (its tables are not in any public text we can reach; these are its "
             "words): %s" % results["paper_statement"], "",
             "BLEU and chrF are sacreBLEU's on the detokenized beam-search output of the checkpoint with "
             "the best dev BLEU; 'epochs' are the passes over the training pairs up to that checkpoint "
             "(marked * where a run's best came at its last evaluation: it was still improving when its steps "
             "ran out); "
             "'of baseline' is the row's test BLEU over its preset's unfrozen row's.", ""]
    header = ["row", "frozen", "d (d_p, FFN), layers", "d (d_p, FFN), layers (paper)", "params (ours)",
              "params (paper scale)", "trainable", "trainable (paper scale)", "dev BLEU", "test BLEU", "of baseline",
              "test chrF", "epochs"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results["rows"]:
        share = row["share_of_baseline_bleu"]
        cells = [row["name"], row["freeze"] or "—"] + [
            "%d (%d, %d), %s" % (sizes["hidden_size"], sizes["head_size"], sizes["intermediate_size"], sizes["layers"])
            for sizes in (row["run_config"], row["paper_config"])] + [
            "%.2fM" % (row["params"]["run_scale"] / 1e6), "%.1fM" % (row["params"]["paper_scale"] / 1e6),
            "%.1f%%" % (100 * row["trainable_share"]), "%.1f%%" % (100 * row["paper_scale_trainable_share"]),
            mean_std_text(row, "dev_bleu", 2), mean_std_text(row, "test_bleu", 2),
            "—" if share is None else "%.0f%%" % (100 * share), mean_std_text(row, "test_chrf", 1),
            mean_std_text(row, "epochs_to_best", 2) + ("*" if row["still_improving"] else "")]
        lines.append("| " + " | ".join(cells) + " |")
    too_soon = ["%s seed %d" % (row["name"], run["seed"]) for row in results["rows"] for run in row["seeds"]
                if run.get("stopped_too_soon")]
    if too_soon:
        lines += ["", "Stopped too soon: %s stopped under an older rule (patience alone), while today's rule (patience "
                  "and no rise beyond noise) would have gone on: their figures are lower bounds, and they are to be "
                  "run again." % ", ".join(too_soon)]
    several = [row for row in results["rows"] if len(row["seeds"]) > 1]
    if several:
        seeds = [run["seed"] for run in several[0]["seeds"]]
        lines += ["", "BLEU, chrF and epochs of %s: mean ± sample standard deviation over seeds %s of "
                  "run_translation.py --random_seed (the initialisation, the frozen values and the data order); "
                  "the other rows ran with seed %d." % (", ".join(row["name"] for row in several),
                                                        ", ".join(str(s) for s in seeds), seeds[0])]
    return "\n".join(lines) + "\n"


def _sizes_as_run(results):
    """"d = 64 (d_p = 8, FFN 384), 3+1 layers" of the unshrunk rows, as they ran."""
    run = results["rows"][0]["run_config"]
    return "d = %d (d_p = %d, FFN %d), %s layers" % (run["hidden_size"], run["head_size"], run["intermediate_size"],
                                                    run["layers"])


def _label_sides(points, span):
    """(row, +1 above or -1 below) for each row's label, in order of trainable share.

    A label goes above its point unless the nearest point labelled before it, within 20 points of
    share and a tenth of the BLEU `span`, took that side: then below, so that neighbours do not overlap.
    """
    placed = []  # (share in %, BLEU, side)
    for row in sorted(points, key=lambda r: r["trainable_share"]):
        x, y = 100 * row["trainable_share"], row["test_bleu"]
        near = [(abs(x - px), side) for px, py, side in placed
                if abs(x - px) < 20 and abs(y - py) < 0.1 * (span or 1.0)]
        placed.append((x, y, -min(near)[1] if near else 1))
        yield row, placed[-1][2]


def plot(output_dir, results):
    """freezing_nmt.png: test BLEU against the trainable share, and every run's dev BLEU against epochs.

    Left, one colour per preset; right, one colour per row, one line per seed, the
    best evaluation marked. Returns the path.
    """
    path = os.path.join(output_dir, "freezing_nmt.png")
    figure, (ax, curves) = plt.subplots(1, 2, figsize=(16, 6), gridspec_kw=dict(width_ratios=(1, 1)))
    span = max(r["test_bleu"] for r in results["rows"]) - min(r["test_bleu"] for r in results["rows"])
    for preset in dict.fromkeys(row["preset"] for row in results["rows"]):
        points = [row for row in results["rows"] if row["preset"] == preset]
        ax.errorbar([100 * r["trainable_share"] for r in points], [r["test_bleu"] for r in points],
                    yerr=[r["test_bleu_std"] or 0 for r in points], fmt="o", capsize=3, label=preset)
        for r, side in _label_sides(points, span):
            label = (r["freeze"] or "none").replace(",", "+")
            if r["ffn_divisor"] > 1 or r["head_size_divisor"] > 1:
                label = r["name"].split("/")[-1].replace("_", " ")
            ax.annotate(label, (100 * r["trainable_share"], r["test_bleu"]), fontsize=7,
                        xytext=(3, 4 if side > 0 else -11), textcoords="offset points")
    ax.set_xlim(-2, 118)  # room for the labels of the rows at 100%
    ax.set_xlabel("trainable parameters (%); each point is labelled with what is frozen")
    ax.set_ylabel("test BLEU at the best dev checkpoint" + (" (mean ± std where several seeds ran)" if any(
        len(r["seeds"]) > 1 for r in results["rows"]) else ""))
    ax.set_title("test BLEU against the trainable share", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    colours = plt.get_cmap("tab10")
    for index, row in enumerate(results["rows"]):
        for number, run in enumerate(row["seeds"]):
            if not run["dev_curve"]:
                continue
            epochs, bleu = zip(*run["dev_curve"])
            curves.plot(epochs, bleu, color=colours(index % 10), linewidth=1, alpha=0.8,
                        linestyle="-" if index < 10 else "--", label=row["name"].split("/")[-1] if number == 0 else None)
            curves.plot([run["epochs_to_best"]], [run["dev_bleu"]], "o", color=colours(index % 10), markersize=3)
    curves.set_xlabel("epochs (passes over the training pairs); a dot marks each run's best dev BLEU")
    curves.set_ylabel("dev BLEU (one line per seed)")
    curves.set_title("learning curves: dev BLEU at every evaluation", fontsize=9)
    curves.grid(alpha=0.3)
    curves.legend(fontsize=7, ncol=2)
    figure.suptitle("%s\n%s scale as run: %s" % (results["title"], results["scale"], _sizes_as_run(results)),
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
