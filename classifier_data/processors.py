"""The GLUE and XNLI processors of run_classifier, and their registry.

Column layouts are those of the TSVs written by GLUE's
`download_glue_data.py` (https://gluebenchmark.com); every index below is
0-based. Train and dev files are labelled; test files carry no label, so
their examples have `label=None`.

Where we are less than certain (no official file at hand to check):
  * QQP: older releases of train.tsv had a few rows with missing fields;
    they now fail with the file and line instead of being skipped (fix or
    delete those lines).
  * AX: we read GLUE's unlabelled `diagnostic.tsv` (`index sentence1
    sentence2`), from `--data_dir` or, as download_glue_data.py lays it out,
    from `<data_dir>/../diagnostic/diagnostic.tsv`.
  * XNLI test: the original has none; we read `xnli.test.tsv`, laid out
    as `xnli.dev.tsv`.
"""

import os

import tensorflow as tf

from classifier_data.data_processor import Columns
from classifier_data.data_processor import DataProcessor
from classifier_data.data_processor import GlueTsvProcessor
from classifier_data.data_processor import InputExample
from classifier_data.data_processor import read_tsv

_NLI_LABELS = ["contradiction", "entailment", "neutral"]
_BINARY_LABELS = ["0", "1"]
_ENTAILMENT_LABELS = ["entailment", "not_entailment"]


class ColaProcessor(GlueTsvProcessor):
    """CoLA: single sentences, acceptable (1) or not (0).

    train/dev.tsv have NO header: `source label original_mark sentence`.
    test.tsv has the header `index sentence`.
    """

    submission_name = "CoLA"
    takes_text_pair = False
    labelled_columns = Columns(text_a=3, label=1)
    labelled_header = False
    test_columns = Columns(text_a=1)

    def get_labels(self):
        return list(_BINARY_LABELS)


class Sst2Processor(GlueTsvProcessor):
    """SST-2: single sentences, positive (1) or negative (0).

    train/dev.tsv: `sentence label`; test.tsv: `index sentence`.
    """

    submission_name = "SST-2"
    takes_text_pair = False
    labelled_columns = Columns(text_a=0, label=1)
    test_columns = Columns(text_a=1)

    def get_labels(self):
        return list(_BINARY_LABELS)


class MrpcProcessor(GlueTsvProcessor):
    """MRPC: sentence pairs, paraphrase (1) or not (0).

    train/dev.tsv: `Quality #1_ID #2_ID #1_String #2_String`;
    test.tsv: `index #1_ID #2_ID #1_String #2_String`.
    """

    submission_name = "MRPC"
    labelled_columns = Columns(text_a=3, text_b=4, label=0)
    test_columns = Columns(text_a=3, text_b=4)

    def get_labels(self):
        return list(_BINARY_LABELS)


class QqpProcessor(GlueTsvProcessor):
    """QQP: question pairs, duplicate (1) or not (0).

    train/dev.tsv: `id qid1 qid2 question1 question2 is_duplicate`;
    test.tsv: `id question1 question2`.
    """

    submission_name = "QQP"
    labelled_columns = Columns(text_a=3, text_b=4, label=5)
    test_columns = Columns(text_a=1, text_b=2)

    def get_labels(self):
        return list(_BINARY_LABELS)


class StsbProcessor(GlueTsvProcessor):
    """STS-B: sentence pairs scored 0-5 (regression; no classes).

    train/dev.tsv: `index genre filename year old_index source1 source2
    sentence1 sentence2 score`; test.tsv: the same without `score`.
    """

    submission_name = "STS-B"
    is_regression = True
    label_range = (0.0, 5.0)
    labelled_columns = Columns(text_a=7, text_b=8, label=-1)
    test_columns = Columns(text_a=7, text_b=8)

    def get_labels(self):
        return []


class QnliProcessor(GlueTsvProcessor):
    """QNLI: does the sentence answer the question?

    train/dev.tsv: `index question sentence label`; test.tsv: no `label`.
    """

    submission_name = "QNLI"
    labelled_columns = Columns(text_a=1, text_b=2, label=3)
    test_columns = Columns(text_a=1, text_b=2)

    def get_labels(self):
        return list(_ENTAILMENT_LABELS)


