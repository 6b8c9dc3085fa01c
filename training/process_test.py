"""Run set-up: --output_dir checks, the effective config, eval results and their summaries."""

import os

import pytest
import modeling
from training import run_setup
from training.pretraining import PretrainingOptions
from training.testing.summaries import read_scalars


def test_output_dir_that_is_a_file_is_named(tmp_path):
    path = tmp_path / "out"
    path.write_text("not a directory")
    with pytest.raises(ValueError) as error:
        run_setup.make_output_dir(str(path))
    assert str(error.value) == "--output_dir=%s is a file, not a directory." % path


def test_output_dir_below_a_file_is_named(tmp_path):
    (tmp_path / "file").write_text("")
    path = str(tmp_path / "file" / "out")
    with pytest.raises(ValueError, match=r"^--output_dir=%s is not a writable directory \(.+\)\.$" % path):
        run_setup.make_output_dir(path)


def test_output_dir_without_write_permission_is_named():
    # /proc/1 is a directory nobody can create files in, root included (tests run as root here).
    with pytest.raises(ValueError, match=r"^--output_dir=/proc/1 is not a writable directory \(.+\)\.$"):
        run_setup.make_output_dir("/proc/1")


def test_output_dir_is_created_and_left_empty(tmp_path):
    path = tmp_path / "a" / "b"
    run_setup.make_output_dir(str(path))
    assert os.listdir(path) == []


def test_effective_config_applies_head_size_and_checks_the_length(tmp_path):
    config_file = tmp_path / "bert_config.json"
    modeling.BertConfig(vocab_size=10, hidden_size=8, num_attention_heads=2,
                        max_position_embeddings=16).to_json_file(str(config_file))
    options = PretrainingOptions(bert_config_file=str(config_file), input_file="x", output_dir="o",
                                 head_size=32, max_seq_length=16)
    assert run_setup.effective_config(options).attention_head_size == 32
    with pytest.raises(ValueError, match=r"sequence length 17 .* up to sequence length 16"):
        run_setup.effective_config(PretrainingOptions(bert_config_file=str(config_file), input_file="x",
                                                      output_dir="o", max_seq_length=17))


def test_eval_results_file_and_tensorboard_scalars(tmp_path):
    results = dict(eval_accuracy=0.75, eval_loss=0.5, global_step=7, task="mrpc")
    path = run_setup.write_eval_results(str(tmp_path), results)
    assert open(path).read() == "eval_accuracy = 0.75\neval_loss = 0.5\nglobal_step = 7\ntask = mrpc\n"
    run_setup.write_eval_summaries(str(tmp_path), results, step=7, name="eval_mismatched")
    assert read_scalars(str(tmp_path / "eval_mismatched")) == {"eval_accuracy": (7, 0.75), "eval_loss": (7, 0.5)}
