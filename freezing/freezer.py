"""`--freeze`, `--reinit` and `--save_frozen`: the one owner of freezing masks.

Works on any model family given its table of parameter groups
(freezing/selectors.py) and its initializers (freezing/seeded_values.py),
over the model's {original name: OriginalVariable} map, built once per run.

Frozen variables never reach the optimizer: they are left out of the list the
gradient tape differentiates and the optimizer is built on, so they get no
gradient, no optimizer slots and no weight decay (decoupled decay and Adam
moments would move them even with a zero gradient). They keep their initial
value bit for bit: the seeded initialisation, or the init_checkpoint's value.

`--reinit` re-draws groups from the seeded initializer after init_checkpoint is
loaded; with `--freeze` of the same groups that is the paper's "random and
frozen" starting from a pretrained model.

The plan is recorded in output_dir/parameters.json with the parameter report;
a resumed run must use the same flags.
"""

import dataclasses
import json
import os
from typing import List

import numpy as np
import tensorflow as tf
from absl import logging

from freezing import seeded_values
from freezing.selectors import format_report
from options import Options, option
import outputs

SAVE_FROZEN = ("values", "seed")
PARAMETERS_FILE = "parameters.json"


@dataclasses.dataclass(kw_only=True)
class SaveFrozenOptions(Options):
    """How frozen random variables are written: by value, or as their seed (checkpoints and SavedModels)."""

    save_frozen: str = option(
        "values", "'seed' leaves frozen random variables out of checkpoints, and out of the SavedModels of "
        "--export_dir, which draw them when loaded; loaders regenerate them. export_model.py: by default as its "
        "--init_checkpoint (seed when it has a .frozen.json manifest).", choices=SAVE_FROZEN, new=True)


@dataclasses.dataclass(kw_only=True)
class FreezingOptions(SaveFrozenOptions):
    """The freezing flags every training entry point takes."""

    freeze: str = option(
        "", "Parameter groups kept at their initial values, e.g. 'embeddings,attention:0-5' "
        "(BERT's groups: embeddings, attention, ffn, pooler, heads; 're:<regex>' over variable "
        "names, last).", new=True)
    reinit: str = option(
        "", "Parameter groups re-drawn from the seeded initializer after --init_checkpoint.",
        new=True)


@dataclasses.dataclass
class FreezePlan:
    """Original names, in model order.

    frozen: variables that do not train.
    reinit: variables re-drawn from the seed after init_checkpoint.
    regenerable: frozen variables holding their seeded initial value, which
      `--save_frozen=seed` leaves out of checkpoints.
    """

    frozen: List[str]
    reinit: List[str]
    regenerable: List[str]


class Freezer:
    """Freezing for one run: selectors checked at construction, before any model exists."""

    def __init__(self, options, groups, num_layers, initializer_of):
        """
        Args:
          options: the run's options: FreezingOptions fields and random_seed.
          groups: the model family's ParameterGroups.
          num_layers: the model's layer count (selectors beyond it are refused).
          initializer_of: name -> (kind, stddev) of the model family.

        Raises:
          ValueError: for a bad --freeze or --reinit, naming the flag and what exists.
        """
        self.options = options
        self.groups = groups
        self.num_layers = num_layers
        self.initializer_of = initializer_of
        self._freeze = groups.parse_selectors(options.freeze, "--freeze", num_layers)
        self._reinit = groups.parse_selectors(options.reinit, "--reinit", num_layers)

    def plan(self, variables, loaded_from_checkpoint=()):
        """Resolves the selectors against the model's {original name: OriginalVariable}.

        Args:
          loaded_from_checkpoint: names whose values came from init_checkpoint.

        Raises:
          ValueError: for a selector that matches no variable, naming the flag.
        """
        names = list(variables)
        frozen = self.groups.select(names, self._freeze, "--freeze", self.num_layers)
        reinit = self.groups.select(names, self._reinit, "--reinit", self.num_layers)
        seeded = set(reinit) | (set(names) - set(loaded_from_checkpoint))
        return FreezePlan(frozen, reinit, [n for n in frozen if n in seeded])

    def reinitialize(self, plan, variables):
        if plan.reinit:
            seeded_values.assign_seeded(variables, plan.reinit, self.options.random_seed, self.initializer_of)
            logging.info("Re-initialised %d variables from seed %d (--reinit).",
                         len(plan.reinit), self.options.random_seed)

    @staticmethod
    def trained_variables(plan, variables, trainable_variables):
        """The variables the optimizer updates: trainable and not frozen, in model order."""
        frozen = {id(variables[name].variable) for name in plan.frozen}
        return [v for v in trainable_variables if id(v) not in frozen]

    def frozen_manifest(self, plan, variables):
        """With --save_frozen=seed, how to regenerate what checkpoints omit; else None."""
        if self.options.save_frozen != "seed" or not plan.regenerable:
            return None
        return seeded_values.manifest(variables, plan.regenerable, self.options.random_seed, self.initializer_of,
                                      self.groups.label)

    def recorded_flags(self):
        options = self.options
        return dict(freeze=options.freeze, reinit=options.reinit, save_frozen=options.save_frozen,
                    random_seed=options.random_seed)

    def check_recorded(self, output_dir):
        """Refuses a resume whose freezing flags differ from those output_dir records.

        Raises:
          ValueError: naming the file, the flag and both values.
        """
        path = os.path.join(output_dir, PARAMETERS_FILE)
        if not tf.io.gfile.exists(path):
            return
        with tf.io.gfile.GFile(path) as f:
            recorded = json.load(f).get("flags", {})
        flags = self.recorded_flags()
        # --random_seed too, where recorded: with --save_frozen=seed a checkpoint's manifest would name the new
        # seed for frozen values the old one drew, and the run's record would name a seed it did not start from.
        for key in ("freeze", "reinit", "save_frozen") + (("random_seed",) if "random_seed" in recorded else ()):
            if recorded.get(key, "") != flags.get(key, ""):
                raise ValueError(
                    "%s records --%s=%r but this run has --%s=%r; use the recorded flags to "
                    "resume, or a new --output_dir." % (path, key, recorded.get(key), key, flags.get(key))
                )

    def report(self, plan, variables):
        """The parameter report (freezing/selectors.py) with the flags and --reinit names."""
        sizes = {name: int(np.prod(entry.shape)) for name, entry in variables.items()}
        return dict(self.groups.report(sizes, set(plan.frozen)), flags=self.recorded_flags(),
                    reinit_variables=plan.reinit)

    def record(self, output_dir, plan, variables):
        """Logs the report and writes output_dir/parameters.json, in one step.

        Call it once the run is accepted (its checkpoint restored): a refused
        run must leave the folder's record of its checkpoints as it was.
        """
        path = os.path.join(output_dir, PARAMETERS_FILE)
        content = self.report(plan, variables)
        logging.info("Parameters (%s):\n%s", path, format_report(content))
        outputs.write_text(path, json.dumps(content, indent=2) + "\n")
        return content
