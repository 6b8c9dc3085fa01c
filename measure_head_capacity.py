"""Measure what one attention head can represent, against its head size (Bhojanapalli et al. 2020, Theorems 1, 2).

For each sequence length n of --lengths, one head's W_q, W_k are fitted by
gradient descent to target context matrices P at head sizes d_p from n/8 to
2n, and the best KL(P || softmax(X W_q (X W_k)^T / sqrt(d_p))) is kept: it
reaches zero only from d_p = n - 1 on (Theorem 1; n - 1, not n, because
softmax ignores row shifts). Then h heads of the standard size d/h against
h heads of d_p = n at the same d (Theorem 2). X is random and full rank, or
a real sentence's embedding output from a BERT checkpoint. Writes every fit
to --output_file (JSON); reproduce_paper_tables.py --experiment=theorem1
tabulates and plots it. The logic is in analysis/head_capacity.py.

Example:
  python measure_head_capacity.py --output_file=capacity.json --lengths=8,16,32
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from analysis.head_capacity import HeadCapacityOptions, run_from_options

_PROGRAM = "measure_head_capacity.py"

options.define_flags(HeadCapacityOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run_from_options, options.from_flags(HeadCapacityOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, HeadCapacityOptions))
