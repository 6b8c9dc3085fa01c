"""Every model family offers the same interface, and the shared code takes each the same way."""

import dataclasses
import importlib
import os

import numpy as np
import pytest
import tf_keras

from checkpoints import seeded_init, tf1_checkpoint
from checkpoints.original_names import original_variables
from lm.config import LmConfig
from lm.family import FAMILY as LM
from modeling.bert_config import BertConfig
from modeling.family import FAMILY as BERT
from nmt.config import NmtConfig
from nmt.family import FAMILY as NMT
from training.training_options import TrainingOptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = {
    "bert": (BERT, BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                              head_size=12, intermediate_size=24, max_position_embeddings=16, type_vocab_size=2)),
    "lm": (LM, LmConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, head_size=12,
                        intermediate_size=24, max_position_embeddings=16)),
    "lm_toolkit_init": (LM, LmConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=24, max_position_embeddings=16, initializer="marian")),
    "nmt": (NMT, NmtConfig(vocab_size=40, hidden_size=16, num_encoder_layers=2, num_decoder_layers=2,
                           num_attention_heads=2, head_size=12, intermediate_size=24, norm_first=True)),
}


def _values(model):
    return {name: entry.to_original(entry.variable.numpy()) for name, entry in original_variables(model).items()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_config_records_round_trip(case, tmp_path):
    family, config = CASES[case]
    (name, text), = family.config_records(config).items()
    assert name == family.config_file and name.endswith("_config.json")
    (tmp_path / name).write_text(text)
    assert family.config_class.from_json_file(str(tmp_path / name)) == config


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_names_every_variable_and_draws_it_as_the_family_says(case):
    family, config = CASES[case]
    model = family.build_model(config)
    variables = original_variables(model)  # Refuses a weight without a name.
    assert len(variables) == len(model.weights)
    initializer_of = family.initializers(config)
    for name in variables:
        assert model.initializer_of(name) == initializer_of(name), name
    # Every variable is in one of the family's groups, and every group has variables but BERT's
    # "heads", the task models' output layers (modeling/parameter_groups_test.py covers them).
    groups = {family.parameter_groups.locate(name)[0] for name in variables}
    assert groups <= set(family.parameter_groups.groups)
    assert set(family.parameter_groups.groups) - groups == ({"heads"} if family is BERT else set())


def test_a_model_without_checkpoint_names_is_refused():
    with pytest.raises(TypeError, match=r"Sequential has no checkpoint_variables\(\)"):
        original_variables(tf_keras.Sequential())


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_initialisation_and_checkpoint_round_trip(case, tmp_path):
    family, config = CASES[case]
    model = family.build_model(config)
    seeded_init.initialize(model, seed=5)
    first = _values(model)
    seeded_init.initialize(model, seed=5)
    for name, value in _values(model).items():
        np.testing.assert_array_equal(value, first[name], err_msg=name)
    prefix = str(tmp_path / "model.ckpt-0")
    tf1_checkpoint.save_checkpoint(model, prefix)
    other = family.build_model(config)
    seeded_init.initialize(other, seed=6)
    result = tf1_checkpoint.load_checkpoint(other, prefix)
    assert not result.missing and not result.unexpected
    for name, value in _values(other).items():
        np.testing.assert_array_equal(value, first[name], err_msg=name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_freezer_selects_the_family_groups(case):
    family, config = CASES[case]
    variables = original_variables(family.build_model(config))
    freezer = family.freezer(TrainingOptions(output_dir="", freeze="ffn"), config)
    plan = freezer.plan(variables)
    expected = [name for name in variables if family.parameter_groups.locate(name)[0] == "ffn"]
    assert sorted(plan.frozen) == sorted(expected) and expected
    num_layers = family.num_layers(config)
    beyond = ("ffn:encoder:%d" % num_layers["encoder"]) if family.parameter_groups.stacks else "ffn:%d" % num_layers
    with pytest.raises(ValueError, match="--freeze"):
        family.freezer(TrainingOptions(output_dir="", freeze=beyond), config)


@pytest.mark.parametrize("family", [BERT, LM, NMT], ids=lambda f: f.name)
def test_tasks_and_presets(family):
    for entry_point, module_name in family.tasks.items():
        module = importlib.import_module(module_name)
        assert callable(module.run)
        with open(os.path.join(ROOT, entry_point)) as f:
            assert "from %s import" % module_name in f.read(), entry_point
        flags = {field.name for value in vars(module).values()
                 if dataclasses.is_dataclass(value) and isinstance(value, type)
                 for field in dataclasses.fields(value)}
        for preset, values in family.presets.items():
            assert set(values) <= flags, (preset, set(values) - flags)
    if family is BERT:
        assert family.presets == {}
    else:
        assert family.presets