class RteProcessor(GlueTsvProcessor):
    """RTE: two-way entailment.

    train/dev.tsv: `index sentence1 sentence2 label`; test.tsv: no `label`.
    """

    submission_name = "RTE"
    labelled_columns = Columns(text_a=1, text_b=2, label=3)
    test_columns = Columns(text_a=1, text_b=2)

    def get_labels(self):
        return list(_ENTAILMENT_LABELS)


class WnliProcessor(GlueTsvProcessor):
    """WNLI: Winograd entailment, entailed (1) or not (0).

    train/dev.tsv: `index sentence1 sentence2 label`; test.tsv: no `label`.
    """

    submission_name = "WNLI"
    labelled_columns = Columns(text_a=1, text_b=2, label=3)
    test_columns = Columns(text_a=1, text_b=2)

    def get_labels(self):
        return list(_BINARY_LABELS)


class MnliProcessor(DataProcessor):
    """MultiNLI (GLUE): premise (text_a), hypothesis (text_b), 3 classes.

    Rows: `index promptID pairID genre sentence1_binary_parse
    sentence2_binary_parse sentence1_parse sentence2_parse sentence1
    sentence2 [label1 ... label5] gold_label`: train has `label1` only, dev
    five annotator labels; the gold label is always the last column. Test
    files stop after `sentence2`. Guids use the `index` column, as the
    original's do.

    Files: train.tsv, dev_matched.tsv, dev_mismatched.tsv, test_matched.tsv,
    test_mismatched.tsv, and optionally the AX diagnostic (see
    `get_diagnostic_examples`), which is predicted with the MNLI model.
    """

    submission_name = "MNLI-m"
    mismatched_submission_name = "MNLI-mm"
    diagnostic_submission_name = "AX"
    _LABELLED = Columns(text_a=8, text_b=9, label=-1, guid=0)
    _TEST = Columns(text_a=8, text_b=9, guid=0)
    _DIAGNOSTIC = Columns(text_a=1, text_b=2, guid=0)
    set_files = {"train": "train.tsv", "dev": "dev_matched.tsv", "dev_mismatched": "dev_mismatched.tsv",
                 "test": "test_matched.tsv", "test_mismatched": "test_mismatched.tsv"}
    mode_sets = {"train": ("train",), "eval": ("dev", "dev_mismatched"),
                 "predict": ("test", "test_mismatched")}

    def get_labels(self):
        return list(_NLI_LABELS)

    def input_files(self, data_dir, mode):
        files = super().input_files(data_dir, mode)
        # The AX set is optional: read, so checked, only when present.
        diagnostic = self.diagnostic_file(data_dir) if mode == "predict" else None
        return (files + [diagnostic]) if diagnostic else files

    def get_train_examples(self, data_dir):
        return self._read_examples(self.path(data_dir, "train"), "train", self._LABELLED)

    def get_dev_examples(self, data_dir):
        """The matched dev set."""
        return self._read_examples(self.path(data_dir, "dev"), "dev_matched", self._LABELLED)

    def get_dev_mismatched_examples(self, data_dir):
        return self._read_examples(
            self.path(data_dir, "dev_mismatched"), "dev_mismatched", self._LABELLED)

    def get_test_examples(self, data_dir):
        """The matched test set (unlabelled)."""
        return self._read_examples(self.path(data_dir, "test"), "test", self._TEST)

    def get_test_mismatched_examples(self, data_dir):
        return self._read_examples(
            self.path(data_dir, "test_mismatched"), "test_mismatched", self._TEST)

    @staticmethod
    def diagnostic_file(data_dir):
        """str or None: `diagnostic.tsv` in data_dir, else in ../diagnostic/."""
        candidates = [
            os.path.join(data_dir, "diagnostic.tsv"),
            # download_glue_data.py puts it beside the MNLI directory.
            os.path.join(os.path.dirname(os.path.normpath(data_dir)), "diagnostic",
                         "diagnostic.tsv"),
        ]
        for path in candidates:
            if tf.io.gfile.exists(path):
                return path
        return None

    def get_diagnostic_examples(self, data_dir):
        """The unlabelled AX set (`index sentence1 sentence2`), or None if absent."""
        path = self.diagnostic_file(data_dir)
        if path is None:
            return None
        return self._read_examples(path, "diagnostic", self._DIAGNOSTIC)

    def submission_file(self, data_dir, submission_name):
        if submission_name == self.diagnostic_submission_name:
            return self.diagnostic_file(data_dir)
        mismatched = submission_name == self.mismatched_submission_name
        return self.path(data_dir, "test_mismatched" if mismatched else "test")

    def get_submission_sets(self, data_dir):
        sets = [
            (self.submission_name, self.get_test_examples(data_dir)),
            (self.mismatched_submission_name, self.get_test_mismatched_examples(data_dir)),
        ]
        diagnostic = self.get_diagnostic_examples(data_dir)
        if diagnostic is not None:
            sets.append((self.diagnostic_submission_name, diagnostic))
        return sets


