"""The training loop's pieces, each on its own, on a tiny classifier task."""

import dataclasses
import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import modeling
from checkpoints import tf1_checkpoint
from checkpoints.training_checkpoint import optimizer_slots
from modeling.classification import losses_fn
from modeling.family import FAMILY
from training import distribution, process, trainer as trainer_lib
from training.testing.summaries import read_scalars
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
                               _task(), FAMILY.freezer(options, CONFIG))


def _values(model):
    return {n: e.variable.numpy().copy() for n, e in modeling.original_variables(model).items()}


@pytest.mark.parametrize("step, expected", [(0, 2), (1, 2), (2, 3), (3, 4), (4, 6), (5, 6), (6, 8), (9, 10)])
def test_next_boundary_stops_at_loop_checkpoint_and_end(step, expected):
    # Checkpoints every 3, loops of 2, log lines every 100, 10 steps.
    assert trainer_lib.next_boundary(step, 10, 3, 2, 100) == expected


@pytest.mark.parametrize("step, expected", [(0, 4), (3, 4), (4, 8), (8, 10)])
def test_next_boundary_stops_at_log_lines_within_long_loops(step, expected):
    # The defaults' shape: checkpoints every 1000 steps, loops of 1000, a log line every 4.
    assert trainer_lib.next_boundary(step, 10, 1000, 1000, 4) == expected


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
    assert read_scalars(str(tmp_path)) == {"loss": (4, 1.5), "other_loss": (4, 0.25), "learning_rate": (4, pytest.approx(0.001)),
                       "examples_per_second": (4, 8.0)}


def test_training_log_turns_a_token_count_into_tokens_per_second(tmp_path, caplog):
    log = trainer_lib.TrainingLog(str(tmp_path), ["loss", "target_tokens"], batch_size=8, num_train_steps=10,
                                  tokens_name="target_tokens", num_replicas=2)
    with caplog.at_level("INFO"):
        log.write(4, 2, [1.5, 100.0], 0.001, elapsed=2.0)
    log.close()
    # 2 steps of 2 replicas x 100 real tokens in 2 seconds.
    assert "step 4/10: loss = 1.5000, learning_rate = 0.001, examples/s = 8.0, tokens/s = 200.0" in caplog.text
    scalars = read_scalars(str(tmp_path))
    assert scalars["tokens_per_second"] == (4, 200.0) and "target_tokens" not in scalars


def test_training_log_without_a_directory_only_logs(tmp_path, caplog, monkeypatch):
    # The other workers of a cluster: the chief writes the TensorBoard events.
    monkeypatch.chdir(tmp_path)
    log = trainer_lib.TrainingLog(None, ["loss"], batch_size=8, num_train_steps=10)
    with caplog.at_level("INFO"):
        log.write(4, 2, [1.5], 0.001, elapsed=2.0)
    log.close()
    assert "step 4/10: loss = 1.5000" in caplog.text
    assert os.listdir(tmp_path) == []


def test_set_up_leaves_frozen_variables_out_of_the_optimizer(tmp_path):
    trainer = _trainer(tmp_path, freeze="embeddings,heads")
    frozen = [n for n in trainer.variables if n.startswith("bert/embeddings/") or n.startswith("output_")]
    assert trainer.plan.frozen == frozen
    trained = {id(v) for v in trainer.trained}
    for name, entry in trainer.variables.items():
        assert (id(entry.variable) in trained) == (name not in frozen), name
    slots = optimizer_slots(trainer.optimizer, trainer.trained[0])
    assert sorted(slots) == ["adam_m", "adam_v"]  # Built before the first step.
    assert not (tmp_path / "parameters.json").exists()  # Only once the run is accepted.
    trainer.write_records()
    report = json.loads((tmp_path / "parameters.json").read_text())
    assert report["frozen_variables"] == frozen and trainer.step == 0


