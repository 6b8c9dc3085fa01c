"""Converting BERT checkpoints between Hugging Face, Model Garden and our (the original) layout.

`converter.run(ConvertCheckpointOptions(...))` is convert_checkpoint.py. The
pieces: `hf_names` and `hf_config` (HF's names, layouts and config keys),
`hf_format` (HF directories), `model_garden` (Model Garden's object-based
checkpoints), `original_format` (bert_model.ckpt and bert_config.json), and
`converted_checkpoint` (the weights under original names, checked by loading
them into our model).
"""

from modeling.checkpoint_conversion.converter import Conversion, ConvertCheckpointOptions, run
from modeling.checkpoint_conversion.errors import ConversionError

__all__ = ["Conversion", "ConversionError", "ConvertCheckpointOptions", "run"]
