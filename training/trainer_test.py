"""The training loop's pieces, each on its own, on a tiny classifier task."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import modeling
from training import distribution, run_setup, trainer as trainer_lib
from training.classification import losses_fn
from training.optimization import optimizer_slots
from training.training_options import Schedule, TrainingOptions

# No dropout: the hand-written reference step below has no dropout generator to share.
CONFIG = modeling.BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=24, max_position_embeddings=16, hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0)
SEQ, EXAMPLES = 8, 32


def _examples():
    rng = np.random.RandomState(0)
    ids = rng.randint(1, CONFIG.vocab_size, size=(EXAMPLES, SEQ)).astype(np.int32)
    return dict(input_ids=ids, input_mask=np.ones_like(ids), segment_ids=np.zeros_like(ids),
                label_ids=(ids[:, 0] % 2).astype(np.int32))


def _classifier_without_dropout():
    model = modeling.build_model(modeling.BertClassifierModel(CONFIG, 2))
    model.dropout.rate = 0.0  # The original's fixed 0.1 on the pooled output.
    return model


def _task():
    return trainer_lib.Task(
        build_model=_classifier_without_dropout,
        make_dataset=lambda batch_size, _: tf.data.Dataset.from_tensor_slices(_examples())
        .repeat().shuffle(EXAMPLES, seed=3).batch(batch_size, drop_remainder=True),
        model_inputs=lambda b: dict(input_ids=b["input_ids"], input_mask=b["input_mask"],
                                    token_type_ids=b["segment_ids"]),
        compute_losses=losses_fn(is_regression=False),
    )


@pytest.fixture(autouse=True)
def float32_policy():
    tf_keras.mixed_precision.set_global_policy("float32")


def _trainer(output_dir, num_train_steps=6, **overrides):
    values = dict(output_dir=str(output_dir), train_batch_size=4, learning_rate=1e-2,
                  save_checkpoints_steps=2, iterations_per_loop=2, random_seed=1)
    values.update(overrides)
    options = TrainingOptions(**values)
    options.validate()
    tf.io.gfile.makedirs(options.output_dir)
    return trainer_lib.Trainer(options, Schedule(num_train_steps, 0), distribution.get_strategy(options),
                               _task(), run_setup.bert_freezer(options, CONFIG))


def _values(model):
    return {n: e.variable.numpy().copy() for n, e in modeling.original_variables(model).items()}


@pytest.mark.parametrize("step, expected", [(0, 2), (1, 2), (2, 3), (3, 4), (4, 6), (5, 6), (6, 8), (9, 10)])
def test_next_boundary_stops_at_log_checkpoint_and_end(step, expected):
    # Checkpoints every 3, loops of 2, 10 steps.
    assert trainer_lib.next_boundary(step, 10, 3, 2) == expected


def test_check_finite_names_the_last_good_checkpoint():
    trainer_lib.check_finite([1.0, 2.0], 0, 2, None)
    with pytest.raises(FloatingPointError, match=r"The loss became nan between steps 4 and 6; stopping\. The last good checkpoint is out/model.ckpt-4\."):
        trainer_lib.check_finite([float("nan"), 1.0], 4, 6, "out/model.ckpt-4")
    with pytest.raises(FloatingPointError, match="checkpoint is none"):
        trainer_lib.check_finite([1.0, float("inf")], 0, 2, None)


def test_training_log_writes_lines_and_scalars(tmp_path, caplog):
    log = trainer_lib.TrainingLog(str(tmp_path), ["loss", "other_loss"], batch_size=8, num_train_steps=10)
    with caplog.at_level("INFO"):
        log.write(4, 2, [1.5, 0.25], 0.001, elapsed=2.0)
    log.close()
    assert "step 4/10: loss = 1.5000, other_loss = 0.2500, learning_rate = 0.001, examples/s = 8.0" in caplog.text
    [events] = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents")]
    scalars = {}
    for event in tf.compat.v1.train.summary_iterator(str(tmp_path / events)):
        for value in event.summary.value:
            scalars[value.tag] = (event.step, float(tf.make_ndarray(value.tensor)))
    assert scalars == {"loss": (4, 1.5), "other_loss": (4, 0.25), "learning_rate": (4, pytest.approx(0.001)),
                       "examples_per_second": (4, 8.0)}


def test_set_up_leaves_frozen_variables_out_of_the_optimizer(tmp_path):
    trainer = _trainer(tmp_path, freeze="embeddings,heads")
    frozen = [n for n in trainer.variables if n.startswith("bert/embeddings/") or n.startswith("output_")]
    assert trainer.plan.frozen == frozen
    trained = {id(v) for v in trainer.trained}
    for name, entry in trainer.variables.items():
        assert (id(entry.variable) in trained) == (name not in frozen), name
    slots = optimizer_slots(trainer.optimizer, trainer.trained[0])
    assert sorted(slots) == ["adam_m", "adam_v"]  # Built before the first step.
    report = json.loads((tmp_path / "parameters.json").read_text())
    assert report["frozen_variables"] == frozen and trainer.step == 0


def test_compiled_steps_match_a_hand_written_training_step(tmp_path):
    trainer = _trainer(tmp_path, freeze="ffn:1")
    before = _values(trainer.model)
    losses = trainer.run_steps(3)
    assert trainer.step == 3

    # The same three steps, eagerly, on a twin: same seed, same batches, same optimizer.
    twin = _trainer(tmp_path / "twin", freeze="ffn:1")
    task, dataset = _task(), iter(_task().make_dataset(4, None))
    expected_losses = []
    for _ in range(3):
        batch = next(dataset)
        with tf.GradientTape() as tape:
            loss = task.compute_losses(twin.model(task.model_inputs(batch), training=True), batch)["loss"]
        grads = tape.gradient(loss, twin.trained)
        twin.optimizer.apply_gradients(zip(grads, twin.trained))
        expected_losses.append(float(loss))
    np.testing.assert_allclose(losses, [np.mean(expected_losses)], rtol=1e-5)
    after, reference = _values(trainer.model), _values(twin.model)
    for name in after:
        np.testing.assert_allclose(after[name], reference[name], rtol=1e-5, atol=1e-6, err_msg=name)
        if name.startswith("bert/encoder/layer_1/intermediate/") or name.startswith("bert/encoder/layer_1/output/"):
            np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    assert not np.array_equal(after["output_weights"], before["output_weights"])


def test_save_then_restore_continues_exactly(tmp_path):
    straight = _trainer(tmp_path / "straight")
    straight.run_steps(2)
    straight.run_steps(2)

    first = _trainer(tmp_path / "resumed")
    first.run_steps(2)
    prefix = first.save()
    assert prefix.endswith("model.ckpt-2")
    second = _trainer(tmp_path / "resumed")  # A new process would build this.
    assert second.resume_from == prefix
    assert second.restore() == 2
    second.run_steps(2)
    a, b = _values(straight.model), _values(second.model)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_train_checkpoints_and_calls_back_after_each_loop(tmp_path):
    steps = []
    trainer = trainer_lib.train(
        TrainingOptions(output_dir=str(tmp_path), train_batch_size=4, save_checkpoints_steps=3,
                        iterations_per_loop=2, random_seed=1),
        Schedule(5, 1), distribution.get_strategy(TrainingOptions(output_dir="")), _task(),
        run_setup.bert_freezer(TrainingOptions(output_dir=""), CONFIG), callbacks=[steps.append])
    assert steps == [2, 3, 4, 5] and trainer.step == 5
    saved = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert saved == ["model.ckpt-3.index", "model.ckpt-5.index"]
    # Run again: already done, no callback.
    again = []
    trainer_lib.train(
        TrainingOptions(output_dir=str(tmp_path), train_batch_size=4, save_checkpoints_steps=3,
                        iterations_per_loop=2, random_seed=1),
        Schedule(5, 1), distribution.get_strategy(TrainingOptions(output_dir="")), _task(),
        run_setup.bert_freezer(TrainingOptions(output_dir=""), CONFIG), callbacks=[again.append])
    assert again == []
