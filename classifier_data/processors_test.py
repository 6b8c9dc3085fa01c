"""Tests for the task processors on small TSVs in the official GLUE layouts."""

import os
import re

import pytest
import tensorflow as tf

from classifier_data import processors
from classifier_data.data_processor import InputExample


def _write_tsv(directory, name, rows):
    """Writes rows (lists of str) as `name` under directory; returns the path."""
    path = os.path.join(str(directory), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("\t".join(row) + "\n" for row in rows)
    return path


def _texts(examples):
    return [(e.text_a, e.text_b, e.label) for e in examples]


# ---------------------------------------------------------------- CoLA

def test_cola_train_dev_have_no_header_test_has_one(tmp_path):
    rows = [["gj04", "1", "", 'He said "hi".'], ["gj04", "0", "*", "They drank the pub."]]
    _write_tsv(tmp_path, "train.tsv", rows)
    _write_tsv(tmp_path, "dev.tsv", rows[1:])
    _write_tsv(tmp_path, "test.tsv", [["index", "sentence"], ["0", "Bill whistled."],
                                      ["1", "The car honked."]])
    processor = processors.ColaProcessor()
    train = processor.get_train_examples(str(tmp_path))
    # The first line is an example, not a header; quotes are kept.
    assert train == [InputExample("train-0", 'He said "hi".', None, "1"),
                     InputExample("train-1", "They drank the pub.", None, "0")]
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("They drank the pub.", None, "0")]
    test = processor.get_test_examples(str(tmp_path))
    assert test == [InputExample("test-1", "Bill whistled.", None, None),
                    InputExample("test-2", "The car honked.", None, None)]
    assert processor.get_labels() == ["0", "1"]
    assert processor.submission_name == "CoLA"
    assert not processor.is_regression


def test_cola_train_with_three_columns_fails_with_file_and_line(tmp_path):
    path = _write_tsv(tmp_path, "train.tsv", [["gj04", "1", "", "Fine."], ["gj04", "1", "Short."]])
    with pytest.raises(ValueError) as error:
        processors.ColaProcessor().get_train_examples(str(tmp_path))
    assert "%s line 2: expected at least 4" % path in str(error.value)


# ---------------------------------------------------------------- SST-2

def test_sst2(tmp_path):
    _write_tsv(tmp_path, "train.tsv", [["sentence", "label"], ["a charming journey . ", "1"]])
    _write_tsv(tmp_path, "dev.tsv", [["sentence", "label"], ["dull .", "0"]])
    _write_tsv(tmp_path, "test.tsv", [["index", "sentence"], ["0", "uneasy mishmash ."]])
    processor = processors.Sst2Processor()
    assert _texts(processor.get_train_examples(str(tmp_path))) == [
        ("a charming journey . ", None, "1")]
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("dull .", None, "0")]
    assert _texts(processor.get_test_examples(str(tmp_path))) == [("uneasy mishmash .", None, None)]
    assert processor.submission_name == "SST-2"


# ---------------------------------------------------------------- MRPC

def test_mrpc(tmp_path):
    header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    _write_tsv(tmp_path, "train.tsv", [header, ["1", "702876", "702977", "Amrozi accused.",
                                                "Referring to him."]])
    _write_tsv(tmp_path, "dev.tsv", [header, ["0", "1", "2", "First.", "Second."]])
    _write_tsv(tmp_path, "test.tsv", [["index", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                      ["0", "1089874", "1089925", "PCCW 's chief.", "Current."]])
    processor = processors.MrpcProcessor()
    train = processor.get_train_examples(str(tmp_path))
    assert train == [InputExample("train-1", "Amrozi accused.", "Referring to him.", "1")]
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("First.", "Second.", "0")]
    assert _texts(processor.get_test_examples(str(tmp_path))) == [("PCCW 's chief.", "Current.",
                                                                   None)]
    assert processor.get_labels() == ["0", "1"]


def test_mrpc_unknown_label_names_file_line_and_labels(tmp_path):
    header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    path = _write_tsv(tmp_path, "dev.tsv", [header, ["1", "1", "2", "a", "b"],
                                            ["yes", "1", "2", "a", "b"]])
    with pytest.raises(ValueError) as error:
        processors.MrpcProcessor().get_dev_examples(str(tmp_path))
    assert "%s line 3: unknown label 'yes'" % path in str(error.value)
    assert "['0', '1']" in str(error.value)


