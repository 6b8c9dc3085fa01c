"""--export_dir: a fine-tuned or pre-trained model as a TF Serving SavedModel that takes raw text.

run_classifier.py and run_squad.py export after training (or the model they
evaluate) when --export_dir is set; export_model.py exports any checkpoint.
The SavedModel is written to `<export_dir>/<version>/` and loads in a
process that has only TensorFlow and tensorflow-text (`import
tensorflow_text` registers the tokenizer ops before `tf.saved_model.load`).
"""

import dataclasses
from typing import Optional

from options import Options, option
from serving import saved_model_writer
from serving.classifier_export import ClassifierServer
from serving.encoder_export import EncoderServer
from serving.squad_export import SquadServer
from serving.text_inputs import TextInputs


@dataclasses.dataclass(kw_only=True)
class ExportOptions(Options):
    """Where a SavedModel goes."""

    export_dir: Optional[str] = option(
        None, "Write a SavedModel for TF Serving to <export_dir>/<version>/, with signatures that "
        "take raw text (tokenization in the graph).", new=True, path="output_dir")
    export_version: Optional[int] = option(
        None, "The SavedModel's version directory; default: one more than the highest in "
        "--export_dir (1 for the first).", minimum=1, new=True)


def save_server(server, options, regeneration=None):
    """Saves a server (ClassifierServer, SquadServer, EncoderServer) to --export_dir; returns the version's path.

    regeneration: a serving.regenerated.Regeneration whose weights the SavedModel
      draws at load instead of storing them, or None to store every variable.
    """
    if regeneration is None or not regeneration.weights:
        return saved_model_writer.save(server, options.export_dir, server.signatures(), options.export_version)
    server.variables_of_model = regeneration.stored(server.variables_of_model)
    server.regenerated = list(regeneration.trackables)
    with regeneration.swapped():  # traced and saved reading the regenerated weights
        return saved_model_writer.save(server, options.export_dir, server.signatures(), options.export_version)


def export_classifier(model, options, label_list, is_regression, takes_text_pair, regeneration=None):
    """Exports a `BertClassifierModel`: serving_default(text_a[, text_b]); returns the version's path.

    Args:
      model: built and loaded.
      options: with vocab_file, do_lower_case, max_seq_length, export_dir, export_version.
      label_list, is_regression, takes_text_pair: the task's (classifier_data.processors).
      regeneration: as save_server's.
    """
    text_inputs = TextInputs(options.vocab_file, options.do_lower_case, options.max_seq_length)
    server = ClassifierServer(model, text_inputs, label_list, is_regression, takes_text_pair)
    return save_server(server, options, regeneration)


def export_squad(model, options, regeneration=None):
    """Exports a `BertSquadModel`: serving_default(question, context) -> answer, ...; returns the path.

    Args:
      options: as `export_classifier`'s, and run_squad.py's answer flags
        (doc_stride, max_query_length, n_best_size, max_answer_length,
        version_2_with_negative, null_score_diff_threshold).
      regeneration: as save_server's.
    """
    text_inputs = TextInputs(options.vocab_file, options.do_lower_case, options.max_seq_length)
    server = SquadServer(model, text_inputs, options.doc_stride, options.max_query_length, options.n_best_size,
                         options.max_answer_length, options.version_2_with_negative,
                         options.null_score_diff_threshold)
    return save_server(server, options, regeneration)


def export_encoder(bert, options, regeneration=None):
    """Exports a `BertModel`: serving_default (ids -> pooled/sequence output), preprocess, preprocess_pair."""
    text_inputs = TextInputs(options.vocab_file, options.do_lower_case, options.max_seq_length)
    server = EncoderServer(bert, text_inputs)
    return save_server(server, options, regeneration)