class XnliProcessor(DataProcessor):
    """XNLI for one language, as the original.

    Train: `multinli/multinli.train.<language>.tsv` (XNLI-MT), header
    `premise hypo label`, where "contradictory" means contradiction.
    Dev/test: `xnli.dev.tsv` / `xnli.test.tsv` (XNLI-1.0), header skipped,
    `language gold_label sentence1_binary_parse sentence2_binary_parse
    sentence1_parse sentence2_parse sentence1 sentence2 ...`, only rows of
    `language` kept. Not a GLUE task: no leaderboard file.
    """

    def __init__(self, language="zh"):
        self.language = language
        self.set_files = {"train": os.path.join("multinli", "multinli.train.%s.tsv" % language),
                          "dev": "xnli.dev.tsv", "test": "xnli.test.tsv"}

    def get_labels(self):
        return list(_NLI_LABELS)

    def get_train_examples(self, data_dir):
        path = self.path(data_dir, "train")
        examples = []
        for line_number, fields in read_tsv(path, skip_header=True, num_columns=3):
            label = "contradiction" if fields[2] == "contradictory" else fields[2]
            examples.append(InputExample(
                guid="train-%d" % (line_number - 1),
                text_a=fields[0],
                text_b=fields[1],
                label=self._parse_label(label, path, line_number)))
        return examples

    def get_dev_examples(self, data_dir):
        return self._read_xnli_file(self.path(data_dir, "dev"), "dev")

    def get_test_examples(self, data_dir):
        return self._read_xnli_file(self.path(data_dir, "test"), "test")

    def _read_xnli_file(self, path, set_type):
        examples = []
        for line_number, fields in read_tsv(path, skip_header=True, num_columns=8):
            if fields[0] != self.language:
                continue
            examples.append(InputExample(
                guid="%s-%d" % (set_type, line_number - 1),
                text_a=fields[6],
                text_b=fields[7],
                label=self._parse_label(fields[1], path, line_number)))
        return examples


PROCESSORS = {
    "cola": ColaProcessor,
    "mnli": MnliProcessor,
    "mrpc": MrpcProcessor,
    "xnli": XnliProcessor,
    "sst-2": Sst2Processor,
    "qqp": QqpProcessor,
    "qnli": QnliProcessor,
    "rte": RteProcessor,
    "wnli": WnliProcessor,
    "sts-b": StsbProcessor,
}

# Spellings used by TFDS and Hugging Face.
_ALIASES = {"sst2": "sst-2", "stsb": "sts-b"}


def canonical_task_name(task_name, flag=None):
    """The PROCESSORS key of `task_name` (any case, aliases allowed).

    Args:
      task_name: str.
      flag: str or None; when given the error names `--<flag>=<task_name>`.

    Raises:
      ValueError: an unknown task, listing the known ones.
    """
    name = task_name.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in PROCESSORS:
        known = ", ".join(sorted(PROCESSORS))
        if flag:
            raise ValueError("--%s=%s: unknown task; known tasks: %s" % (flag, task_name, known))
        raise ValueError("Task not found: %s; known tasks: %s" % (task_name, known))
    return name


def get_processor(task_name):
    """A new processor for `task_name`, the --task_name flag.

    Raises:
      ValueError: an unknown task, naming the flag and listing the known tasks.
    """
    return PROCESSORS[canonical_task_name(task_name, flag="task_name")]()
