"""`--freeze`, `--reinit` and `--save_frozen`: which variables train, and how they are saved.

Frozen variables never reach the optimizer: they are left out of the list the
gradient tape differentiates and the optimizer is built on, so they get no
gradient, no Adam slots and no weight decay (decoupled decay and Adam moments
would move them even with a zero gradient). They keep their initial value
bit for bit: the seeded initialisation, or the init_checkpoint's value.

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

from modeling import parameter_groups, seeded_init
from modeling.checkpoint_names import original_variables

SAVE_FROZEN = ("values", "seed")
PARAMETERS_FILE = "parameters.json"


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


def make_plan(model, freeze, reinit, loaded_from_checkpoint=()):
    """Resolves the selectors against the model.

    Args:
      model: a built task model.
      freeze, reinit: selector strings (modeling/parameter_groups.py).
      loaded_from_checkpoint: names whose values came from init_checkpoint.

    Raises:
      ValueError: for a bad selector, naming the flag.
    """
    names = list(original_variables(model))
    layers = model.config.num_hidden_layers
    frozen = parameter_groups.select(names, parameter_groups.parse_selectors(freeze, "--freeze"), "--freeze", layers)
    redrawn = parameter_groups.select(names, parameter_groups.parse_selectors(reinit, "--reinit"), "--reinit", layers)
    seeded = set(redrawn) | (set(names) - set(loaded_from_checkpoint))
    return FreezePlan(frozen, redrawn, [n for n in frozen if n in seeded])


def trained_variables(model, plan):
    """The variables the optimizer updates: trainable and not frozen."""
    entries = original_variables(model)
    frozen = {id(entries[name].variable) for name in plan.frozen}
    return [v for v in model.trainable_variables if id(v) not in frozen]


def report(model, plan):
    entries = original_variables(model)
    sizes = {name: int(np.prod(entry.shape)) for name, entry in entries.items()}
    return parameter_groups.parameter_report(sizes, set(plan.frozen))


def record(output_dir, model, plan, flags):
    """Logs the parameter report and writes output_dir/parameters.json.

    Args:
      flags: dict of the run's freezing flags (freeze, reinit, save_frozen,
        random_seed), recorded so that a later run and a reader know them.

    Raises:
      ValueError: when output_dir records different freezing flags (a resume
        must freeze what the run froze).
    """
    path = os.path.join(output_dir, PARAMETERS_FILE)
    if tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path) as f:
            recorded = json.load(f).get("flags", {})
        for key in ("freeze", "reinit", "save_frozen"):
            if recorded.get(key, "") != flags.get(key, ""):
                raise ValueError(
                    "%s records --%s=%r but this run has --%s=%r; use the recorded flags to "
                    "resume, or a new --output_dir." % (path, key, recorded.get(key), key, flags.get(key))
                )
    content = dict(report(model, plan), flags=flags, reinit_variables=plan.reinit)
    logging.info("Parameters (%s):\n%s", path, parameter_groups.format_report(content))
    with tf.io.gfile.GFile(path, "w") as f:
        f.write(json.dumps(content, indent=2) + "\n")
    return content


def reinitialize(model, plan, seed):
    if plan.reinit:
        seeded_init.initialize(model, seed, plan.reinit)
        logging.info("Re-initialised %d variables from seed %d (--reinit).", len(plan.reinit), seed)
