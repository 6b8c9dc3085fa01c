"""The Transformer language model as a model family (training/family.py)."""

from lm import model as transformer_lm
from lm import presets
from lm.config import LmConfig
from lm.parameter_groups import PARAMETER_GROUPS
from training.family import ModelFamily

FAMILY = ModelFamily(
    name="lm",
    config_class=LmConfig,
    config_file="lm_config.json",
    build_model=lambda config: transformer_lm.build_lm(transformer_lm.TransformerLm(config)),
    parameter_groups=PARAMETER_GROUPS,
    num_layers=lambda config: config.num_hidden_layers,
    initializers=transformer_lm.initializers,
    presets=presets.PRESETS,
    tasks={"run_lm.py": "lm.task"},
)
