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
