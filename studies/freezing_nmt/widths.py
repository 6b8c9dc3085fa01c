"""Across widths: each frozen row's share of its baseline's BLEU against the model width d.

The freezing_nmt report of one scale (one width) sets beside its own results
those of other widths' finished reports (their results.json, given with
--width_results): per width and frozen setting, the share of the baseline's
test BLEU, from the seeds paired (seed s of the frozen row over seed s of the
baseline), mean ± sample standard deviation. The paper says bigger models cope
better with frozen components: that reads "reproduced" for a setting only when
its cost (1 - share) falls from the narrowest width to the widest by more than
the yardstick, twice the larger of the two widths' standard deviations; "not
reproduced" when it rises by that much; else "inconclusive". A width where the
setting ran with one seed borrows the yardstick of its seeded settings.
"""

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

from reproduction.summary import summarize  # noqa: E402

PLOT_FILE = "freezing_nmt_widths.png"


def read(paths, flag="--width_results"):
    """The results dicts of other widths' reports.

    Raises:
      ValueError: naming `flag` and the file, when one is missing or not a freezing_nmt report.
    """
    found = []
    for path in paths:
        if os.path.isdir(path):
            path = os.path.join(path, "results.json")
        if not os.path.exists(path):
            raise ValueError("%s: %s does not exist; expected the results.json of a finished freezing_nmt report."
                             % (flag, path))
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        if results.get("experiment") != "freezing_nmt":
            raise ValueError("%s: %s is a report of %r, not of freezing_nmt." % (flag, path, results.get("experiment")))
        found.append(results)
    return found


def _width(results):
    """(d, {frozen setting: {"mean", "std", "seeds", "trainable_share"}}) of one report's unshrunk rows."""
    rows = [row for row in results["rows"] if row["ffn_divisor"] == 1 and row["head_size_divisor"] == 1]
    baseline = next(row for row in rows if not row["freeze"])
    base_bleu = {run["seed"]: run["test_bleu"] for run in baseline["seeds"]}
    settings = {}
    for row in rows:
        if not row["freeze"]:
            continue
        # A seed whose baseline scored no BLEU at all gives no share.
        shares = [run["test_bleu"] / base_bleu[run["seed"]] for run in row["seeds"] if base_bleu.get(run["seed"])]
        summary = summarize(shares) or dict(mean=None, std=None)
        settings[row["freeze"]] = dict(mean=summary["mean"], std=summary["std"] if len(shares) > 1 else None,
                                       seeds=len(shares), trainable_share=row["trainable_share"])
    return baseline["run_config"]["hidden_size"], settings


def _yardstick_of(settings, setting):
    entry = settings[setting]
    if entry["std"] is not None:
        return entry["std"]
    seeded = [other["std"] for other in settings.values() if other["std"] is not None]
    return max(seeded) if seeded else None


def trend(all_results):
    """{"widths": [d, ...], "settings": {setting: {"points": [...], "verdict", "cost_change", "yardstick"}}}.

    Args:
      all_results: freezing_nmt results dicts, one per width, in any order.
    """
    widths = sorted((_width(results) for results in all_results), key=lambda pair: pair[0])
    if len({d for d, _ in widths}) != len(widths):
        raise ValueError("--width_results: two reports have the same width d = %s."
                         % ", ".join(str(d) for d, _ in widths))
    found = {}
    for setting in dict.fromkeys(s for _, settings in widths for s in settings):
        points = [dict(hidden_size=d, **settings[setting]) for d, settings in widths if setting in settings]
        entry = dict(points=points, verdict=None, cost_change=None, yardstick=None)
        ends = [(d, settings) for d, settings in widths
                if setting in settings and settings[setting]["mean"] is not None]
        if len(ends) >= 2:
            (_, narrow), (_, wide) = ends[0], ends[-1]
            change = (1 - wide[setting]["mean"]) - (1 - narrow[setting]["mean"])
            sticks = [_yardstick_of(narrow, setting), _yardstick_of(wide, setting)]
            yardstick = 2 * max(sticks) if None not in sticks else None
            entry.update(cost_change=change, yardstick=yardstick)
            if yardstick is not None:
                entry["verdict"] = ("reproduced" if -change > yardstick else
                                    "not reproduced" if change > yardstick else "inconclusive")
        found[setting] = entry
    return dict(widths=[d for d, _ in widths], settings=found)


