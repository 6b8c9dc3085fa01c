"""Eval results as the original's key = value file and as TensorBoard scalars."""

from training import evaluation
from training.testing.summaries import read_scalars


def test_eval_results_file_and_tensorboard_scalars(tmp_path):
    results = dict(eval_accuracy=0.75, eval_loss=0.5, global_step=7, task="mrpc")
    path = evaluation.write_eval_results(str(tmp_path), results)
    assert open(path).read() == "eval_accuracy = 0.75\neval_loss = 0.5\nglobal_step = 7\ntask = mrpc\n"
    evaluation.write_eval_summaries(str(tmp_path), results, step=7, name="eval_mismatched")
    assert read_scalars(str(tmp_path / "eval_mismatched")) == {"eval_accuracy": (7, 0.75), "eval_loss": (7, 0.5)}
