"""The run behind export_model.py: a checkpoint -> a SavedModel that takes raw text.

--export_type=classifier  a run_classifier.py checkpoint (--task_name gives its labels);
--export_type=squad       a run_squad.py checkpoint (its answer flags are kept in the graph);
--export_type=encoder     any BERT checkpoint (pre-trained or fine-tuned; head_size included).
"""

import dataclasses
import json
import os
from typing import Optional

import tensorflow as tf
from absl import logging
from official.modeling import performance

import modeling
import tokenization
from checkpoints import init_checkpoint as init_checkpoint_lib
from classifier_data import processors
from classifier_data.features import check_vocab_fits_config
from freezing import SaveFrozenOptions
from modeling import bert_setup, frozen_export
from modeling.squad import SquadAnswerOptions
from options import default_of, option
from serving import export
from training import run_record
from training.training_options import DtypeOptions, InitCheckpointOptions, VocabOptions

EXPORT_TYPES = ("classifier", "squad", "encoder")
# run_classifier.py's and run_squad.py's --max_seq_length defaults.
DEFAULT_MAX_SEQ_LENGTH = {"classifier": 128, "squad": 384, "encoder": 128}


@dataclasses.dataclass(kw_only=True)
class ExportModelOptions(bert_setup.BertConfigOptions, VocabOptions, InitCheckpointOptions, SquadAnswerOptions,
                         export.ExportOptions, SaveFrozenOptions, DtypeOptions):
    """The export_model.py flags."""

    save_frozen: Optional[str] = default_of(SaveFrozenOptions, "save_frozen", None)

    export_type: str = option(
        "classifier", "What the checkpoint is: a run_classifier.py model, a run_squad.py model, or an "
        "encoder (the SavedModel then returns pooled_output and sequence_output).", choices=EXPORT_TYPES, new=True)
    task_name: Optional[str] = option(
        None, "With --export_type=classifier: the run_classifier.py task the checkpoint was fine-tuned on "
        "(its labels, and whether it takes text_b).", new=True)
    max_seq_length: Optional[int] = option(
        None, "Length the exported model packs text to; default 128 (classifier, encoder) or 384 (squad), "
        "as run_classifier.py and run_squad.py.", minimum=1, new=True)

    def validate(self):
        super().validate()
        if not self.export_dir:
            raise ValueError("--export_dir is required: the SavedModel goes to <export_dir>/<version>/.")
        if not self.init_checkpoint:
            raise ValueError("--init_checkpoint is required: the checkpoint to export (a prefix or a directory).")
        if self.export_type == "classifier" and not self.task_name:
            raise ValueError("--export_type=classifier needs --task_name (the task the checkpoint was "
                             "fine-tuned on: its labels), e.g. --task_name=MNLI.")


def build_model(options, config):
    """(model, export function) of --export_type, built; the function takes (model, options, regeneration)."""
    if options.export_type == "classifier":
        processor = processors.get_processor(options.task_name)
        labels = processor.get_labels()
        num_labels = 1 if processor.is_regression else len(labels)
        model = modeling.build_model(modeling.BertClassifierModel(config, num_labels))
        return model, lambda m, o, r: export.export_classifier(
            m, o, labels, processor.is_regression, processor.takes_text_pair, r)
    if options.export_type == "squad":
        return modeling.build_model(modeling.BertSquadModel(config)), export.export_squad
    return modeling.build_model(modeling.BertModel(config)), export.export_encoder


def check_task_matches_run(options):
    """Refuses --task_name when the checkpoint's folder holds a run.json of run_classifier.py with another task.

    Two tasks with as many labels (SST-2 and QNLI) load the same variables: the export would serve the other
    task's label names without a word.
    """
    directory = os.path.dirname(init_checkpoint_lib.check(options.init_checkpoint))
    path = os.path.join(directory, run_record.RUN_FILE)
    if options.export_type != "classifier" or not tf.io.gfile.exists(path):
        return
    with tf.io.gfile.GFile(path) as f:
        recorded = json.load(f).get("task_name")
    if recorded and (processors.canonical_task_name(recorded) !=
                     processors.canonical_task_name(options.task_name, "task_name")):
        raise ValueError("--task_name=%s: %s records a run fine-tuned on --task_name=%s; export it with that "
                         "task's labels (--task_name=%s)." % (options.task_name, path, recorded, recorded))


def run(options):
    """Loads --init_checkpoint into the --export_type model and exports it; returns the version's path.

    Raises:
      ValueError: for bad flags, or a checkpoint that lacks variables of the
        model (naming them).
    """
    options.validate()
    check_task_matches_run(options)
    if options.max_seq_length is None:
        options = dataclasses.replace(options, max_seq_length=DEFAULT_MAX_SEQ_LENGTH[options.export_type])
    tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
    config = bert_setup.effective_config(options)
    # The SavedModel computes in --dtype, as run_classifier.py's and run_squad.py's --export_dir in theirs.
    performance.set_mixed_precision_policy(tf.as_dtype(options.dtype))
    check_vocab_fits_config(tokenization.load_vocab(options.vocab_file), config.vocab_size, options.vocab_file)
    model, export_fn = build_model(options, config)
    result = init_checkpoint_lib.load(model, options.init_checkpoint)
    if result.missing:
        raise ValueError(
            "--init_checkpoint=%s lacks %d variables of the %s model (%s); a classifier or squad export needs "
            "a checkpoint fine-tuned by run_classifier.py or run_squad.py." % (
                options.init_checkpoint, len(result.missing), options.export_type, ", ".join(result.missing[:3])))
    logging.info("Loaded %d variables from %s.", len(result.loaded), options.init_checkpoint)
    regeneration = frozen_export.regeneration(model, init_checkpoint_lib.check(options.init_checkpoint),
                                              options.save_frozen)
    if regeneration is not None:
        logging.info("%d frozen weight(s) drawn from their seed when the SavedModel is loaded, not stored "
                     "(--save_frozen=seed).", len(regeneration.weights))
    return export_fn(model, options, regeneration)
