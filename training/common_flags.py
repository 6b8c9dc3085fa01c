"""Flags every training entry point shares, their options, and how a run ends on bad input.

Each entry point defines its own original flags first, then calls
`define_tpu_flags()` (the original TPU flags) and `define_training_flags()`
(ours), so `--help` lists them in that order everywhere. `SharedOptions`
holds the same flags for the runs' options dataclasses.
"""

import dataclasses
import sys
from typing import Optional

from absl import flags

from training import distribution, precision
from training.freezing import SAVE_FROZEN

FLAGS = flags.FLAGS


def define_tpu_flags():
    """The original's TPU flags; `--use_tpu` means `--distribution_strategy=tpu`."""
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU (same as --distribution_strategy=tpu).")
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use for training.")
    flags.DEFINE_string("tpu_zone", None, "GCE zone where the Cloud TPU is located in.")
    flags.DEFINE_string("gcp_project", None, "Project name for the Cloud TPU-enabled project.")
    flags.DEFINE_string("master", None, "TensorFlow master URL (used when --tpu_name is unset).")
    flags.DEFINE_integer("num_tpu_cores", 8, "Kept for compatibility: TPUStrategy uses every core it finds.")


def define_training_flags():
    """Our flags: head size, seed, precision, distribution and freezing masks."""
    flags.DEFINE_integer("head_size", None, "Attention head size; overrides the config's head_size.")
    flags.DEFINE_integer("random_seed", 12345, "Seed for initialisation, data order and dropout.")
    flags.DEFINE_enum("dtype", "float32", list(precision.DTYPES),
                      "Compute dtype (mixed precision for 16-bit types).")
    flags.DEFINE_enum("distribution_strategy", "one_device", list(distribution.STRATEGIES),
                      "tf.distribute strategy.")
    flags.DEFINE_string(
        "freeze", "", "Parameter groups kept at their initial values, e.g. 'embeddings,attention:0-5' "
        "(groups: embeddings, attention, ffn, pooler, heads; 're:<regex>' over variable names, last).")
    flags.DEFINE_string(
        "reinit", "", "Parameter groups re-drawn from the seeded initializer after --init_checkpoint.")
    flags.DEFINE_enum(
        "save_frozen", "values", list(SAVE_FROZEN),
        "'seed' leaves frozen random variables out of checkpoints; loaders regenerate them.")


@dataclasses.dataclass(kw_only=True)
class SharedOptions:
    """The fields of `define_tpu_flags()` and `define_training_flags()`.

    Keyword-only, so that a run's options can list its own required fields
    first.
    """

    use_tpu: bool = False
    tpu_name: Optional[str] = None
    tpu_zone: Optional[str] = None
    gcp_project: Optional[str] = None
    master: Optional[str] = None
    num_tpu_cores: int = 8
    head_size: Optional[int] = None
    random_seed: int = 12345
    dtype: str = "float32"
    distribution_strategy: str = "one_device"
    freeze: str = ""
    reinit: str = ""
    save_frozen: str = "values"

    def validate_shared(self):
        if self.save_frozen not in SAVE_FROZEN:
            raise ValueError("--save_frozen=%s is not supported; expected one of %s."
                             % (self.save_frozen, ", ".join(SAVE_FROZEN)))


def options_from_flags(options_class):
    """An options dataclass filled from the parsed flags of the same names."""
    return options_class(**{name: FLAGS[name].value for name in options_class.__dataclass_fields__})


def run_or_exit(program, run, options):
    """Runs; bad input or a diverged run ends with a one-line message, no traceback."""
    try:
        return run(options)
    except (ValueError, FileNotFoundError, FloatingPointError) as error:
        sys.exit("%s: error: %s" % (program, error))
