r"""Convert BERT checkpoints: Hugging Face or Model Garden -> our (the original) layout, and ours -> Hugging Face.

  python convert_checkpoint.py --input_format=huggingface --input=hf_bert_dir --output_dir=bert_dir
  python convert_checkpoint.py --input_format=model_garden --input=tf2_checkpoint_dir --output_dir=bert_dir
  python convert_checkpoint.py --input_format=original --output_format=huggingface --input=bert_dir \
    --output_dir=hf_bert_dir

The output of the first two is what the other scripts take: bert_model.ckpt
(--init_checkpoint), bert_config.json (--bert_config_file), vocab.txt
(--vocab_file). The logic is in modeling/checkpoint_conversion/.
"""

from absl import app
from absl import logging

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from modeling.checkpoint_conversion import ConvertCheckpointOptions, run

_PROGRAM = "convert_checkpoint.py"

options.define_flags(ConvertCheckpointOptions)


def main(_):
    logging.set_verbosity(logging.INFO)
    options.run_or_exit(_PROGRAM, run, options.from_flags(ConvertCheckpointOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser(_PROGRAM, ConvertCheckpointOptions))
