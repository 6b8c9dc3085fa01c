"""Training checkpoints: the original layout with slots and global_step, the extra state, the index file, restore errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

import modeling
from checkpoints import seeded_init
from checkpoints import training_checkpoint
from checkpoints.training_checkpoint import optimizer_slots
from modeling import bert_model
from training.optimization import build_optimizer, create_optimizer

CONFIG = modeling.BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=12, max_position_embeddings=8)


def _setup(seed=1, steps=2):
    """A model and an optimizer that has taken `steps` steps on all but the pooler."""
    model = modeling.build_model(modeling.BertModel(CONFIG))
    seeded_init.initialize(model, seed)
    variables = [v for v in model.trainable_variables if "pooler" not in v.name]
    optimizer = build_optimizer(create_optimizer("adamw", 1e-2, 10, 0), variables)
    for _ in range(steps):
        optimizer.apply_gradients([(tf.ones_like(v) * 0.1, v) for v in variables])
    counter = tf.Variable(5)
    return model, optimizer, variables, tf.train.Checkpoint(counter=counter), counter


def test_save_writes_the_original_training_layout_and_the_state(tmp_path):
    model, optimizer, variables, state, _ = _setup()
    prefix = training_checkpoint.save(str(tmp_path), model, optimizer, state, variables)
    assert prefix == str(tmp_path / "model.ckpt-2")
    shapes = dict(tf.train.list_variables(prefix))
    reader = tf.train.load_checkpoint(prefix)
    assert reader.get_tensor("global_step") == 2
    kernel = "bert/encoder/layer_0/attention/self/query/kernel"
    assert shapes[kernel + "/adam_m"] == shapes[kernel] == [8, 8]
    entry = modeling.original_variables(model)[kernel]
    np.testing.assert_array_equal(reader.get_tensor(kernel + "/adam_v"),
                                  entry.to_original(optimizer_slots(optimizer, entry.variable)["adam_v"].numpy()))
    # The pooler did not train: no slots for it.
    assert "bert/pooler/dense/kernel" in shapes and "bert/pooler/dense/kernel/adam_m" not in shapes
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "model.ckpt-2"\nall_model_checkpoint_paths: "model.ckpt-2"\n')
    assert os.path.exists(training_checkpoint.state_prefix(str(tmp_path), 2) + ".index")
    assert training_checkpoint.latest(str(tmp_path)) == prefix
    assert training_checkpoint.latest(str(tmp_path / "nothing")) is None


def test_restore_brings_back_weights_slots_step_and_state(tmp_path):
    model, optimizer, variables, state, _ = _setup()
    prefix = training_checkpoint.save(str(tmp_path), model, optimizer, state, variables)
    other, other_optimizer, other_variables, other_state, counter = _setup(seed=2, steps=0)
    counter.assign(0)
    assert training_checkpoint.restore(prefix, other, other_optimizer, other_state, other_variables) == 2
    assert int(other_optimizer.iterations) == 2 and int(counter) == 5
    for a, b in zip(model.weights, other.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.name)
    for a, b in zip(variables, other_variables):
        for slot in ("adam_m", "adam_v"):
            np.testing.assert_array_equal(optimizer_slots(optimizer, a)[slot].numpy(),
                                          optimizer_slots(other_optimizer, b)[slot].numpy())


def test_restore_refuses_what_is_not_a_training_checkpoint_of_this_model(tmp_path, caplog):
    model, optimizer, variables, state, _ = _setup()
    # A model checkpoint: no slots.
    plain = modeling.save_checkpoint(model, str(tmp_path / "plain" / "model.ckpt-0"),
                                     extra_tensors={"global_step": np.int64(0)})
    with pytest.raises(ValueError, match=r"Cannot resume from .*model.ckpt-0: optimizer slot bert/embeddings/word_embeddings/adam_m is missing"):
        training_checkpoint.restore(plain, model, optimizer, state, variables)
    # Another model: variables missing.
    prefix = training_checkpoint.save(str(tmp_path / "run"), model, optimizer, state, variables)
    bigger = modeling.build_model(modeling.BertModel(CONFIG.replace(num_hidden_layers=2)))
    with pytest.raises(ValueError, match=r"Cannot resume from .*: it lacks 16 model variables \(bert/encoder/layer_1/"):
        training_checkpoint.restore(prefix, bigger, optimizer, state, variables)
    # A checkpoint without our extra state (e.g. the original's): warned, then resumed.
    for path in tf.io.gfile.glob(training_checkpoint.state_prefix(str(tmp_path / "run"), 2) + ".*"):
        tf.io.gfile.remove(path)
    with caplog.at_level("WARNING"):
        assert training_checkpoint.restore(prefix, model, optimizer, state, variables) == 2
    assert "the input pipeline and dropout restart from their seeds" in caplog.text


def test_frozen_manifest_variables_are_left_out_and_the_manifest_written(tmp_path):
    from freezing import seeded_values

    model, optimizer, variables, state, _ = _setup()
    name = "bert/pooler/dense/kernel"
    manifest = seeded_values.manifest(modeling.original_variables(model), [name], 1, bert_model.initializers(CONFIG))
    prefix = training_checkpoint.save(str(tmp_path), model, optimizer, state, variables, manifest)
    assert name not in dict(tf.train.list_variables(prefix))
    assert seeded_values.read_manifest(prefix) == manifest


def test_each_worker_of_a_cluster_has_its_own_state_and_the_chief_deletes_them_with_the_checkpoint(tmp_path):
    output = str(tmp_path)
    assert training_checkpoint.state_prefix(output, 4) == os.path.join(output, "training_state", "ckpt-4")
    assert training_checkpoint.state_prefix(output, 4, (1, 2)) == os.path.join(
        output, "training_state", "worker-1-of-2", "ckpt-4")
    model, optimizer, variables, state, counter = _setup(steps=0)
    for step in range(1, training_checkpoint.KEEP_CHECKPOINT_MAX + 2):
        optimizer.iterations.assign(step)
        for worker in range(2):  # as Trainer.save: every worker's state, then the chief's checkpoint
            counter.assign(10 * step + worker)
            training_checkpoint.write_state(output, state, step, (worker, 2))
        training_checkpoint.save(output, model, optimizer, None, variables)
    # Step 1 went with its states; the single-worker path holds none.
    for worker in range(2):
        directory = tmp_path / "training_state" / ("worker-%d-of-2" % worker)
        assert sorted(f for f in os.listdir(directory) if f.endswith(".index")) == [
            "ckpt-%d.index" % s for s in range(2, 7)]
    assert not [f for f in os.listdir(tmp_path / "training_state") if f.startswith("ckpt-")]
    # Each worker restores its own.
    prefix = training_checkpoint.latest(output)
    for worker in range(2):
        training_checkpoint.restore(prefix, model, optimizer, state, variables, (worker, 2))
        assert int(counter) == 60 + worker


def test_a_resume_with_another_number_of_workers_restarts_the_input(tmp_path, caplog):
    model, optimizer, variables, state, counter = _setup()
    training_checkpoint.write_state(str(tmp_path), state, 2, (0, 2))
    prefix = training_checkpoint.save(str(tmp_path), model, optimizer, None, variables)
    counter.assign(0)
    with caplog.at_level("WARNING"):
        assert training_checkpoint.restore(prefix, model, optimizer, state, variables, (0, 3)) == 2
    assert "from a run with another number of workers?" in caplog.text and int(counter) == 0
