"""theorem1's results: the fits of capacity.json summarised, the knee per n, a table and a plot.

The knee of a length n and target kind is the smallest swept d_p whose fits
all reach KL < TOLERANCE: Theorem 1 puts it at d_p = n (n - 1 suffices, as
softmax ignores row shifts). Beside it, the gap the theorem predicts: the
smallest KL of any fit below n - 1 against the largest at n - 1 and above
(optimisation leaves those near, not at, zero). Theorem 2 holds where the
standard heads (d/h) stay above TOLERANCE while the fixed heads (d_p = n)
reach it.
"""

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  pylint: disable=wrong-import-position

from reproduction.summary import summarize  # noqa: E402

# Nats per row: a fit this close is the target, up to the optimiser's float32 precision (fits that can
# reach the target end near 1e-7; a Dirichlet target at d_p = n - 2 ends near 1e-4 at n = 8).
TOLERANCE = 1e-4
PAPER_STATEMENT = ("Theorem 1: with head size d_p >= n, one head can express every positive context matrix "
                   "for a full-rank input; below n there are inputs and context matrices it cannot express. "
                   "Theorem 2: for h > d / d_p, h heads of a fixed d_p are strictly more expressive than h "
                   "heads of the standard d / h.")


def _group(fits, keys):
    groups = {}
    for fit in fits:
        groups.setdefault(tuple(fit[k] for k in keys), []).append(fit)
    return groups


def collect(path, scale):
    """The results dict: Theorem 1 per (n, target, d_p), knees, Theorem 2 per (h, family)."""
    with open(path, encoding="utf-8") as f:
        fits = json.load(f)
    theorem1 = []
    for (n, target, d_p), group in sorted(_group(fits["theorem1"], ("n", "target", "head_size")).items()):
        kl = summarize([g["kl"] for g in group])
        theorem1.append(dict(n=n, target=target, head_size=d_p, ratio=d_p / n, kl=kl["mean"], kl_std=kl["std"],
                             kl_max=max(g["kl"] for g in group),
                             total_variation=summarize([g["total_variation"] for g in group])["mean"],
                             num_targets=len(group)))
    knees = []
    for (n, target), group in sorted(_group(theorem1, ("n", "target")).items()):
        reached = [row["head_size"] for row in group if row["kl_max"] < TOLERANCE]
        below = [g["kl"] for g in fits["theorem1"] if (g["n"], g["target"]) == (n, target) and g["head_size"] < n - 1]
        above = [g["kl"] for g in fits["theorem1"] if (g["n"], g["target"]) == (n, target) and g["head_size"] >= n - 1]
        knees.append(dict(n=n, target=target, knee=min(reached) if reached else None,
                          smallest_kl_below_n_minus_1=min(below, default=None),
                          largest_kl_from_n_minus_1=max(above, default=None)))
    theorem2 = []
    for (h, family), group in sorted(_group(fits["theorem2"], ("num_heads", "family")).items()):
        kl = summarize([g["kl"] for g in group])
        theorem2.append(dict(num_heads=h, family=family, head_size=group[0]["head_size"], kl=kl["mean"],
                             kl_std=kl["std"], kl_max=max(g["kl"] for g in group)))
    return dict(experiment="theorem1", scale=scale, settings=fits["settings"], inputs=fits["inputs"],
                theorem2_inputs=fits["theorem2_inputs"], tolerance=TOLERANCE, paper_statement=PAPER_STATEMENT,
                theorem1=theorem1, knees=knees, theorem2=theorem2)


