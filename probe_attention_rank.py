"""Probe the rank of BERT's attention logits (Bhojanapalli et al. 2020, Theorem 1).

For every line of --input_file (`text_a` or `text_a ||| text_b`, tokenized as
extract_features.py does), every layer and head: the singular values,
numerical rank, effective rank and stable rank of the logit matrix
Q K^T / sqrt(head_size) over the n real tokens, one JSON line per example in
--output_file; means per layer and head against the bound min(head_size, n)
in --summary_file; rank vs n in --plot_file. The logic is in
analysis/attention_rank.py.

Example:
  python probe_attention_rank.py \
    --input_file=input.txt --output_file=ranks.jsonl \
    --vocab_file=$BERT_DIR/vocab.txt \
    --bert_config_file=$BERT_DIR/bert_config.json \
    --init_checkpoint=$BERT_DIR/bert_model.ckpt --max_seq_length=128
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from analysis.attention_rank import ProbeAttentionRankOptions, run_from_options

_PROGRAM = "probe_attention_rank.py"

options.define_flags(ProbeAttentionRankOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run_from_options, options.from_flags(ProbeAttentionRankOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, ProbeAttentionRankOptions))
