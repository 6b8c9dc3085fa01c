"""Trains and evaluates the Transformer language model (LM1B in Bhojanapalli et al., 2020).

  python run_lm.py --preset=lm1b_paper \
    --train_file='lm1b/training-monolingual.tokenized.shuffled/news.en-*' \
    --eval_file=lm1b/heldout-monolingual.tokenized.shuffled/news.en.heldout-00000-of-00050 \
    --output_dir=/tmp/lm --do_train=True --do_eval=True

Re-running the same command resumes from the newest checkpoint in output_dir.
"""

import dataclasses

from absl import app, flags

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from lm.task import LmOptions, run

options.define_flags(LmOptions)


def main(_):
    given = {field.name for field in dataclasses.fields(LmOptions) if flags.FLAGS[field.name].present}
    options.run_or_exit("run_lm.py", lambda opts: run(opts, given=given), options.from_flags(LmOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("run_lm.py", LmOptions))
