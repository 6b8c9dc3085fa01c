"""Freezing masks in pre-training: the paper's presets, frozen tensors untouched,
no optimizer state for them, seed-saved checkpoints, --reinit."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import freezing
import modeling
from checkpoints import seeded_init
from freezing import seeded_values
from modeling import pretraining
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from modeling.pretraining import PretrainingOptions
from training.testing.pretraining_records import TINY_CONFIG, write_tiny_setup

# Bogoychev (2021): one or two of the three groups frozen.
PRESETS = ["embeddings", "attention", "ffn", "embeddings,attention", "embeddings,ffn", "attention,ffn"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return write_tiny_setup(tmp_path_factory.mktemp("freezing_data"))


def _options(setup, output_dir, **overrides):
    config, inputs = setup
    values = dict(
        bert_config_file=config, input_file=inputs, output_dir=str(output_dir),
        max_seq_length=32, max_predictions_per_seq=5, do_train=True, train_batch_size=8,
        learning_rate=1e-2, num_train_steps=6, num_warmup_steps=0, save_checkpoints_steps=6,
        iterations_per_loop=3, random_seed=5,
    )
    values.update(overrides)
    return PretrainingOptions(**values)


def _seeded_values(seed=5):
    config = modeling.BertConfig.from_dict(TINY_CONFIG)
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    seeded_init.initialize(model, seed)
    return {n: e.to_original(e.variable.numpy()) for n, e in modeling.original_variables(model).items()}


def _checkpoint(output_dir, step):
    return tf.train.load_checkpoint(os.path.join(str(output_dir), "model.ckpt-%d" % step))


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_trains_only_the_rest(setup, tmp_path, preset):
    output = tmp_path / "out"
    pretraining.run(_options(setup, output, freeze=preset))
    initial = _seeded_values()
    reader = _checkpoint(output, 6)
    saved = reader.get_variable_to_shape_map()
    groups = set(preset.split(","))
    for name, value in initial.items():
        group = BERT_PARAMETER_GROUPS.group_of(name)[0]
        after = reader.get_tensor(name)
        if group in groups:
            np.testing.assert_array_equal(after, value, err_msg=name)  # bit for bit
            assert name + "/adam_m" not in saved and name + "/adam_v" not in saved
        elif name.endswith("kernel") or name.endswith("embeddings") or name.endswith("output_weights"):
            assert not np.array_equal(after, value), name + " did not train"
            assert name + "/adam_m" in saved
    report = json.loads((output / freezing.PARAMETERS_FILE).read_text())
    assert report["flags"]["freeze"] == preset
    for group, row in report["groups"].items():
        assert row["frozen"] == (row["parameters"] if group in groups else 0)
    assert 0 < report["trainable_share"] < 1
    assert report["trainable"] + report["frozen"] == report["total"]


def test_frozen_from_init_checkpoint_keeps_its_values_and_gets_no_decay(setup, tmp_path):
    pretraining.run(_options(setup, tmp_path / "pretrained", num_train_steps=3, save_checkpoints_steps=3))
    pretrained = _checkpoint(tmp_path / "pretrained", 3)
    output = tmp_path / "finetuned"
    # Weight decay alone would shrink every frozen kernel: a large learning rate
    # makes any leak obvious.
    pretraining.run(_options(setup, output, init_checkpoint=str(tmp_path / "pretrained" / "model.ckpt-3"),
                             freeze="ffn,embeddings", learning_rate=1.0))
    after = _checkpoint(output, 6)
    for name in after.get_variable_to_shape_map():
        if "/intermediate/" in name or name.startswith("bert/embeddings/"):
            if not name.endswith(("/adam_m", "/adam_v")):
                np.testing.assert_array_equal(after.get_tensor(name), pretrained.get_tensor(name), err_msg=name)


def test_reinit_and_freeze_from_pretrained_is_random_and_frozen(setup, tmp_path):
    pretraining.run(_options(setup, tmp_path / "pretrained", num_train_steps=3, save_checkpoints_steps=3,
                             random_seed=99))
    pretrained = _checkpoint(tmp_path / "pretrained", 3)
    output = tmp_path / "out"
    pretraining.run(_options(setup, output, init_checkpoint=str(tmp_path / "pretrained"),
                             freeze="attention:1", reinit="attention:1"))
    after = _checkpoint(output, 6)
    initial = _seeded_values(seed=5)
    for name, value in initial.items():
        if name.startswith("bert/encoder/layer_1/attention/"):
            np.testing.assert_array_equal(after.get_tensor(name), value, err_msg=name)
    kernel = "bert/encoder/layer_1/attention/self/query/kernel"
    assert not np.array_equal(after.get_tensor(kernel), pretrained.get_tensor(kernel))
    # Layer 0 started from the checkpoint and trained.
    layer0 = "bert/encoder/layer_0/attention/self/query/kernel"
    assert not np.array_equal(after.get_tensor(layer0), pretrained.get_tensor(layer0))
    report = json.loads((output / freezing.PARAMETERS_FILE).read_text())
    assert report["reinit_variables"] == [n for n in initial if n.startswith("bert/encoder/layer_1/attention/")]


class _Crash(Exception):
    pass


def test_save_frozen_by_seed_leaves_tensors_out_and_regenerates_them(setup, tmp_path):
    output = tmp_path / "out"
    options = _options(setup, output, freeze="ffn,embeddings", save_frozen="seed",
                       num_train_steps=6, save_checkpoints_steps=3)
    pretraining.run(options)
    prefix = str(output / "model.ckpt-3")
    saved = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    manifest = seeded_values.read_manifest(prefix)
    frozen = sorted(manifest["variables"])
    assert frozen and all(name not in saved for name in frozen)
    assert "bert/embeddings/word_embeddings" in frozen
    assert manifest["random_seed"] == 5
    # Each entry names its group as --freeze selects it, for messages.
    assert manifest["variables"]["bert/embeddings/word_embeddings"]["group"] == "embeddings"
    assert manifest["variables"]["bert/encoder/layer_1/output/dense/kernel"]["group"] == "ffn:1"

    # Any loader regenerates and verifies them.
    model = modeling.build_model(modeling.BertPretrainingModel(modeling.BertConfig.from_dict(TINY_CONFIG)))
    result = modeling.load_checkpoint(model, str(output / "model.ckpt-6"))
    assert result.missing == [] and result.regenerated == frozen
    initial = _seeded_values()
    entries = modeling.original_variables(model)
    for name in frozen:
        np.testing.assert_array_equal(entries[name].to_original(entries[name].variable.numpy()), initial[name])

    # Resuming from a seed-saved checkpoint continues exactly as an uninterrupted run.
    # (Loops of 2 steps, so that a loop ends at step 4, past the checkpoint at 3.)
    runs = dict(freeze="ffn,embeddings", save_frozen="seed", num_train_steps=6,
                save_checkpoints_steps=3, iterations_per_loop=2)
    straight = tmp_path / "straight"
    pretraining.run(_options(setup, straight, **runs))
    resumed = tmp_path / "resumed"

    def crash_after_step_4(step):
        if step == 4:
            raise _Crash()

    with pytest.raises(_Crash):
        pretraining.run(_options(setup, resumed, **runs), callbacks=[crash_after_step_4])
    assert tf.train.latest_checkpoint(str(resumed)).endswith("model.ckpt-3")
    pretraining.run(_options(setup, resumed, **runs))
    a, b = _checkpoint(straight, 6), _checkpoint(resumed, 6)
    assert sorted(a.get_variable_to_shape_map()) == sorted(b.get_variable_to_shape_map())
    for name in a.get_variable_to_shape_map():
        np.testing.assert_array_equal(a.get_tensor(name), b.get_tensor(name), err_msg=name)

    # A tampered manifest is a clear error.
    path = prefix + seeded_values.MANIFEST_SUFFIX
    content = json.loads(open(path).read())
    content["variables"]["bert/embeddings/word_embeddings"]["sha256"] = "0" * 64
    open(path, "w").write(json.dumps(content))
    with pytest.raises(ValueError, match=r"Regenerating frozen variable bert/embeddings/word_embeddings "
                                         r"\(group embeddings\) from seed 5"):
        modeling.load_checkpoint(model, prefix)


def test_resume_with_other_freeze_flags_or_seed_is_refused(setup, tmp_path):
    output = tmp_path / "out"
    pretraining.run(_options(setup, output, freeze="attention", save_frozen="seed", num_train_steps=3,
                             save_checkpoints_steps=3))
    with pytest.raises(ValueError, match=r"parameters.json records --freeze='attention' but this run has --freeze='ffn'"):
        pretraining.run(_options(setup, output, freeze="ffn", save_frozen="seed"))
    # Its next checkpoint's manifest would name seed 6 for the frozen values seed 5 drew.
    with pytest.raises(ValueError, match=r"parameters.json records --random_seed=5 but this run has --random_seed=6"):
        pretraining.run(_options(setup, output, freeze="attention", save_frozen="seed", random_seed=6))


def test_bad_selector_names_the_flag(setup, tmp_path):
    with pytest.raises(ValueError, match=r"--freeze: 'attention:7' matches no variable of this model \(the model has layers 0-1\)"):
        pretraining.run(_options(setup, tmp_path / "out", freeze="attention:7"))
    with pytest.raises(ValueError, match="--save_frozen=disk is not supported"):
        pretraining.run(_options(setup, tmp_path / "out", save_frozen="disk"))


def test_misspelt_group_fails_before_anything_is_built(setup, tmp_path):
    """--freeze=atention: a one-line error listing the groups, before the model, data or output_dir."""
    with pytest.raises(ValueError, match=r"^--freeze: unknown parameter group 'atention' in 'atention'; expected one "
                                         r"of embeddings, attention, ffn, pooler, heads, or re:<regex> \(did you mean attention\?\)\.$"):
        pretraining.run(_options(setup, tmp_path / "out", freeze="atention"))
    assert not (tmp_path / "out").exists()
