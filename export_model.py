"""Exports a checkpoint as a TF Serving SavedModel whose signatures take raw text.

  python export_model.py --export_type=classifier --task_name=MNLI \
    --bert_config_file=$BERT_BASE_DIR/bert_config.json --vocab_file=$BERT_BASE_DIR/vocab.txt \
    --init_checkpoint=/tmp/mnli_output --export_dir=/tmp/mnli_export

Types: classifier (serving_default(text_a, text_b) -> probabilities, label,
logits), squad (serving_default(question, context) -> answer, start_char,
end_char, score[, is_impossible]), encoder (pooled_output, sequence_output,
and preprocess signatures). Written to <export_dir>/<version>/.
"""

from absl import app

import options
from training import onednn

onednn.enable()  # before TensorFlow loads: see training/onednn.py

from modeling.export_model import ExportModelOptions, run

options.define_flags(ExportModelOptions)


def main(_):
    options.run_or_exit("export_model.py", run, options.from_flags(ExportModelOptions))


if __name__ == "__main__":
    app.run(main, flags_parser=options.flags_parser("export_model.py", ExportModelOptions))
