"""PNG plots of an experiment in the paper's form (matplotlib, Agg backend: no display needed).

Tables: SQuAD F1, SQuAD EM and MNLI against the column the table varies
(heads or head size), ours on the left axis, the paper's published numbers
on the right (dashed): the scales differ by orders of magnitude at tiny
scale, so only the shapes compare. With held-out pre-training numbers (small
scale): held-out masked-LM accuracy and loss against the varied column (mean
± std over pre-training seeds), and the mean logit rank against its bound
min(d_p, n), with the unigram baseline (word frequencies alone) drawn on the
accuracy and loss axes; the fine-tuning plot, when fine-tuning ran, goes beside it as
<experiment>_fine_tuning.png. Figure 2: the same metrics against
parameter count, one line per family (standard head size d/h vs fixed head
size), ours on top, the paper's published points below.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

METRICS = (("squad_f1", "squad_f1", "SQuAD F1"), ("squad_em", "squad_em", "SQuAD EM"),
           ("mnli_m", "mnli", "MNLI-m accuracy"))
_X_LABELS = {"num_heads": "heads h", "head_size": "head size d_p"}


def _mean(summary):
    return None if summary is None else summary["mean"]


def sizes_as_run(results):
    """"<scale> scale as run: L layers, d = .., h = .., d_p = .., I = .." from the rows' configs.

    A size the rows vary is listed once per value, in ascending order ("d_p = 8, 16, 32, 64").
    """
    def values(get):
        return ", ".join(str(value) for value in sorted({get(row) for row in results["rows"]}))

    return "%s scale as run: %s layers, d = %s, h = %s, d_p = %s, I = %s" % (
        results["scale"], values(lambda row: row["config"]["num_hidden_layers"]),
        values(lambda row: row["config"]["hidden_size"]), values(lambda row: _run_value(row, "num_heads")),
        values(lambda row: _run_value(row, "head_size")), values(lambda row: row["config"]["intermediate_size"]))


def _title(results, extra=""):
    """The paper's title (its sizes, so labelled) over a line with the sizes as run."""
    return "%s (the paper's sizes)\n%s%s" % (results["title"], sizes_as_run(results), extra)


