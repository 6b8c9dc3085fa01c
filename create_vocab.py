"""Learns a WordPiece vocabulary for pre-training from scratch.

  python create_vocab.py \
    --input_file=corpus/*.txt --output_file=vocab.txt \
    --vocab_size=30522 --do_lower_case=True

Input: the text create_pretraining_data.py reads (one sentence per line, a
blank line between documents), streamed. Output: one token per line, [PAD],
[unused*] slots, [UNK], [CLS], [SEP], [MASK] first as in BERT's released
vocabularies, ready for `--vocab_file` of create_pretraining_data.py and the
training entry points (with the same --do_lower_case). The file appears only
when complete. The logic is in tokenization/vocab_builder.py.
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from tokenization.vocab_builder import CreateVocabOptions, run

_PROGRAM = "create_vocab.py"

options.define_flags(CreateVocabOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run, options.from_flags(CreateVocabOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, CreateVocabOptions))
