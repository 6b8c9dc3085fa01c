"""BERT as a model family (training/family.py): its config, model, groups, initialisers and tasks."""

from modeling import bert_model
from modeling.bert_config import BertConfig
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from training.family import ModelFamily

FAMILY = ModelFamily(
    name="bert",
    config_class=BertConfig,
    config_file="bert_config.json",
    build_model=lambda config: bert_model.build_model(bert_model.BertModel(config)),
    parameter_groups=BERT_PARAMETER_GROUPS,
    num_layers=lambda config: config.num_hidden_layers,
    initializers=bert_model.initializers,
    presets={},
    tasks={
        "run_pretraining.py": "modeling.pretraining",
        "run_classifier.py": "modeling.classification",
        "run_squad.py": "modeling.squad",
    },
)
