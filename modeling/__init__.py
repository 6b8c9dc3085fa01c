"""The BERT family: BERT modeling in TensorFlow 2 / Keras, with an independent attention head size.

The names a reader of the original `modeling.py` looks for are here:
`BertConfig`, `BertModel`, plus the task models, parameter counting and the
original checkpoint layout. The package also holds what the other families
keep beside their model: its family description (`family.py`) and its tasks
(`pretraining.py`, `classification.py`, `squad.py`), imported on their own.
"""

from checkpoints.original_names import original_variables
from checkpoints.tf1_checkpoint import LoadResult, load_checkpoint, save_checkpoint
from layers.activations import gelu, gelu_exact, get_activation
from layers.initializers import create_initializer
from modeling.bert_config import BertConfig
from modeling.bert_model import BertModel, build_model
from modeling.classifier_model import BertClassifierModel
from modeling.parameter_groups import count_parameters
from modeling.pretraining_model import BertPretrainingModel
from modeling.squad_model import BertSquadModel

__all__ = [
    "BertClassifierModel",
    "BertConfig",
    "BertModel",
    "BertPretrainingModel",
    "BertSquadModel",
    "LoadResult",
    "build_model",
    "count_parameters",
    "create_initializer",
    "gelu",
    "gelu_exact",
    "get_activation",
    "load_checkpoint",
    "original_variables",
    "save_checkpoint",
]
