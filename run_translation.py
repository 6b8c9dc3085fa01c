"""Trains a Transformer translation model and scores it with BLEU (Bogoychev, 2021, with any head size).

  python run_translation.py --preset=transformer-tiny \
    --train_tsv=data/train.tsv --dev_tsv=data/dev.tsv --test_tsv=data/test.tsv \
    --source_language=tr --target_language=en \
    --output_dir=/tmp/nmt --do_train=True --do_eval=True --do_predict=True

Re-running the same command resumes from the newest checkpoint in output_dir.
"""

import dataclasses

from absl import app, flags

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from nmt.task import NmtOptions, run

options.define_flags(NmtOptions)


def main(_):
    given = {field.name for field in dataclasses.fields(NmtOptions) if flags.FLAGS[field.name].present}
    options.run_or_exit("run_translation.py", lambda opts: run(opts, given=given), options.from_flags(NmtOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("run_translation.py", NmtOptions))