# ---------------------------------------------------------------- QQP

def test_qqp(tmp_path):
    header = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]
    _write_tsv(tmp_path, "train.tsv", [header, ["133273", "213221", "213222", "How is life?",
                                                "Which level?", "0"]])
    _write_tsv(tmp_path, "dev.tsv", [header, ["1", "3", "4", "Why?", "Why so?", "1"]])
    _write_tsv(tmp_path, "test.tsv", [["id", "question1", "question2"],
                                      ["0", "Why are rockets white?", "Why white rockets?"]])
    processor = processors.QqpProcessor()
    assert _texts(processor.get_train_examples(str(tmp_path))) == [
        ("How is life?", "Which level?", "0")]
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("Why?", "Why so?", "1")]
    assert _texts(processor.get_test_examples(str(tmp_path))) == [
        ("Why are rockets white?", "Why white rockets?", None)]


def test_qqp_row_missing_a_field_is_not_skipped(tmp_path):
    header = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]
    path = _write_tsv(tmp_path, "train.tsv", [header, ["1", "2", "3", "Only one question?", "0"]])
    with pytest.raises(ValueError) as error:
        processors.QqpProcessor().get_train_examples(str(tmp_path))
    assert "%s line 2: expected at least 6" % path in str(error.value)


# ---------------------------------------------------------------- QNLI, RTE, WNLI

@pytest.mark.parametrize("processor_class, header, label, name", [
    (processors.QnliProcessor, ["index", "question", "sentence", "label"], "not_entailment",
     "QNLI"),
    (processors.RteProcessor, ["index", "sentence1", "sentence2", "label"], "entailment", "RTE"),
    (processors.WnliProcessor, ["index", "sentence1", "sentence2", "label"], "1", "WNLI"),
])
def test_index_pair_label_tasks(tmp_path, processor_class, header, label, name):
    _write_tsv(tmp_path, "train.tsv", [header, ["0", "First one.", "Second one.", label]])
    _write_tsv(tmp_path, "dev.tsv", [header, ["0", "Dev a.", "Dev b.", label]])
    _write_tsv(tmp_path, "test.tsv", [header[:3], ["0", "Test a.", "Test b."]])
    processor = processor_class()
    assert processor.get_train_examples(str(tmp_path)) == [
        InputExample("train-1", "First one.", "Second one.", label)]
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("Dev a.", "Dev b.", label)]
    assert _texts(processor.get_test_examples(str(tmp_path))) == [("Test a.", "Test b.", None)]
    assert label in processor.get_labels()
    assert processor.submission_name == name


def test_rte_labels():
    assert processors.RteProcessor().get_labels() == ["entailment", "not_entailment"]
    assert processors.QnliProcessor().get_labels() == ["entailment", "not_entailment"]
    assert processors.WnliProcessor().get_labels() == ["0", "1"]


# ---------------------------------------------------------------- STS-B

STSB_HEADER = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
               "sentence1", "sentence2", "score"]


def test_stsb_is_regression_with_float_labels(tmp_path):
    _write_tsv(tmp_path, "train.tsv", [STSB_HEADER, ["0", "main-captions", "MSRvid", "2012test",
                                                     "0001", "none", "none", "A plane takes off.",
                                                     "An air plane takes off.", "5.000"]])
    _write_tsv(tmp_path, "dev.tsv", [STSB_HEADER, ["0", "g", "f", "y", "o", "s", "s", "A.", "B.",
                                                   "0.250"]])
    _write_tsv(tmp_path, "test.tsv", [STSB_HEADER[:-1], ["0", "g", "f", "y", "o", "s", "s",
                                                         "Test a.", "Test b."]])
    processor = processors.StsbProcessor()
    assert processor.is_regression
    assert processor.get_labels() == []
    train = processor.get_train_examples(str(tmp_path))
    assert _texts(train) == [("A plane takes off.", "An air plane takes off.", 5.0)]
    assert isinstance(train[0].label, float)
    assert _texts(processor.get_dev_examples(str(tmp_path))) == [("A.", "B.", 0.25)]
    assert _texts(processor.get_test_examples(str(tmp_path))) == [("Test a.", "Test b.", None)]