def test_compiled_steps_match_a_hand_written_training_step(tmp_path):
    # BERT's Adam has no bias correction: after one step sqrt(v) is 0.03 |g|, so where |g| is near
    # epsilon / 0.03 (3e-5) the update swings by up to 250 times the gradient's own rounding, which
    # differs between graph and eager kernels (and between CPUs). Epsilon 1e-3 bounds that gain by 1
    # here, so the comparison measures the loop, not Adam's conditioning at one weight in thousands.
    trainer = _trainer(tmp_path, freeze="ffn:1")
    trainer.optimizer.epsilon = 1e-3
    before = _values(trainer.model)
    losses = trainer.run_steps(3)
    assert trainer.step == 3

    # The same three steps, eagerly, on a twin: same seed, same batches, same optimizer.
    twin = _trainer(tmp_path / "twin", freeze="ffn:1")
    twin.optimizer.epsilon = 1e-3
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
        # 1e-5 is 0.1% of a step at lr 1e-2.
        np.testing.assert_allclose(after[name], reference[name], rtol=1e-5, atol=1e-5, err_msg=name)
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
        FAMILY.freezer(TrainingOptions(output_dir=""), CONFIG), callbacks=[steps.append])
    assert steps == [2, 3, 4, 5] and trainer.step == 5
    saved = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    assert saved == ["model.ckpt-3.index", "model.ckpt-5.index"]
    # Run again: already done, no training; the callbacks run once more for the checkpoint resumed from
    # (an evaluation killed after its checkpoint is done then), and only for it.
    again = []
    trainer_lib.train(
        TrainingOptions(output_dir=str(tmp_path), train_batch_size=4, save_checkpoints_steps=3,
                        iterations_per_loop=2, random_seed=1),
        Schedule(5, 1), distribution.get_strategy(TrainingOptions(output_dir="")), _task(),
        FAMILY.freezer(TrainingOptions(output_dir=""), CONFIG), callbacks=[again.append])
    assert again == [5]


def test_a_callback_stops_training_early_and_the_step_is_saved(tmp_path, caplog):
    def stop_at_3(step):
        if step == 3:
            raise trainer_lib.StopTraining("enough")

    with caplog.at_level("INFO"):
        trainer = _train(tmp_path, _task(), num_train_steps=8, callbacks=[stop_at_3], save_checkpoints_steps=4,
                         iterations_per_loop=3)
    assert trainer.step == 3
    assert "Training stops at step 3 of 8: enough" in caplog.text
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == ["model.ckpt-3.index"]


def _train(output_dir, task, num_train_steps=2, callbacks=(), **overrides):
    values = dict(output_dir=str(output_dir), train_batch_size=4, save_checkpoints_steps=2,
                  iterations_per_loop=2, random_seed=1)
    values.update(overrides)
    options = TrainingOptions(**values)
    options.validate()
    process.make_output_dir(options.output_dir)
    return trainer_lib.train(options, Schedule(num_train_steps, 0), distribution.get_strategy(options),
                             task, FAMILY.freezer(options, CONFIG), callbacks)


def _task_of(config):
    def build_model():
        return modeling.build_model(modeling.BertClassifierModel(config, 2))
    return dataclasses.replace(_task(), build_model=build_model, records=FAMILY.config_records(config))


def _contents(directory, names):
    return {name: (directory / name).read_bytes() if (directory / name).exists() else None for name in names}


def test_a_refused_resume_leaves_the_records_as_they_were(tmp_path):
    _train(tmp_path, _task_of(CONFIG))
    records = ["bert_config.json", "parameters.json"]
    before = _contents(tmp_path, records)
    assert json.loads(before["bert_config.json"]) == CONFIG.to_dict()
    other = CONFIG.replace(head_size=4)

    # Refused before anything is built: the config differs from the one recorded.
    with pytest.raises(ValueError) as error:
        _train(tmp_path, _task_of(other), num_train_steps=4)
    assert str(error.value) == (
        "%s describes the checkpoints being resumed (%s), and this run differs (head_size: null "
        "here, 4 in this run); resume with the same settings, or use a new --output_dir."
        % (tmp_path / "bert_config.json", tmp_path / "model.ckpt-2"))
    assert _contents(tmp_path, records) == before

    # Without the config record, the checkpoint itself refuses (shapes): still nothing rewritten.
    (tmp_path / "bert_config.json").unlink()
    with pytest.raises(ValueError, match="shape"):
        _train(tmp_path, _task_of(other), num_train_steps=4)
    assert _contents(tmp_path, records) == dict(before, **{"bert_config.json": None})
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".incomplete")) == []


def test_the_same_config_resumes_and_records_again(tmp_path):
    _train(tmp_path, _task_of(CONFIG))
    trainer = _train(tmp_path, _task_of(CONFIG), num_train_steps=4)
    assert trainer.step == 4
    assert json.loads((tmp_path / "bert_config.json").read_text()) == CONFIG.to_dict()


