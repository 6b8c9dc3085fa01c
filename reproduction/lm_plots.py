"""PNG plots of a language-model experiment (matplotlib, Agg backend).

Figs. 1, 3a and 4: test perplexity against heads and against parameters, one
line per family. Fig. 3b: perplexity against head size, one line per head
count. freezing_lm: a bar of perplexity per frozen preset, labelled with the
trainable share of parameters.
"""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position


def _families(rows):
    return list(dict.fromkeys(row["family"] for row in rows))


def _lines(ax, rows, x_of, xlabel, logx=False):
    for family in _families(rows):
        points = sorted((x_of(row), row["test_perplexity"]) for row in rows if row["family"] == family)
        ax.plot(*zip(*points), "o-", label=family)
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
    for bar, row in zip(bars, rows):
        ax.annotate("%.0f%% trainable" % (100 * row["trainable_share"]), (bar.get_x() + bar.get_width() / 2,
                    bar.get_height()), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("test perplexity")
    ax.set_xlabel("frozen at random initialisation")
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_title("%s\n(%s scale)" % (results["title"], results["scale"]), fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(output_dir, results):
    """Writes <experiment>.png in output_dir; returns its path."""
    path = os.path.join(output_dir, "%s.png" % results["experiment"])
    rows = results["rows"]
    if results["varies"] == "freeze":
        _freezing(results, path)
        return path
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    if results["varies"] == "head_size":
        _lines(axes[0], rows, lambda row: row["head_size"], "head size d_p", logx=True)
    else:
        _lines(axes[0], rows, lambda row: row["num_heads"], "heads h", logx=True)
    _lines(axes[1], rows, lambda row: row["params"]["run_scale"] / 1e6, "parameters (millions, as run)")
    axes[0].legend(fontsize=8)
    figure.suptitle("%s (%s scale)" % (results["title"], results["scale"]), fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.93))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