def test_stsb_bad_score_and_missing_score(tmp_path):
    row = ["0", "g", "f", "y", "o", "s", "s", "A.", "B."]
    path = _write_tsv(tmp_path, "train.tsv", [STSB_HEADER, row + ["high"]])
    message = "%s line 2: the label 'high' is not a number" % path
    with pytest.raises(ValueError, match=re.escape(message)):
        processors.StsbProcessor().get_train_examples(str(tmp_path))
    _write_tsv(tmp_path, "dev.tsv", [STSB_HEADER, row])
    with pytest.raises(ValueError, match="line 2: expected at least 10"):
        processors.StsbProcessor().get_dev_examples(str(tmp_path))


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "42", "-7", "5.01"])
def test_stsb_score_must_be_a_finite_number_from_0_to_5(tmp_path, score):
    """float() takes "nan" and "inf" and STS-B's scores are 0-5: anything else would end in a nan loss."""
    row = ["0", "g", "f", "y", "o", "s", "s", "A.", "B."]
    path = _write_tsv(tmp_path, "train.tsv", [STSB_HEADER, row + ["0"], row + ["5.000"], row + [score]])
    with pytest.raises(ValueError, match="^%s$" % re.escape(
            "%s line 4: the label %r is not a number from 0 to 5" % (path, score))):
        processors.StsbProcessor().get_train_examples(str(tmp_path))


# ---------------------------------------------------------------- MNLI and AX

MNLI_PARSES = ["( ( p ) )", "( ( h ) )", "(ROOT (p))", "(ROOT (h))"]
MNLI_TRAIN_HEADER = (["index", "promptID", "pairID", "genre", "sentence1_binary_parse",
                      "sentence2_binary_parse", "sentence1_parse", "sentence2_parse",
                      "sentence1", "sentence2"])


def _mnli_row(index, premise, hypothesis, *labels):
    ids = [str(index), "31193", "31193n", "government"]
    return ids + MNLI_PARSES + [premise, hypothesis] + list(labels)


def _write_mnli(directory):
    _write_tsv(directory, "train.tsv", [
        MNLI_TRAIN_HEADER + ["label1", "gold_label"],
        _mnli_row(0, "Cream skimming has two dimensions.", "Product and geography matter.",
                  "neutral", "neutral"),
        _mnli_row(1, "You know during the season.", "You lose the things.",
                  "entailment", "entailment"),
    ])
    dev_header = MNLI_TRAIN_HEADER + ["label1", "label2", "label3", "label4", "label5",
                                      "gold_label"]
    # label1 differs from the gold label: the gold label is the last column.
    _write_tsv(directory, "dev_matched.tsv", [
        dev_header, _mnli_row(7, "The new rights are nice.", "Everyone loves them.",
                              "neutral", "contradiction", "contradiction", "neutral",
                              "contradiction", "contradiction")])
    _write_tsv(directory, "dev_mismatched.tsv", [
        dev_header, _mnli_row(9, "Your gift is appreciated.", "Hundreds of students.",
                              "neutral", "neutral", "neutral", "neutral", "neutral", "neutral")])
    _write_tsv(directory, "test_matched.tsv", [
        MNLI_TRAIN_HEADER, _mnli_row(0, "Hierbas, ans seco.", "Hierbas is a name."),
        _mnli_row(1, "The extent of the behavior.", "The behavior is limited.")])
    _write_tsv(directory, "test_mismatched.tsv", [
        MNLI_TRAIN_HEADER, _mnli_row(0, "What a day.", "It was a day.")])


def test_mnli_premise_first_gold_label_last(tmp_path):
    _write_mnli(tmp_path)
    processor = processors.MnliProcessor()
    train = processor.get_train_examples(str(tmp_path))
    assert train == [
        InputExample("train-0", "Cream skimming has two dimensions.",
                     "Product and geography matter.", "neutral"),
        InputExample("train-1", "You know during the season.", "You lose the things.",
                     "entailment"),
    ]
    assert processor.get_dev_examples(str(tmp_path)) == [
        InputExample("dev_matched-7", "The new rights are nice.", "Everyone loves them.",
                     "contradiction")]
    assert _texts(processor.get_dev_mismatched_examples(str(tmp_path))) == [
        ("Your gift is appreciated.", "Hundreds of students.", "neutral")]
    assert processor.get_labels() == ["contradiction", "entailment", "neutral"]


