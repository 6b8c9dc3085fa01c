"""PNG plots of an experiment in the paper's form (matplotlib, Agg backend: no display needed).

Tables: SQuAD F1, SQuAD EM and MNLI against the column the table varies
(heads or head size), ours on the left axis, the paper's published numbers
on the right (dashed): the scales differ by orders of magnitude at tiny
scale, so only the shapes compare. Figure 2: the same metrics against
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


def _table(results, path):
    varies = results["varies"]
    rows = results["rows"]
    xs = [row[varies] for row in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (ours_key, paper_key, title) in zip(axes, METRICS):
        ours = [_mean(row[ours_key]) for row in rows]
        ax.plot([x for x, y in zip(xs, ours) if y is not None], [y for y in ours if y is not None],
                "o-", color="tab:blue", label="ours (%s scale)" % results["scale"])
        ax.set_xlabel(_X_LABELS[varies])
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
    figure.suptitle(results["title"], fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 0.95))
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
    figure.suptitle(results["title"], fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(output_dir, results):
    """Writes <experiment>.png; returns its path."""
    path = os.path.join(output_dir, "%s.png" % results["experiment"])
    temporary = path + ".incomplete.png"  # savefig picks the format from the suffix.
    (_figure2 if results["varies"] == "params" else _table)(results, temporary)
    os.replace(temporary, path)
    return path
