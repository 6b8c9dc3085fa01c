"""The Transformer translation model as a model family (training/family.py)."""

from nmt import model as transformer_nmt
from nmt import presets
from nmt.config import NmtConfig
from nmt.parameter_groups import PARAMETER_GROUPS
from training.family import ModelFamily

FAMILY = ModelFamily(
    name="nmt",
    config_class=NmtConfig,
    config_file="nmt_config.json",
    build_model=lambda config: transformer_nmt.build_nmt(transformer_nmt.TransformerNmt(config)),
    parameter_groups=PARAMETER_GROUPS,
    num_layers=lambda config: config.num_layers,
    initializers=transformer_nmt.initializers,
    presets=presets.PRESETS,
    tasks={"run_translation.py": "nmt.task"},
)