def test_mnli_test_sets_have_no_labels(tmp_path):
    _write_mnli(tmp_path)
    processor = processors.MnliProcessor()
    assert _texts(processor.get_test_examples(str(tmp_path))) == [
        ("Hierbas, ans seco.", "Hierbas is a name.", None),
        ("The extent of the behavior.", "The behavior is limited.", None)]
    assert _texts(processor.get_test_mismatched_examples(str(tmp_path))) == [
        ("What a day.", "It was a day.", None)]


def test_mnli_train_row_without_label_fails(tmp_path):
    _write_mnli(tmp_path)
    path = _write_tsv(tmp_path, "train.tsv", [MNLI_TRAIN_HEADER + ["label1", "gold_label"],
                                              _mnli_row(0, "P.", "H.")])
    with pytest.raises(ValueError, match=re.escape("%s line 2: expected at least 11" % path)):
        processors.MnliProcessor().get_train_examples(str(tmp_path))


def test_mnli_diagnostic_absent_in_data_dir_or_beside_it(tmp_path):
    mnli_dir = tmp_path / "MNLI"
    _write_mnli(mnli_dir)
    processor = processors.MnliProcessor()
    assert processor.get_diagnostic_examples(str(mnli_dir)) is None
    assert [name for name, _ in processor.get_submission_sets(str(mnli_dir))] == [
        "MNLI-m", "MNLI-mm"]

    # download_glue_data.py layout: glue_data/diagnostic/diagnostic.tsv.
    _write_tsv(tmp_path, "diagnostic/diagnostic.tsv", [
        ["index", "sentence1", "sentence2"],
        ["0", "The cat sat on the mat.", "The cat did not sit on the mat."],
        ["1", "A.", "B."]])
    diagnostic = processor.get_diagnostic_examples(str(mnli_dir))
    assert diagnostic[0] == InputExample("diagnostic-0", "The cat sat on the mat.",
                                         "The cat did not sit on the mat.", None)
    assert len(diagnostic) == 2
    sets = processor.get_submission_sets(str(mnli_dir) + "/")
    assert [(name, len(examples)) for name, examples in sets] == [
        ("MNLI-m", 2), ("MNLI-mm", 1), ("AX", 2)]

    # A diagnostic.tsv inside data_dir wins.
    _write_tsv(mnli_dir, "diagnostic.tsv", [["index", "sentence1", "sentence2"], ["0", "C.", "D."]])
    assert _texts(processor.get_diagnostic_examples(str(mnli_dir))) == [("C.", "D.", None)]


# ---------------------------------------------------------------- XNLI

XNLI_HEADER = ["language", "gold_label", "sentence1_binary_parse", "sentence2_binary_parse",
               "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "promptID",
               "pairID", "genre", "label1"]


def _xnli_row(language, label, premise, hypothesis):
    return [language, label, "(p)", "(h)", "(P)", "(H)", premise, hypothesis, "1", "2", "g", label]


def test_xnli(tmp_path):
    _write_tsv(tmp_path, "multinli/multinli.train.zh.tsv", [
        ["premise", "hypo", "label"], ["他说", "他没说", "contradictory"],
        ["你好", "好", "entailment"]])
    rows = [XNLI_HEADER, _xnli_row("en", "neutral", "Hello.", "Hi."),
            _xnli_row("zh", "contradiction", "前提", "假设")]
    _write_tsv(tmp_path, "xnli.dev.tsv", rows)
    _write_tsv(tmp_path, "xnli.test.tsv", rows)
    processor = processors.XnliProcessor()
    assert processor.language == "zh"
    assert processor.get_train_examples(str(tmp_path)) == [
        InputExample("train-1", "他说", "他没说", "contradiction"),
        InputExample("train-2", "你好", "好", "entailment")]
    assert processor.get_dev_examples(str(tmp_path)) == [
        InputExample("dev-2", "前提", "假设", "contradiction")]
    assert _texts(processors.XnliProcessor("en").get_test_examples(str(tmp_path))) == [
        ("Hello.", "Hi.", "neutral")]
    assert processor.get_submission_sets(str(tmp_path)) == []


# ---------------------------------------------------------------- registry

