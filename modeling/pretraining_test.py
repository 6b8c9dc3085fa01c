"""The pre-training run: learning, checkpoints, exact resume after a kill, eval, errors."""

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from checkpoints import training_checkpoint
from modeling import bert_setup, pretraining
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from modeling.pretraining import PretrainingOptions
from training.testing import xla_comparison
from training.testing.pretraining_records import write_records

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ, PRED, VOCAB = 32, 5, 60
EVAL_KEYS = [
    "global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
    "next_sentence_accuracy", "next_sentence_loss",
]


# Session-scoped, as the other runs shared below: the long test runs first (conftest.py), and a module-scoped
# fixture would be built again when the module's other tests come.
@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pretraining_data")
    config = dict(
        vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        head_size=12, intermediate_size=48, max_position_embeddings=SEQ, type_vocab_size=2,
    )
    (directory / "bert_config.json").write_text(json.dumps(config))
    write_records(str(directory / "part-0.tfrecord"), 160, VOCAB, SEQ, PRED, seed=1)
    write_records(str(directory / "part-1.tfrecord"), 160, VOCAB, SEQ, PRED, seed=2)
    return directory


def _options(data_dir, output_dir, **overrides):
    values = dict(
        bert_config_file=str(data_dir / "bert_config.json"),
        input_file=str(data_dir / "part-*.tfrecord"),
        output_dir=str(output_dir),
        max_seq_length=SEQ,
        max_predictions_per_seq=PRED,
        do_train=True,
        train_batch_size=16,
        learning_rate=3e-3,
        num_train_steps=40,
        num_warmup_steps=4,
        save_checkpoints_steps=20,
        iterations_per_loop=10,
        max_eval_steps=10,
    )
    values.update(overrides)
    return PretrainingOptions(**values)


def _eval_results(path):
    with open(path) as f:
        return dict(line.strip().split(" = ") for line in f)


@pytest.fixture(scope="session")
def untrained(data_dir, tmp_path_factory):
    """The evaluation of the untrained model (seeded init, one step at learning rate 0): the baseline."""
    return pretraining.run(_options(data_dir, tmp_path_factory.mktemp("untrained"), num_train_steps=1,
                                    learning_rate=0.0, num_warmup_steps=0, save_checkpoints_steps=1, do_eval=True))


TRAINED = dict(do_eval=True, num_train_steps=100, save_checkpoints_steps=50)


@pytest.fixture(scope="session")
def trained(data_dir, tmp_path_factory):
    """A run of 100 steps (checkpoints at 50 and 100) and its evaluation: (output_dir, results).

    Tests copy the directory before they change anything in it."""
    output = tmp_path_factory.mktemp("trained")
    return output, pretraining.run(_options(data_dir, output, **TRAINED))


def test_training_lowers_masked_lm_loss_and_writes_outputs(data_dir, untrained, trained):
    start, (output, results) = untrained, trained
    assert start["global_step"] == 1
    assert results["masked_lm_loss"] < start["masked_lm_loss"] - 0.5
    assert results["masked_lm_accuracy"] > start["masked_lm_accuracy"] + 0.05
    assert results["global_step"] == 100

    files = sorted(os.listdir(output))
    assert "model.ckpt-50.index" in files and "model.ckpt-100.index" in files
    assert any(f.startswith("events.out.tfevents") for f in files)
    saved = json.loads((output / "bert_config.json").read_text())
    assert saved["head_size"] == 12
    assert tf.train.latest_checkpoint(str(output)).endswith("model.ckpt-100")
    # eval_results.txt: the original keys, sorted.
    lines = (output / "eval_results.txt").read_text().splitlines()
    assert [line.split(" = ")[0] for line in lines] == EVAL_KEYS
    assert _eval_results(output / "eval_results.txt")["global_step"] == "100"

    # The checkpoint is an original-BERT training checkpoint.
    shapes = dict(tf.train.list_variables(str(output / "model.ckpt-100")))
    assert shapes["bert/encoder/layer_0/attention/self/query/kernel"] == [32, 48]
    assert shapes["bert/encoder/layer_0/attention/self/query/kernel/adam_m"] == [32, 48]
    assert shapes["cls/predictions/output_bias/adam_v"] == [VOCAB]
    reader = tf.train.load_checkpoint(str(output / "model.ckpt-100"))
    assert reader.get_tensor("global_step") == 100

    # Running the same command again finds the work done and only evaluates.
    before = {name: (output / name).read_bytes() for name in os.listdir(output) if (output / name).is_file()}
    again = pretraining.run(_options(data_dir, output, **TRAINED))
    assert again == results
    assert {name: (output / name).read_bytes() for name in before} == before