def test_log_steps_gives_a_line_every_n_steps_within_long_loops(tmp_path, caplog):
    steps = []
    with caplog.at_level("INFO"):
        _train(tmp_path, _task(), num_train_steps=5, callbacks=[steps.append],
               save_checkpoints_steps=1000, iterations_per_loop=1000, log_steps=2)
    assert steps == [2, 4, 5]
    assert [line.split(":")[0] for line in caplog.messages if line.startswith("step ")] == [
        "step 2/5", "step 4/5", "step 5/5"]


def test_an_init_checkpoint_of_another_model_is_refused_before_training(tmp_path):
    prefix = str(tmp_path / "other" / "model.ckpt")
    tf1_checkpoint.write_tensors(prefix, {"decoder/w%d" % i: np.zeros([2], np.float32) for i in range(5)})
    with pytest.raises(ValueError, match=r"^--init_checkpoint=%s holds none of this model's \d+ variables \(it holds "
                                         r"decoder/w0, decoder/w1, decoder/w2 and 2 more\): a checkpoint of another "
                                         r"model\? Give one of this model, or no --init_checkpoint to train from "
                                         r"scratch\.$" % prefix):
        _train(tmp_path / "out", _task(), init_checkpoint=prefix)
    state_only = str(tmp_path / "state" / "model.ckpt")
    tf1_checkpoint.write_tensors(state_only, {"global_step": np.array(7, np.int64)})
    with pytest.raises(ValueError, match=r"^--init_checkpoint=%s holds none of this model's \d+ variables \(it holds "
                                         r"no model variable at all\)" % state_only):
        _train(tmp_path / "out", _task(), init_checkpoint=state_only)
    assert not (tmp_path / "out").exists() or not any(name.startswith("model.ckpt")
                                                      for name in os.listdir(tmp_path / "out"))


def test_init_checkpoint_ignored_on_resume_is_a_warning(tmp_path, caplog):
    _train(tmp_path / "first", _task())
    init_checkpoint = str(tmp_path / "first" / "model.ckpt-2")
    _train(tmp_path / "second", _task(), init_checkpoint=init_checkpoint)
    with caplog.at_level("WARNING"):
        _train(tmp_path / "second", _task(), num_train_steps=4, init_checkpoint=init_checkpoint)
    assert ("--init_checkpoint=%s is not loaded: %s holds checkpoints, and the run resumes from %s. "
            "Use a new --output_dir to start from --init_checkpoint."
            % (init_checkpoint, tmp_path / "second", tmp_path / "second" / "model.ckpt-2")) in caplog.messages


def _damaged_record_file(path, num_records, cut_bytes):
    """Writes records of _examples(), cuts the file short; returns the byte offset of the last record."""
    examples, offset = _examples(), 0
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(num_records):
            feature = {k: tf.train.Feature(int64_list=tf.train.Int64List(value=np.atleast_1d(v[i])))
                       for k, v in examples.items()}
            record = tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
            writer.write(record)
            if i < num_records - 1:
                offset += 8 + 4 + len(record) + 4  # Length, its CRC, the data, its CRC.
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - cut_bytes])
    return offset


def _reading(path):
    """_task() reading the records at `path`, in file order, batched, repeated."""
    spec = {k: tf.io.FixedLenFeature([SEQ], tf.int64) for k in ("input_ids", "input_mask", "segment_ids")}
    spec["label_ids"] = tf.io.FixedLenFeature([], tf.int64)
    return dataclasses.replace(
        _task(), input_files=[str(path)],
        make_dataset=lambda batch_size, _: tf.data.TFRecordDataset(str(path)).map(
            lambda r: {k: tf.cast(v, tf.int32) for k, v in tf.io.parse_single_example(r, spec).items()}
        ).repeat().batch(batch_size))


@pytest.mark.parametrize("num_records, save_every, ends_with", [
    (1, 100, "No checkpoint was written: a new run starts from step 0."),
    (10, 3, "The last checkpoint, of step 3, is %(out)s/model.ckpt-3.")])
