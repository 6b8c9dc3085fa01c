"""Tests for submission.py: test_results.tsv and the GLUE leaderboard files."""

import pytest
import tensorflow as tf

from classifier_data import submission

MNLI_LABELS = ["contradiction", "entailment", "neutral"]


def _read(path):
    with open(path) as f:
        return f.read()


def test_test_results_probabilities_in_label_order(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = [[0.1, 0.9], [0.75, 0.25]]
    submission.write_test_results(path, probabilities, num_examples=2)
    assert _read(path) == "0.1\t0.9\n0.75\t0.25\n"


def test_test_results_regression_one_value_a_line(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    submission.write_test_results(path, [[3.5], [5.25]], num_examples=2)
    assert _read(path) == "3.5\n5.25\n"


def test_row_count_must_match_the_test_examples(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    with pytest.raises(ValueError, match="Got 3 predictions for 2 test examples"):
        submission.write_test_results(path, [[1.0], [2.0], [3.0]], num_examples=2)
    with pytest.raises(ValueError, match="Got 1 predictions for 2"):
        submission.write_glue_submission(str(tmp_path), "CoLA", [1], ["0", "1"], 2)


def test_mnli_files_use_label_names(tmp_path):
    # Scores [n, 3] in get_labels() order.
    scores = [[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]]
    path = submission.write_glue_submission(str(tmp_path), "MNLI-m", scores, MNLI_LABELS,
                                            num_examples=3)
    assert path == str(tmp_path / "MNLI-m.tsv")
    assert _read(path) == "index\tprediction\n0\tentailment\n1\tneutral\n2\tcontradiction\n"
    path = submission.write_glue_submission(str(tmp_path), "AX", [2, 1], MNLI_LABELS, 2)
    assert _read(tmp_path / "AX.tsv") == "index\tprediction\n0\tneutral\n1\tentailment\n"


def test_binary_tasks_write_0_and_1(tmp_path):
    for name in ("CoLA", "SST-2", "MRPC", "QQP", "WNLI"):
        path = submission.write_glue_submission(str(tmp_path), name, [1, 0, 1], ["0", "1"], 3)
        assert path.endswith("/%s.tsv" % name)
        assert _read(path) == "index\tprediction\n0\t1\n1\t0\n2\t1\n"


def test_qnli_rte_write_not_entailment(tmp_path):
    for name in ("QNLI", "RTE"):
        path = submission.write_glue_submission(
            str(tmp_path), name, [[0.2, 0.8], [0.6, 0.4]], ["entailment", "not_entailment"], 2)
        assert _read(path) == "index\tprediction\n0\tnot_entailment\n1\tentailment\n"


def test_stsb_scores_are_clipped_floats(tmp_path):
    path = submission.write_glue_submission(
        str(tmp_path), "STS-B", [[5.4], [-0.2], [2.5], [3.14159]], [], num_examples=4)
    assert _read(path) == "index\tprediction\n0\t5.000\n1\t0.000\n2\t2.500\n3\t3.142\n"


def test_wrong_labels_or_ids_are_errors(tmp_path):
    with pytest.raises(ValueError, match=r"MNLI-m predictions need the labels"):
        submission.write_glue_submission(str(tmp_path), "MNLI-m", [0], ["0", "1"], 1)
    with pytest.raises(ValueError, match=r"class ids in \[0, 2\)"):
        submission.write_glue_submission(str(tmp_path), "RTE", [2],
                                         ["entailment", "not_entailment"], 1)
    with pytest.raises(ValueError, match="Unknown GLUE submission 'XNLI'"):
        submission.write_glue_submission(str(tmp_path), "XNLI", [0], MNLI_LABELS, 1)


def test_every_glue_file_name():
    assert sorted(submission.GLUE_LABELS) == sorted([
        "CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "MNLI-mm", "QNLI", "RTE", "WNLI",
        "AX"])


@pytest.fixture(name="disk_full")
def fixture_disk_full(monkeypatch):
    """Every write lands, then fails: an interrupted run."""

    class DiskFull(tf.io.gfile.GFile):
        def write(self, data):
            super().write(data)
            raise OSError("disk full")

    monkeypatch.setattr(tf.io.gfile, "GFile", DiskFull)


def test_interrupted_writes_leave_no_file(tmp_path, disk_full):
    with pytest.raises(OSError, match="disk full"):
        submission.write_test_results(str(tmp_path / "test_results.tsv"), [[0.5, 0.5]], 1)
    with pytest.raises(OSError, match="disk full"):
        submission.write_glue_submission(str(tmp_path), "RTE", [0], ["entailment", "not_entailment"], 1)
    assert list(tmp_path.iterdir()) == []
