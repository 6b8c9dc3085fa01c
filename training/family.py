"""What every model family offers the code that trains, freezes and checkpoints it.

A family (BERT in `modeling/`, the language model in `lm/`, the translation
model in `nmt/`) describes itself with one `ModelFamily` (`<package>/family.py`,
`FAMILY`). Its task modules take their set-up from it the same way — the
config recorded beside the checkpoints, the run's freezer over the family's
parameter groups — and its models carry the two methods the checkpoint code
and the seeded initialisation call on any model:

  model.checkpoint_variables() -> {original name: OriginalVariable}
    every weight under its original-layout checkpoint name and shape
    (checkpoints/original_names.py);
  model.initializer_of(name) -> (kind, scale)
    how that variable is drawn from (seed, name) (checkpoints/seeded_init.py).
"""

import dataclasses
from typing import Callable, Mapping

from freezing import ParameterGroups
from training.model_options import make_freezer


@dataclasses.dataclass(frozen=True)
class ModelFamily:
    """One model family.

    Fields:
      name: the family's name ("bert", "lm", "nmt").
      config_class: its config: `from_json_file(path)`, `to_json_string()`, `replace(**changes)`.
      config_file: the file a training run writes its effective config to,
        beside its checkpoints (a resume with another config is refused).
      build_model: config -> the built model, every variable created, with
        `checkpoint_variables()` and `initializer_of(name)` (the encoder for
        BERT, whose task models add their heads).
      parameter_groups: the groups `--freeze`/`--reinit` select.
      num_layers: config -> the layer count a `group:<i>` selector is checked
        against ({stack: count} for a family with stacks, NMT's encoder and decoder).
      initializers: config -> (name -> (kind, scale)), the model's
        `initializer_of` before any model exists (the freezer's seed manifest).
      presets: {--preset value: {flag: value}}; empty for a family without presets.
      tasks: {entry point: module whose `run(options)` it calls}.
    """

    name: str
    config_class: type
    config_file: str
    build_model: Callable
    parameter_groups: ParameterGroups
    num_layers: Callable
    initializers: Callable
    presets: Mapping[str, Mapping[str, object]]
    tasks: Mapping[str, str]

    def freezer(self, options, config):
        """The run's Freezer over this family's groups; bad selectors and --init_checkpoint fail here."""
        return make_freezer(options, self.parameter_groups, self.num_layers(config), self.initializers(config))

    def config_records(self, config):
        """{file name: text} a training run records beside its checkpoints: the effective config."""
        return {self.config_file: config.to_json_string()}