def _run_subprocess(data_dir, output_dir, kill_after=None):
    flags = [
        "--bert_config_file=%s" % (data_dir / "bert_config.json"),
        "--input_file=%s" % (data_dir / "part-*.tfrecord"),
        "--output_dir=%s" % output_dir,
        "--max_seq_length=%d" % SEQ, "--max_predictions_per_seq=%d" % PRED,
        "--do_train", "--train_batch_size=8", "--learning_rate=1e-3",
        "--num_train_steps=8", "--num_warmup_steps=2", "--save_checkpoints_steps=4",
        "--iterations_per_loop=2", "--random_seed=7",
    ]
    # The real command line, or the same flags with a crash injected after a step.
    command = [os.path.join(ROOT, "run_pretraining.py")]
    if kill_after:
        command = ["-m", "modeling.testing.crash_after_step", "--crash_after_step=%d" % kill_after]
    return subprocess.run(
        [sys.executable] + command + flags, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture
def busy_cores():
    """A process spinning for the test's length: the runs below compete for the cores with it (and, in make test,
    with the other worker), without taking both cores from the rest of the suite."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])]
    yield
    for spinner in spinners:
        spinner.kill()
        spinner.wait()


@pytest.mark.long
def test_resume_after_kill_reaches_identical_weights(data_dir, tmp_path, busy_cores):
    # Bit for bit, under load too. It once failed by chance: another test leaked
    # TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 into the environment of these processes (now refused by training).
    straight = _run_subprocess(data_dir, tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr[-3000:]

    crashed = _run_subprocess(data_dir, tmp_path / "crashed", kill_after=6)
    assert crashed.returncode == -signal.SIGKILL
    # Killed between checkpoints 4 and 8: only step 4 is on disk.
    assert tf.train.latest_checkpoint(str(tmp_path / "crashed")).endswith("model.ckpt-4")
    resumed = _run_subprocess(data_dir, tmp_path / "crashed")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resumed from" in resumed.stderr and "at global step 4" in resumed.stderr

    a = tf.train.load_checkpoint(str(tmp_path / "straight" / "model.ckpt-8"))
    b = tf.train.load_checkpoint(str(tmp_path / "crashed" / "model.ckpt-8"))
    names = sorted(a.get_variable_to_shape_map())
    assert names == sorted(b.get_variable_to_shape_map())
    assert any(n.endswith("/adam_v") for n in names)
    for name in names:
        np.testing.assert_array_equal(a.get_tensor(name), b.get_tensor(name), err_msg=name)


def test_nan_loss_stops_and_keeps_last_good_checkpoint(data_dir, tmp_path, trained):
    output = tmp_path / "out"
    shutil.copytree(trained[0], output)
    with pytest.raises(FloatingPointError, match=r"The loss became nan between steps 100 and 110.*model.ckpt-100"):
        pretraining.run(_options(data_dir, output, num_train_steps=120, save_checkpoints_steps=10,
                                 learning_rate=1e30, num_warmup_steps=0))
    assert tf.train.latest_checkpoint(str(output)).endswith("model.ckpt-100")


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(input_file="/nonexistent/*.tfrecord"), r"--input_file: the glob '/nonexistent/\*.tfrecord' matches no file"),
        (dict(max_seq_length=30), r"input_ids has length 32 but --max_seq_length=30"),
        (dict(max_predictions_per_seq=4), r"masked_lm_positions has length 5 but --max_predictions_per_seq=4"),
        (dict(do_train=False, do_eval=False), "At least one of `--do_train` or `--do_eval` must be True"),
        (dict(max_seq_length=64), r"sequence length 64 because the BERT model was only trained up to sequence length 32"),
        (dict(train_batch_size=0), r"--train_batch_size=0 must be positive"),
        (dict(dtype="float64"), r"--dtype=float64 is not supported"),
        (dict(optimizer="sgd"), r"--optimizer=sgd is not supported"),
        (dict(distribution_strategy="parameter_server"), r"--distribution_strategy=parameter_server is not supported"),
    ],
)
def test_bad_input_errors(data_dir, tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        pretraining.run(_options(data_dir, tmp_path / "out", **overrides))


def test_non_tfrecord_input_is_a_clear_error(data_dir, tmp_path):
    bad = tmp_path / "text.tfrecord"
    bad.write_text("this is not a record file\n" * 10)
    with pytest.raises(ValueError, match="is not a TFRecord file"):
        pretraining.run(_options(data_dir, tmp_path / "out", input_file=str(bad)))


def test_a_file_whose_records_change_length_part_way_is_named_in_training_and_in_evaluation(
        data_dir, tmp_path, trained):
    write_records(str(tmp_path / "a"), 20, VOCAB, SEQ, PRED, seed=1)
    write_records(str(tmp_path / "b"), 20, VOCAB, SEQ // 2, PRED, seed=2)
    mixed = tmp_path / "mixed.tfrecord"  # TFRecord files concatenate: records 21-40 are half as long.
    mixed.write_bytes((tmp_path / "a").read_bytes() + (tmp_path / "b").read_bytes())
    expected = (r"^Input file %s: record 21 \(counting from 1\) has (input_ids|input_mask|segment_ids) of length %d "
                r"where %d is expected \(the length the flags give, checked on the file's first record\): the file "
                r"mixes records made with different settings; recreate it\." % (mixed, SEQ // 2, SEQ))
    with pytest.raises(ValueError, match=expected + r" (The \d+ steps trained are saved in|No checkpoint was written)"):
        pretraining.run(_options(data_dir, tmp_path / "out", input_file=str(mixed)))
    output = tmp_path / "trained"
    shutil.copytree(trained[0], output)
    with pytest.raises(ValueError, match=expected + "$"):
        pretraining.run(_options(data_dir, output, input_file=str(mixed), do_train=False, do_eval=True,
                                 eval_batch_size=8))


def test_head_size_flag_overrides_config(data_dir, tmp_path):
    config = bert_setup.effective_config(_options(data_dir, tmp_path, head_size=20))
    assert config.head_size == 20 and config.hidden_size == 32


def test_checkpoints_keep_the_newest_five(data_dir, tmp_path):
    output = tmp_path / "out"
    pretraining.run(_options(data_dir, output, num_train_steps=7, save_checkpoints_steps=1,
                             iterations_per_loop=1))
    kept = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(output) if f.endswith(".index"))
    assert kept == [3, 4, 5, 6, 7]
    states = sorted(os.listdir(output / training_checkpoint.STATE_DIRECTORY))
    assert states == sorted("ckpt-%d.%s" % (s, ext) for s in kept for ext in ("index", "data-00000-of-00001"))


def test_lamb_pretrains(data_dir, tmp_path, untrained):
    """--optimizer=lamb: the loss falls, and the checkpoint holds LAMB's moments under the original slot names."""
    start = untrained
    results = pretraining.run(_options(data_dir, tmp_path / "out", do_eval=True, optimizer="lamb",
                                       num_train_steps=60, learning_rate=1e-2))
    assert results["masked_lm_loss"] < start["masked_lm_loss"] - 0.5
    shapes = dict(tf.train.list_variables(str(tmp_path / "out" / "model.ckpt-60")))
    assert shapes["bert/encoder/layer_0/attention/self/query/kernel/adam_m"] == [32, 48]
    assert shapes["cls/predictions/output_bias/adam_v"] == [VOCAB]


class _Crash(Exception):
    pass


def test_lamb_with_freezing_resumes_exactly(data_dir, tmp_path):
    """A crash after step 4 (checkpoint at 3), then the same command: the weights of an uninterrupted run."""
    runs = dict(optimizer="lamb", freeze="attention:0", num_train_steps=6, save_checkpoints_steps=3,
                iterations_per_loop=2, train_batch_size=8)
    pretraining.run(_options(data_dir, tmp_path / "straight", **runs))

    def crash_after_step_4(step):
        if step == 4:
            raise _Crash()

    with pytest.raises(_Crash):
        pretraining.run(_options(data_dir, tmp_path / "resumed", **runs), callbacks=[crash_after_step_4])
    pretraining.run(_options(data_dir, tmp_path / "resumed", **runs))
    a = tf.train.load_checkpoint(str(tmp_path / "straight" / "model.ckpt-6"))
    b = tf.train.load_checkpoint(str(tmp_path / "resumed" / "model.ckpt-6"))
    names = sorted(a.get_variable_to_shape_map())
    assert names == sorted(b.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_array_equal(a.get_tensor(name), b.get_tensor(name), err_msg=name)
    # Frozen variables have no LAMB slots; the others do.
    assert "bert/encoder/layer_0/attention/self/query/kernel/adam_m" not in names
    assert "bert/encoder/layer_1/attention/self/query/kernel/adam_m" in names


def test_a_resume_with_another_batch_size_or_data_is_refused_in_one_line(data_dir, tmp_path, trained):
    output = tmp_path / "out"
    shutil.copytree(trained[0], output)
    with pytest.raises(ValueError, match=r"^--train_batch_size: \S+ holds checkpoints of a run trained with 16, and "
                                         r"this run has 8; resume with the same value, or start afresh with a new "
                                         r"--output_dir\.$"):
        pretraining.run(_options(data_dir, output, num_train_steps=120, train_batch_size=8))
    with pytest.raises(ValueError, match=r'^--input_file: .* trained with "2 files, \d+ bytes, sha256:\w+", and this '
                                         r'run has "1 files, \d+ bytes, sha256:\w+";'):
        pretraining.run(_options(data_dir, output, num_train_steps=120, input_file=str(data_dir / "part-0.tfrecord")))
    assert tf.train.latest_checkpoint(str(output)).endswith("model.ckpt-100")


@pytest.mark.parametrize("freeze", ["", "ffn"])
def test_xla_compiled_steps_train_as_the_plain_steps(data_dir, tmp_path, freeze):
    """--jit_compile: the weights of the plain steps up to rounding (no dropout: XLA draws its float
    uniforms differently), frozen groups bit for bit."""
    config_file = xla_comparison.config_without_dropout(data_dir / "bert_config.json", tmp_path)
    for jit_compile in (False, True):
        pretraining.run(_options(data_dir, tmp_path / str(jit_compile), freeze=freeze, jit_compile=jit_compile,
                                 bert_config_file=config_file, num_train_steps=4,
                                 save_checkpoints_steps=2, iterations_per_loop=2, do_eval=False))
    names = xla_comparison.variable_names(tmp_path / "True", 4)
    frozen = {n for n in names if freeze and BERT_PARAMETER_GROUPS.group_of(n)[0] == freeze}
    assert len(frozen) > 5 or not freeze
    assert xla_comparison.assert_trains_alike(tmp_path / "False", tmp_path / "True", 2, 4, frozen) > 10


def test_held_out_records_give_a_learning_curve_that_survives_a_resume(data_dir, tmp_path):
    held_out = data_dir / "held_out.tfrecord"
    if not held_out.exists():
        write_records(str(held_out), 64, VOCAB, SEQ, PRED, seed=3)
    output = tmp_path / "curve"
    options = _options(data_dir, output, eval_input_file=str(held_out), do_eval=True, num_train_steps=60,
                       save_checkpoints_steps=20, eval_batch_size=16, max_eval_steps=4)
    pretraining.run(dataclasses.replace(options, num_train_steps=40))
    first = pretraining.read_eval_history(str(output))
    assert [point["global_step"] for point in first] == [20, 40]
    # Resumed to 60 steps: the curve continues, nothing evaluated twice.
    results = pretraining.run(options)
    history = pretraining.read_eval_history(str(output))
    assert history[:2] == first and [point["global_step"] for point in history] == [20, 40, 60]
    assert sorted(history[-1]) == sorted(EVAL_KEYS)
    # The final evaluation reads the held-out records: the curve's last point, same model, same batches.
    assert results == pytest.approx(history[-1])
    assert history[-1]["masked_lm_loss"] < history[0]["masked_lm_loss"]
    # Without --eval_input_file: the training records, and no curve.
    plain = tmp_path / "plain"
    training_set = pretraining.run(_options(data_dir, plain, do_eval=True, num_train_steps=20, eval_batch_size=16,
                                            max_eval_steps=4))
    assert not os.path.exists(plain / pretraining.EVAL_HISTORY_FILE)
    assert training_set["masked_lm_loss"] != pytest.approx(first[0]["masked_lm_loss"])


def test_a_held_out_glob_that_matches_nothing_names_its_flag(data_dir, tmp_path):
    with pytest.raises(ValueError, match=r"^--eval_input_file: the glob '.*nothing\*' matches no file\.$"):
        pretraining.run(_options(data_dir, tmp_path / "x", eval_input_file=str(data_dir / "nothing*")))