def markdown(widths_trend):
    lines = ["", "## Across widths", "",
             "Each frozen setting's test BLEU as a share of its width's baseline (seed s over seed s; mean ± sample "
             "standard deviation over the seeds), and the change of its cost (1 - share) from the narrowest width to "
             "the widest against the yardstick (twice the larger standard deviation of the two). The paper says "
             "bigger models cope better: its reading needs the cost to fall by more than the yardstick.", "",
             "| frozen | " + " | ".join("d = %d" % d for d in widths_trend["widths"]) +
             " | cost change | yardstick | reading |", "|---|" + "---|" * (len(widths_trend["widths"]) + 3)]
    for setting, entry in widths_trend["settings"].items():
        by_width = {point["hidden_size"]: point for point in entry["points"]}
        cells = []
        for d in widths_trend["widths"]:
            point = by_width.get(d)
            cells.append("—" if point is None else "no share: baseline BLEU 0" if point["mean"] is None else
                         "%.0f%%%s (%.0f%% trainable)" % (
                100 * point["mean"], "" if point["std"] is None else " ± %.0f" % (100 * point["std"]),
                100 * point["trainable_share"]))
        lines.append("| %s | %s | %s | %s | %s |" % (
            setting.replace(",", "+"), " | ".join(cells),
            "—" if entry["cost_change"] is None else "%+.1f points" % (100 * entry["cost_change"]),
            "—" if entry["yardstick"] is None else "%.1f" % (100 * entry["yardstick"]),
            entry["verdict"] or ("no yardstick: one seed" if entry["cost_change"] is not None else
                                 "fewer than two widths with a share: no trend")))
    lines += ["", "The plot: [%s](%s)." % (PLOT_FILE, PLOT_FILE)]
    return "\n".join(lines) + "\n"


def plot(output_dir, widths_trend, scale_name):
    """freezing_nmt_widths.png: each frozen setting's share of its baseline's BLEU against d; returns its path."""
    path = os.path.join(output_dir, PLOT_FILE)
    figure, ax = plt.subplots(figsize=(7, 4.5))
    for setting, entry in widths_trend["settings"].items():
        points = [point for point in entry["points"] if point["mean"] is not None]
        if not points:
            continue
        ax.errorbar([p["hidden_size"] for p in points], [100 * p["mean"] for p in points],
                    yerr=[100 * (p["std"] or 0) for p in points], fmt="o-", capsize=3,
                    label="%s frozen%s" % (setting.replace(",", "+"),
                                           "" if entry["verdict"] is None else " (bigger copes better: %s)" % entry["verdict"]))
    ax.axhline(98, color="grey", linestyle=":", linewidth=1)
    ax.annotate("the paper: 98% (2% cost)", (widths_trend["widths"][0], 98), fontsize=7, xytext=(0, 3),
                textcoords="offset points")
    ax.set_xscale("log", base=2)
    ax.set_xlim(widths_trend["widths"][0] / 1.25, widths_trend["widths"][-1] * 1.25)
    ax.set_xticks(widths_trend["widths"])
    ax.set_xticklabels([str(d) for d in widths_trend["widths"]])
    ax.minorticks_off()
    ax.set_xlabel("model width d, as run (3 + 1 layers, d_p = d/8, FFN 6d)")
    ax.set_ylabel("test BLEU, % of the same width's baseline\n(mean ± std over seeds)")
    ax.set_title("freezing_nmt across widths (%s and the reports given)" % scale_name, fontsize=9)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    else:  # Every width's baseline scored no BLEU (a micro run): say so rather than draw an empty legend.
        ax.text(0.5, 0.3, "no share to plot: no baseline scored any BLEU", transform=ax.transAxes, ha="center")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
