"""Our layout as input (training state skipped, frozen-by-seed variables regenerated) and as output."""

import os

import numpy as np
import pytest
import tensorflow as tf

import modeling
from freezing import seeded_values
from modeling.checkpoint_conversion import original_format, testing
from modeling.checkpoint_conversion.converted_checkpoint import load_into_model
from modeling.checkpoint_conversion.errors import ConversionError


def test_a_training_checkpoint_reads_without_its_training_state(tmp_path):
    tensors = testing.random_tensors()
    directory = testing.write_original_dir(str(tmp_path), tensors)
    # An original training checkpoint: Adam slots and the step beside the weights.
    model = modeling.build_model(modeling.BertPretrainingModel(testing.CONFIG))
    modeling.load_checkpoint(model, os.path.join(directory, "bert_model.ckpt"))
    slots = {"bert/pooler/dense/kernel/adam_m": np.ones([32, 32], np.float32), "global_step": np.int64(9)}
    modeling.save_checkpoint(model, os.path.join(directory, "model.ckpt-9"), extra_tensors=slots)

    checkpoint = original_format.read_original(os.path.join(directory, "model.ckpt-9"))
    assert checkpoint.config == testing.CONFIG and checkpoint.vocab_file == os.path.join(directory, "vocab.txt")
    assert sorted(checkpoint.tensors) == sorted(tensors)
    for name, value in tensors.items():
        np.testing.assert_array_equal(checkpoint.tensors[name], value, err_msg=name)


def test_variables_frozen_by_seed_are_regenerated(tmp_path):
    tensors = testing.random_tensors()
    name = "bert/pooler/dense/kernel"
    regenerated = seeded_values.seeded_value(name, (32, 32), "truncated_normal", 0.02, 5)
    stored = {n: v for n, v in tensors.items() if n != name}
    directory = testing.write_original_dir(str(tmp_path), stored)
    prefix = os.path.join(directory, "bert_model.ckpt")
    seeded_values.write_manifest(prefix, {"random_seed": 5, "generator": seeded_values.GENERATOR, "variables": {
        name: dict(initializer="truncated_normal", stddev=0.02, shape=[32, 32],
                   sha256=seeded_values.checksum(regenerated))}})
    checkpoint = original_format.read_original(directory)
    np.testing.assert_array_equal(checkpoint.tensors[name], regenerated)
    assert sorted(checkpoint.tensors) == sorted(tensors)


def test_written_layout_holds_only_what_was_converted(tmp_path):
    tensors = {n: v for n, v in testing.random_tensors().items() if not n.startswith("cls/")}
    checkpoint = original_format.read_original(testing.write_original_dir(str(tmp_path / "in"), tensors))
    model, absent = load_into_model(checkpoint)
    paths = original_format.write_original(model, absent, checkpoint.config, checkpoint.vocab_file,
                                           str(tmp_path / "out"))
    assert sorted(os.path.basename(p) for p in paths) == sorted(os.listdir(tmp_path / "out"))
    written = dict(tf.train.list_variables(str(tmp_path / "out" / "bert_model.ckpt")))
    assert sorted(written) == sorted(tensors)
    assert modeling.BertConfig.from_json_file(str(tmp_path / "out" / "bert_config.json")) == testing.CONFIG


def test_missing_config_vocabulary_and_checkpoint_are_named(tmp_path):
    with pytest.raises(ConversionError, match=r"%s/bert_config.json not found beside the checkpoint %s/x; give "
                                              r"--bert_config_file" % (tmp_path, tmp_path)):
        original_format.read_original(str(tmp_path / "x"))
    with pytest.raises(ConversionError, match=r"--bert_config_file=/nowhere.json not found"):
        original_format.read_original(str(tmp_path / "x"), config_file="/nowhere.json")
    testing.CONFIG.to_json_file(str(tmp_path / "bert_config.json"))
    with pytest.raises(ConversionError, match=r"vocab.txt not found beside the checkpoint .*; give --vocab_file"):
        original_format.read_original(str(tmp_path / "x"))
    testing.write_vocab(str(tmp_path / "vocab.txt"))
    with pytest.raises(ConversionError, match=r"Checkpoint %s/x not found: expected the file %s/x.index"
                                              % (tmp_path, tmp_path)):
        original_format.read_original(str(tmp_path / "x"))