def markdown(results):
    settings = results["settings"]
    lines = ["# Theorems 1 and 2: what one attention head can represent (%s scale)" % results["scale"], "",
             "**What the paper states** (a theorem, no table): %s" % results["paper_statement"], "",
             "Each cell is the best KL(P || head) in nats per row, mean over %d seeded target(s) (± sample std), "
             "after %d Adam steps from %d seeded start(s). A fit below %g is the target." % (
                 settings["num_targets"], settings["steps"], settings["restarts"], results["tolerance"]), "",
             "Inputs X: %s." % "; ".join("n = %s: %s" % item for item in results["inputs"].items()), "",
             "## Theorem 1: one head, head size d_p against length n", ""]
    # Each length sweeps its own d_p: one table row per (n, target), its cells labelled.
    lines += ["| n | target | KL at each d_p (d_p: KL) | knee: smallest d_p reaching %g | smallest KL below "
              "n-1 | largest KL from n-1 |" % results["tolerance"], "|---|---|---|---|---|---|"]
    knees = {(k["n"], k["target"]): k for k in results["knees"]}
    for (n, target) in dict.fromkeys((r["n"], r["target"]) for r in results["theorem1"]):
        cells = ["%d: %s" % (r["head_size"], _kl(r)) for r in results["theorem1"]
                 if r["n"] == n and r["target"] == target]
        knee = knees[(n, target)]
        lines.append("| %d | %s | %s | %s | %.2g | %.2g |" % (
            n, target, "; ".join(cells), "none swept" if knee["knee"] is None else
            "%d (= n%+d)" % (knee["knee"], knee["knee"] - n), knee["smallest_kl_below_n_minus_1"],
            knee["largest_kl_from_n_minus_1"]))
    lines += ["", "## Theorem 2: h heads at the same d = %d, n = %d" % (settings["theorem2_hidden_size"],
                                                                       settings["theorem2_length"]), "",
              "Each head fits its own near-permutation target; mean KL over the h heads. Inputs: %s." % (
                  results["theorem2_inputs"]), "",
              "| h | standard: d_p = d/h | KL | fixed: d_p = n | KL |", "|---|---|---|---|---|"]
    by_key = {(r["num_heads"], r["family"]): r for r in results["theorem2"]}
    for h in settings["theorem2_num_heads"]:
        standard, fixed = by_key[(h, "standard")], by_key[(h, "fixed")]
        lines.append("| %d | %d | %s | %d | %s |" % (h, standard["head_size"], _kl(standard), fixed["head_size"],
                                                     _kl(fixed)))
    return "\n".join(lines) + "\n"


def _kl(row):
    if row.get("kl_std"):
        return "%.2g ± %.1g" % (row["kl"], row["kl_std"])
    return "%.2g" % row["kl"]


def plot(output_dir, results):
    """theorem1.png: KL against d_p / n, one line per n and target (left); Theorem 2's two families (right)."""
    path = os.path.join(output_dir, "theorem1.png")
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    floor = results["tolerance"] / 100
    styles = {"near_permutation": "-", "dirichlet": "--"}
    for n, target in dict.fromkeys((r["n"], r["target"]) for r in results["theorem1"]):
        rows = [r for r in results["theorem1"] if r["n"] == n and r["target"] == target]
        color = "C%d" % sorted({r["n"] for r in results["theorem1"]}).index(n)
        axes[0].plot([r["ratio"] for r in rows], [max(r["kl"], floor) for r in rows], "o" + styles[target],
                     color=color, label="n = %d, %s" % (n, target.replace("_", " ")))
    axes[0].axvline(1.0, color="grey", lw=0.8)
    axes[0].axhline(results["tolerance"], color="grey", lw=0.8, ls=":")
    axes[0].set_xscale("log", base=2)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("head size d_p / sequence length n")
    axes[0].set_ylabel("best KL(P || head), nats per row (floored at %g)" % floor)
    axes[0].set_title("Theorem 1: one head", fontsize=9)
    axes[0].legend(fontsize=7)
    for family, marker in (("standard", "o-"), ("fixed", "s-")):
        rows = [r for r in results["theorem2"] if r["family"] == family]
        axes[1].plot([r["num_heads"] for r in rows], [max(r["kl"], floor) for r in rows], marker,
                     label="standard d_p = d/h" if family == "standard" else "fixed d_p = n")
    settings = results["settings"]
    axes[1].axvline(settings["theorem2_hidden_size"] / settings["theorem2_length"], color="grey", lw=0.8)
    axes[1].axhline(results["tolerance"], color="grey", lw=0.8, ls=":")
    axes[1].set_xscale("log", base=2)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("heads h (grey: h = d / n)")
    axes[1].set_ylabel("mean best KL over the h heads")
    axes[1].set_title("Theorem 2: d = %d, n = %d" % (settings["theorem2_hidden_size"], settings["theorem2_length"]),
                      fontsize=9)
    axes[1].legend(fontsize=8)
    figure.suptitle("What one attention head can represent (%s scale)" % results["scale"], fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.94))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
