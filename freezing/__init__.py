"""Freezing masks (Bogoychev, 2021) for any model family given its parameter groups.

`Freezer` owns `--freeze`, `--reinit` and `--save_frozen`; `ParameterGroups` is a
family's table of groups and the selectors over it; `seeded_values` draws each
variable from (seed, name) and writes the manifests that let checkpoints leave
frozen random tensors out.
"""

from freezing.freezer import PARAMETERS_FILE, SAVE_FROZEN, FreezePlan, Freezer, FreezingOptions, SaveFrozenOptions
from freezing.selectors import ParameterGroups, format_report

__all__ = [
    "PARAMETERS_FILE",
    "SAVE_FROZEN",
    "FreezePlan",
    "Freezer",
    "FreezingOptions",
    "SaveFrozenOptions",
    "ParameterGroups",
    "format_report",
]