def test_registry_and_aliases():
    assert sorted(processors.PROCESSORS) == [
        "cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst-2", "sts-b", "wnli", "xnli"]
    assert isinstance(processors.get_processor("MNLI"), processors.MnliProcessor)
    assert isinstance(processors.get_processor("sst2"), processors.Sst2Processor)
    assert isinstance(processors.get_processor("STS-B"), processors.StsbProcessor)
    assert isinstance(processors.get_processor("stsb"), processors.StsbProcessor)


def test_unknown_task_names_the_flag_and_lists_known_tasks():
    known = "cola, mnli, mrpc, qnli, qqp, rte, sst-2, sts-b, wnli, xnli"
    with pytest.raises(ValueError) as error:
        processors.get_processor("sst3")
    assert str(error.value) == "--task_name=sst3: unknown task; known tasks: " + known
    # Not from a flag (metrics.task_metrics): the task alone.
    with pytest.raises(ValueError) as error:
        processors.canonical_task_name("squad")
    assert str(error.value) == "Task not found: squad; known tasks: " + known


def test_submission_names():
    names = {name: cls.submission_name for name, cls in processors.PROCESSORS.items()}
    assert names == {"cola": "CoLA", "mnli": "MNLI-m", "mrpc": "MRPC", "xnli": None,
                     "sst-2": "SST-2", "qqp": "QQP", "qnli": "QNLI", "rte": "RTE",
                     "wnli": "WNLI", "sts-b": "STS-B"}
    assert processors.MnliProcessor.mismatched_submission_name == "MNLI-mm"
    assert processors.MnliProcessor.diagnostic_submission_name == "AX"


# ---------------------------------------------------------------- files read per mode

def _files_read(monkeypatch, read):
    """The paths `read()` opens."""
    opened = []

    class Recording(tf.io.gfile.GFile):
        def __init__(self, name, mode="r"):
            opened.append(name)
            super().__init__(name, mode)

    monkeypatch.setattr(tf.io.gfile, "GFile", Recording)
    read()
    monkeypatch.undo()
    return opened


# What ClassifierRun calls for --do_train, --do_eval and --do_predict.
RUN_READS = {
    "train": lambda p, d: p.get_train_examples(d),
    "eval": lambda p, d: (p.get_dev_examples(d), getattr(p, "get_dev_mismatched_examples",
                                                          lambda _: None)(d)),
    "predict": lambda p, d: (p.get_test_examples(d), p.get_submission_sets(d)),
}


@pytest.mark.parametrize("task", sorted(processors.PROCESSORS))
@pytest.mark.parametrize("mode", ["train", "eval", "predict"])
def test_input_files_are_the_files_each_mode_reads(tmp_path, monkeypatch, task, mode):
    processor = processors.get_processor(task)
    data_dir = str(tmp_path)
    declared = processor.input_files(data_dir, mode)
    assert declared
    for path in declared:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    opened = _files_read(monkeypatch, lambda: RUN_READS[mode](processor, data_dir))
    assert sorted(set(opened)) == sorted(declared)


def test_mnli_and_xnli_input_files(tmp_path):
    mnli = processors.MnliProcessor()
    data_dir = str(tmp_path / "MNLI")
    in_dir = lambda *names: [os.path.join(data_dir, name) for name in names]
    assert mnli.input_files(data_dir, "train") == in_dir("train.tsv")
    assert mnli.input_files(data_dir, "eval") == in_dir("dev_matched.tsv", "dev_mismatched.tsv")
    assert mnli.input_files(data_dir, "predict") == in_dir("test_matched.tsv", "test_mismatched.tsv")
    # The AX set is optional: read (so checked) only when present.
    _write_tsv(tmp_path, "diagnostic/diagnostic.tsv", [["index", "sentence1", "sentence2"]])
    assert mnli.input_files(data_dir, "predict")[2:] == [
        os.path.join(str(tmp_path), "diagnostic", "diagnostic.tsv")]
    xnli = processors.XnliProcessor("de")
    assert xnli.input_files("X", "train") == [os.path.join("X", "multinli", "multinli.train.de.tsv")]
    assert xnli.input_files("X", "eval") == [os.path.join("X", "xnli.dev.tsv")]
    assert xnli.input_files("X", "predict") == [os.path.join("X", "xnli.test.tsv")]
