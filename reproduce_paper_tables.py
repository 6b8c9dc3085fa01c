"""Reproduces a table or figure of Bhojanapalli et al. (2020), Low-Rank Bottleneck in Multi-head Attention Models.

  python reproduce_paper_tables.py --experiment=table2b --scale=tiny --output_dir=/tmp/table2b
  python reproduce_paper_tables.py --experiment=table1 --scale=paper --dry_run --output_dir=/tmp/plan

Writes plan.sh and plan.md; without --dry_run runs every step (skipping
finished ones) and writes results.json, results.md and <experiment>.png. The
engine is in reproduction/ (driver.py); the studies are listed in studies/.
"""

from absl import app, logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from studies import ReproduceOptions, run

_PROGRAM = "reproduce_paper_tables.py"

options.define_flags(ReproduceOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run, options.from_flags(ReproduceOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, ReproduceOptions))