def test_a_damaged_record_met_right_after_a_save_names_the_checkpoint_or_its_absence(
        tmp_path, num_records, save_every, ends_with):
    records = tmp_path / "train.tf_record"
    _damaged_record_file(records, num_records=num_records, cut_bytes=30)
    with pytest.raises(ValueError, match=r"^Input file \S+ is damaged: record %d \(counting from 1\) cannot be read"
                       % num_records) as error:
        # Batches of 3: the damaged record is in the first batch of the run or of its second loop.
        _train(tmp_path / "out", _reading(records), num_train_steps=6, train_batch_size=3,
               save_checkpoints_steps=save_every, iterations_per_loop=save_every)
    assert str(error.value).endswith("recreate the file. " + ends_with % dict(out=tmp_path / "out"))


def test_a_record_of_another_length_is_named_and_the_steps_trained_are_kept(tmp_path):
    records = tmp_path / "train.tf_record"
    examples = _examples()
    with tf.io.TFRecordWriter(str(records)) as writer:
        for i in range(10):
            writer.write(tf.train.Example(features=tf.train.Features(feature={  # Record 8's input_ids: 1 short.
                k: tf.train.Feature(int64_list=tf.train.Int64List(
                    value=np.atleast_1d(v[i])[:SEQ - 1 if i == 7 and k == "input_ids" else SEQ]))
                for k, v in examples.items()})).SerializeToString())
    with pytest.raises(ValueError) as error:
        # Batches of 3: records 1-3 and 4-6 train; the batch of records 7-9 cannot be parsed.
        _train(tmp_path / "out", _reading(records), num_train_steps=6, train_batch_size=3,
               save_checkpoints_steps=100, iterations_per_loop=100)
    assert str(error.value) == (
        "Input file %s: record 8 (counting from 1) has input_ids of length %d where %d is expected (the length the "
        "flags give, checked on the file's first record): the file mixes records made with different settings; "
        "recreate it. The 2 steps trained are saved in %s." % (records, SEQ - 1, SEQ, tmp_path / "out/model.ckpt-2"))


def test_a_damaged_input_record_is_named_and_the_steps_trained_are_kept(tmp_path):
    records = tmp_path / "train.tf_record"
    offset = _damaged_record_file(records, num_records=10, cut_bytes=30)  # Record 10 is cut short.
    task = _reading(records)
    output_dir = tmp_path / "out"
    with pytest.raises(ValueError) as error:
        # Batches of 3: records 1-3, 4-6 and 7-9 train; record 10 cannot be read.
        _train(output_dir, task, num_train_steps=6, train_batch_size=3, save_checkpoints_steps=100,
               iterations_per_loop=100)
    assert str(error.value) == (
        "Input file %s is damaged: record 10 (counting from 1) cannot be read (truncated record at "
        "%d' failed with Read less bytes than requested); recreate the file. The 3 steps trained are "
        "saved in %s." % (records, offset, output_dir / "model.ckpt-3"))
    # Exactly the 3 steps: the checkpoint of the same run over 9 good records, at step 3.
    good = tmp_path / "good.tf_record"
    _damaged_record_file(good, num_records=9, cut_bytes=0)
    _train(tmp_path / "reference", _reading(good), num_train_steps=6, train_batch_size=3,
           save_checkpoints_steps=3)
    saved = tf.train.load_checkpoint(str(output_dir / "model.ckpt-3"))
    reference = tf.train.load_checkpoint(str(tmp_path / "reference" / "model.ckpt-3"))
    assert saved.get_tensor("global_step") == 3
    names = sorted(reference.get_variable_to_shape_map())
    assert names == sorted(saved.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_array_equal(saved.get_tensor(name), reference.get_tensor(name), err_msg=name)


def test_training_with_onednn_frozen_weights_is_refused(tmp_path, monkeypatch):
    # oneDNN would keep the first weights it sees: every step would train on stale weights.
    monkeypatch.setenv("TF_ONEDNN_ASSUME_FROZEN_WEIGHTS", "1")
    with pytest.raises(ValueError, match=r"^TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 is set in the environment: oneDNN would "
                                         r"keep the weights it first sees and train on with them unchanged\. Unset it "
                                         r"\(or set it to 0\) to train\.$"):
        trainer_lib.train(
            TrainingOptions(output_dir=str(tmp_path), train_batch_size=4, random_seed=1), Schedule(2, 1),
            distribution.get_strategy(TrainingOptions(output_dir="")), _task(),
            FAMILY.freezer(TrainingOptions(output_dir=""), CONFIG))
    assert not os.listdir(tmp_path)
