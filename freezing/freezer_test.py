"""The Freezer: selectors checked before any model, the plan, trained variables, records, manifests."""

import dataclasses
import json
import re
import time

import numpy as np
import pytest

import modeling
from checkpoints import seeded_init
from freezing import Freezer, FreezingOptions, seeded_values
from freezing.freezer import PARAMETERS_FILE
from modeling import bert_model
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from options import option

CONFIG = modeling.BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=20, max_position_embeddings=8)


@dataclasses.dataclass(kw_only=True)
class _Options(FreezingOptions):
    random_seed: int = option(3, "The seed of the run.")


def _freezer(freeze="", reinit="", save_frozen="values", random_seed=3):
    options = _Options(freeze=freeze, reinit=reinit, save_frozen=save_frozen, random_seed=random_seed)
    return Freezer(options, BERT_PARAMETER_GROUPS, CONFIG.num_hidden_layers, bert_model.initializers(CONFIG))


@pytest.fixture(scope="module")
def model():
    model = modeling.build_model(modeling.BertClassifierModel(CONFIG, 2))
    seeded_init.initialize(model, 3)
    return model


def test_bad_selectors_fail_at_construction_without_a_model():
    start = time.time()
    with pytest.raises(ValueError, match=r"--freeze: unknown parameter group 'atention' .*expected one of "
                                         r"embeddings, attention, ffn, pooler, heads.*did you mean attention"):
        _freezer(freeze="atention")
    with pytest.raises(ValueError, match=r"--reinit: 'ffn:2' matches no variable of this model \(the model has layers 0-1\)"):
        _freezer(reinit="ffn:2")
    assert time.time() - start < 1  # No model was built.


def test_plan_trained_variables_and_regenerable(model):
    variables = modeling.original_variables(model)
    freezer = _freezer(freeze="embeddings,attention:1", reinit="attention:1")
    # Embeddings came from a checkpoint; attention:1 is re-drawn, so only it is regenerable.
    loaded = [n for n in variables if n.startswith("bert/")]
    plan = freezer.plan(variables, loaded)
    assert plan.frozen == [n for n in variables if n.startswith(("bert/embeddings/", "bert/encoder/layer_1/attention/"))]
    assert plan.reinit == [n for n in variables if n.startswith("bert/encoder/layer_1/attention/")]
    assert plan.regenerable == plan.reinit
    trained = Freezer.trained_variables(plan, variables, model.trainable_variables)
    frozen_ids = {id(variables[n].variable) for n in plan.frozen}
    assert len(trained) == len(model.trainable_variables) - len(plan.frozen)
    assert not frozen_ids & {id(v) for v in trained}


def test_reinitialize_redraws_from_the_seed(model):
    variables = modeling.original_variables(model)
    name = "bert/encoder/layer_0/intermediate/dense/kernel"
    variables[name].variable.assign(np.zeros((16, 20), np.float32))
    freezer = _freezer(reinit="ffn:0")
    freezer.reinitialize(freezer.plan(variables), variables)
    np.testing.assert_array_equal(variables[name].variable.numpy(),
                                  seeded_values.seeded_value(name, (16, 20), "truncated_normal", 0.02, 3))


def test_manifest_only_with_save_frozen_seed(model):
    variables = modeling.original_variables(model)
    assert _freezer(freeze="ffn").frozen_manifest(_freezer(freeze="ffn").plan(variables), variables) is None
    freezer = _freezer(freeze="ffn", save_frozen="seed")
    manifest = freezer.frozen_manifest(freezer.plan(variables), variables)
    ffn = [n for n in variables if re.match(r"bert/encoder/layer_\d+/(intermediate|output)/", n)]
    assert sorted(manifest["variables"]) == sorted(ffn) and len(ffn) == 12
    assert manifest["random_seed"] == 3
    nothing_frozen = _freezer(save_frozen="seed")
    assert nothing_frozen.frozen_manifest(nothing_frozen.plan(variables), variables) is None


def test_record_writes_the_report_and_refuses_other_flags(model, tmp_path):
    variables = modeling.original_variables(model)
    freezer = _freezer(freeze="pooler")
    content = freezer.record(str(tmp_path), freezer.plan(variables), variables)
    written = json.loads((tmp_path / PARAMETERS_FILE).read_text())
    assert written == json.loads(json.dumps(content))
    assert written["flags"] == {"freeze": "pooler", "reinit": "", "save_frozen": "values", "random_seed": 3}
    assert written["groups"]["pooler"] == {"parameters": 16 * 16 + 16, "trainable": 0, "frozen": 16 * 16 + 16}
    assert written["frozen_variables"] == ["bert/pooler/dense/kernel", "bert/pooler/dense/bias"]
    _freezer(freeze="pooler").check_recorded(str(tmp_path))  # The same flags resume.
    with pytest.raises(ValueError, match=r"parameters.json records --freeze='pooler' but this run has --freeze='ffn'"):
        _freezer(freeze="ffn").check_recorded(str(tmp_path))
    with pytest.raises(ValueError, match=r"parameters.json records --random_seed=3 but this run has --random_seed=4"):
        _freezer(freeze="pooler", random_seed=4).check_recorded(str(tmp_path))
    # A record written before --random_seed was recorded resumes with any seed.
    written["flags"].pop("random_seed")
    (tmp_path / PARAMETERS_FILE).write_text(json.dumps(written))
    _freezer(freeze="pooler", random_seed=4).check_recorded(str(tmp_path))
