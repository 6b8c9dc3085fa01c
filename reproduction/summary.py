"""What every study's report reads and how it summarises seeds."""

import numpy as np


def read_key_values(path):
    """The `key = value` lines of an entry point's results file (eval_results.txt, ...).

    Values are floats where they parse as one, else the text.
    """
    values = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if " = " in line:
                key, value = line.rstrip("\n").split(" = ", 1)
                try:
                    values[key] = float(value)
                except ValueError:
                    values[key] = value
    return values


def summarize(values):
    """{"mean", "std", "per_seed"} of a list of numbers (std: sample, 0 for one value)."""
    values = [float(v) for v in values]
    if not values:
        return None
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return {"mean": float(np.mean(values)), "std": std, "per_seed": values}


def seed_figures(runs, keys):
    """{key: mean over the runs, key + "_std": sample std, None for one run} of each key of the runs' dicts."""
    figures = {}
    for key in keys:
        summary = summarize([run[key] for run in runs])
        figures[key], figures[key + "_std"] = summary["mean"], summary["std"] if len(runs) > 1 else None
    return figures


def mean_std_text(row, key, digits):
    """"mean ± std" of a `seed_figures` entry, or the mean alone for one run."""
    if row[key + "_std"] is None:
        return "%.*f" % (digits, row[key])
    return "%.*f ± %.*f" % (digits, row[key], digits, row[key + "_std"])
