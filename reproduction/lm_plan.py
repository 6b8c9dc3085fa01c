"""The plan of a language-model experiment: one run_lm.py command per row.

Layout under --output_dir:
  configs/<row>.json     the row's lm_config.json at this scale
  <row>/                 run_lm.py: checkpoints, eval_results.txt, test_results.txt

The first row learns the vocabulary (unless --vocab_file gives one) and the
others read it from its output_dir, so every row scores the same sub-words.
A row whose model and freezing equal an earlier row's (Fig. 1's and Fig. 3a's
h = 8 pair) is run once and read twice.
"""

import dataclasses
import os

from lm_data import vocabulary as vocabulary_lib
from reproduction.plan import Step

LM_SEED = 12345
RESULT_FILES = ("eval_results.txt", "test_results.txt")


@dataclasses.dataclass(frozen=True)
class LmDataPaths:
    """run_lm.py's data flags: text files (or a TFDS directory) and an optional SentencePiece model."""

    train_file: str = None
    eval_file: str = None
    test_file: str = None
    tfds_data_dir: str = None
    vocab_file: str = None

    def flags(self):
        return {k: v for k, v in dataclasses.asdict(self).items() if v}


def config_path(output_dir, row):
    return os.path.join(output_dir, "configs", "%s.json" % row.name)


def run_directories(experiment, scale, output_dir):
    """{row name: the output_dir of its run}; identical rows share the first one's."""
    seen, directories = {}, {}
    for row in experiment.rows:
        config = scale.config(row)
        key = (config.replace(head_size=config.attention_head_size).to_json_string(), row.freeze)
        directories[row.name] = seen.setdefault(key, os.path.join(output_dir, row.name))
    return directories


def build(experiment, scale, paths, output_dir, dtype="float32"):
    """One run_lm.py step per distinct row, in order; returns list of plan.Step."""
    directories = run_directories(experiment, scale, output_dir)
    vocab_file = paths.vocab_file
    steps = []
    for row in experiment.rows:
        directory = directories[row.name]
        if directory != os.path.join(output_dir, row.name):
            continue  # Read from the identical row's run.
        flags = dict(paths.flags(), output_dir=directory, lm_config_file=config_path(output_dir, row),
                     do_train=True, do_eval=True, do_predict=True, random_seed=LM_SEED, dtype=dtype)
        if vocab_file:
            flags["vocab_file"] = vocab_file
        else:
            flags["vocab_size"] = scale.vocab_size
        if scale.preset:
            flags["preset"] = scale.preset
        else:
            flags.update(max_seq_length=scale.max_seq_length, train_batch_size=scale.train_batch_size,
                         num_train_steps=scale.num_train_steps, num_warmup_steps=scale.num_warmup_steps,
                         learning_rate=scale.learning_rate, learning_rate_schedule=scale.learning_rate_schedule)
        flags.update(save_checkpoints_steps=scale.save_checkpoints_steps, eval_batch_size=32)
        if row.freeze:
            flags["freeze"] = row.freeze
        steps.append(Step(row.name, row.name, "lm", "run_lm.py", flags,
                          tuple(os.path.join(directory, name) for name in RESULT_FILES)))
        if not vocab_file:
            vocab_file = os.path.join(directory, vocabulary_lib.MODEL_FILE)
    return steps