def _table(results, path):
    varies = results["varies"]
    rows = results["rows"]
    xs = [row[varies] for row in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (ours_key, paper_key, title) in zip(axes, METRICS):
        ours = [_mean(row[ours_key]) for row in rows]
        ax.plot([x for x, y in zip(xs, ours) if y is not None], [y for y in ours if y is not None],
                "o-", color="tab:blue", label="ours (%s scale)" % results["scale"])
        ax.set_xlabel("%s, the paper's (as run: %s)" % (
            _X_LABELS[varies], ", ".join(str(_run_value(row, varies)) for row in rows)))
        ax.set_ylabel("ours", color="tab:blue")
        ax.set_xticks(xs)
        paper = [(x, row["paper"][paper_key][0]) for x, row in zip(xs, rows) if row["paper"]]
        if paper:
            twin = ax.twinx()
            twin.plot(*zip(*paper), "s--", color="tab:orange", label="paper (published)")
            twin.set_ylabel("paper", color="tab:orange")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    handles = {}
    for ax in figure.axes:
        for line in ax.get_lines():
            handles.setdefault(line.get_label(), line)
    figure.legend(list(handles.values()), list(handles), loc="lower center", ncol=2)
    figure.suptitle(_title(results), fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 0.92))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _figure2(results, path):
    families = sorted({row["family"] for row in results["rows"]})
    figure, axes = plt.subplots(2, 3, figsize=(13, 7))
    for column, (ours_key, paper_key, title) in enumerate(METRICS):
        top, bottom = axes[0][column], axes[1][column]
        for family in families:
            rows = sorted((r for r in results["rows"] if r["family"] == family),
                          key=lambda r: r["params"]["run_scale"])
            points = [(r["params"]["run_scale"] / 1e6, _mean(r[ours_key])) for r in rows
                      if r[ours_key] is not None]
            if points:
                top.plot(*zip(*points), "o-", label=family)
            published = [(r["paper"]["params_m"], r["paper"][paper_key][0]) for r in rows if r["paper"]]
            if published:
                bottom.plot(*zip(*published), "s--", label=family)
        top.set_title("%s — ours (%s scale)" % (title, results["scale"]))
        top.set_xlabel("parameters (M, as run)")
        bottom.set_title("%s — paper (published)" % title)
        bottom.set_xlabel("parameters (M)")
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
    figure.suptitle(_title(results), fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _run_value(row, varies):
    """The row's head count or head size as run (the config's), not the paper's."""
    config = row["config"]
    if varies == "head_size":
        return config["head_size"] or config["hidden_size"] // config["num_attention_heads"]
    return config["num_attention_heads"]


def _pretraining(results, path):
    varies = results["varies"]
    rows = [row for row in results["rows"] if "held_out" in row]
    xs = [_run_value(row, varies) for row in rows]
    figure, grid = plt.subplots(2, 3, figsize=(14, 8))
    axes, curves = grid[0], grid[1]
    for ax, (key, title) in zip(axes, (("masked_lm_accuracy", "held-out masked-LM accuracy"),
                                       ("masked_lm_loss", "held-out masked-LM loss"))):
        means = [row["held_out"][key]["mean"] for row in rows]
        spread = [row["held_out"][key]["std"] for row in rows]
        ax.errorbar(xs, means, yerr=spread, fmt="o-", capsize=3, color="tab:blue")
        ax.set_title(title, fontsize=9)
    ranked = [row for row in rows if "mean_logit_rank" in row]
    axes[2].plot([_run_value(row, varies) for row in ranked], [row["mean_logit_rank"] for row in ranked], "o-",
                 label="mean logit rank")
    axes[2].plot([_run_value(row, varies) for row in ranked], [row["rank_bound"] for row in ranked], "s--",
                 color="grey", label="bound min(d_p, n)")
    axes[2].set_title("attention logit rank (probe)", fontsize=9)
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.set_xlabel(_X_LABELS[varies] + ", as run")
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    colours = plt.get_cmap("tab10")
    for index, row in enumerate(rows):
        for number, curve in enumerate(row.get("held_out_curves", [])):
            if not curve:
                continue
            steps, losses, accuracies = zip(*curve)
            label = "%s (d_p = %d as run)" % (row["name"], _run_value(row, "head_size"))
            for ax, values in ((curves[0], losses), (curves[1], accuracies)):
                ax.plot(steps, values, "o-", markersize=2, linewidth=1, color=colours(index % 10),
                        label=label if number == 0 else None)
    unigram = results.get("unigram")
    if unigram:
        for ax, key in ((axes[0], "accuracy"), (axes[1], "loss"), (curves[0], "loss"), (curves[1], "accuracy")):
            ax.axhline(unigram[key], linestyle=":", color="black", linewidth=1,
                       label="unigram baseline (accuracy %.3f, loss %.2f)"
                       % (unigram["accuracy"], unigram["loss"]))
        axes[0].legend(fontsize=7, loc="center")
    for ax, title in ((curves[0], "held-out masked-LM loss"), (curves[1], "held-out masked-LM accuracy")):
        ax.set_title("%s at every checkpoint\n(one line per seed)" % title, fontsize=9)
        ax.set_xlabel("pre-training step")
        ax.grid(alpha=0.3)
    curves[2].axis("off")  # The curves' legend goes in the empty panel, clear of the lines.
    curves[2].legend(*curves[0].get_legend_handles_labels(), loc="center left", fontsize=8)
    seeds = len(rows[0]["held_out"]["masked_lm_accuracy"]["per_seed"]) if rows else 0
    figure.suptitle(_title(results, "; pre-training (mean ± std over %d seeds)" % seeds), fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _save(draw, results, path):
    temporary = path + ".incomplete.png"  # savefig picks the format from the suffix.
    draw(results, temporary)
    os.replace(temporary, path)


def write(output_dir, results):
    """Writes <experiment>.png (and <experiment>_fine_tuning.png, see the module docstring); returns its path."""
    path = os.path.join(output_dir, "%s.png" % results["experiment"])
    if any("held_out" in row for row in results["rows"]):
        _save(_pretraining, results, path)
        if any(row["mnli_m"] or row["squad_f1"] for row in results["rows"]):
            _save(_table, results, os.path.join(output_dir, "%s_fine_tuning.png" % results["experiment"]))
        return path
    _save(_figure2 if results["varies"] == "params" else _table, results, path)
    return path
