"""Path-typed options: each kind's checks and messages, and the entry points' path flags checked by validate()."""

import dataclasses
import os

import pytest

import studies
from analysis.attention_rank import ProbeAttentionRankOptions
from lm.task import LmOptions
from modeling.checkpoint_conversion.converter import ConvertCheckpointOptions
from modeling.export_model import ExportModelOptions
from modeling.pretraining import PretrainingOptions
from nmt.task import NmtOptions
from options import Options, option, paths


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "dir").mkdir()
    return tmp_path


@pytest.mark.parametrize("kind,name,message", [
    ("file", "missing.txt", r"^--f=(\S+)/missing.txt does not exist\.$"),
    ("file", "dir", r"^--f=\S+/dir is a directory, not a file\.$"),
    ("dir", "missing", r"^--f=\S+/missing does not exist\.$"),
    ("dir", "file.txt", r"^--f=\S+/file.txt is a file, not a directory\.$"),
    ("output_file", "dir", r"^--f=\S+/dir is a directory, not a file\.$"),
    ("output_file", "no/out.txt", r"^--f=\S+/no/out.txt: the directory \S+/no does not exist\.$"),
    ("output_dir", "file.txt", r"^--f=\S+/file.txt is a file, not a directory\.$"),
    ("output_dir", "file.txt/below", r"^--f=\S+/file.txt/below is not a writable directory \(\S+/file.txt is a file\)\.$"),
])
def test_each_kind_refuses_what_cannot_serve(tree, kind, name, message):
    with pytest.raises(ValueError, match=message):
        paths.check("--f", str(tree / name), kind)


@pytest.mark.parametrize("kind,name", [
    ("file", "file.txt"), ("dir", "dir"), ("output_file", "dir/new.txt"), ("output_file", "file.txt"),
    ("output_dir", "dir"), ("output_dir", "new/deeper"), ("file", "gs://bucket/not/checked"),
])
def test_each_kind_accepts_what_serves(tree, kind, name):
    paths.check("--f", name if "://" in name else str(tree / name), kind)
    assert not os.path.exists(tree / "new")  # Checking creates nothing.


def test_unwritable_places_are_named():
    # /proc/1 refuses new files, root included (tests run as root here).
    with pytest.raises(ValueError, match=r"^--d=/proc/1/out is not a writable directory \(/proc/1: .+\)\.$"):
        paths.check("--d", "/proc/1/out", "output_dir")
    with pytest.raises(ValueError, match=r"^--o=/proc/1/out.txt: the directory /proc/1 is not writable \(.+\)\.$"):
        paths.check("--o", "/proc/1/out.txt", "output_file")


def test_validate_checks_declared_paths_only_when_set(tree):
    @dataclasses.dataclass(kw_only=True)
    class Example(Options):
        config: str = option(None, "A file.", path="file")
        out: str = option("", "A directory.", path="output_dir")

    Example().validate()
    Example(config=str(tree / "file.txt"), out=str(tree / "new")).validate()
    with pytest.raises(ValueError, match=r"^--config=\S+/dir is a directory, not a file\.$"):
        Example(config=str(tree / "dir")).validate()
    with pytest.raises(ValueError, match=r"path='folder'"):
        option(None, "x", path="folder")


def _bert_config(tree):
    path = tree / "bert_config.json"
    path.write_text('{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, '
                    '"intermediate_size": 8}')
    return str(path)


# The cases of the entry points that failed late or with a traceback, each now one line from validate().
CASES = [
    (lambda t: ProbeAttentionRankOptions(input_file=str(t / "file.txt"), output_file=str(t / "dir"),
                                         bert_config_file=_bert_config(t), init_checkpoint="x",
                                         vocab_file=str(t / "file.txt")),
     r"^--output_file=\S+/dir is a directory, not a file\.$"),
    (lambda t: ProbeAttentionRankOptions(input_file=str(t / "dir"), output_file=str(t / "out.jsonl"),
                                         bert_config_file=_bert_config(t), init_checkpoint="x",
                                         vocab_file=str(t / "file.txt")),
     r"^--input_file=\S+/dir is a directory, not a file\.$"),
    (lambda t: ExportModelOptions(export_type="encoder", export_dir=str(t / "file.txt"), init_checkpoint="x",
                                  bert_config_file=_bert_config(t), vocab_file=str(t / "file.txt")),
     r"^--export_dir=\S+/file.txt is a file, not a directory\.$"),
    (lambda t: ExportModelOptions(export_type="encoder", export_dir=str(t / "out"), init_checkpoint="x",
                                  bert_config_file=_bert_config(t), vocab_file=str(t / "dir")),
     r"^--vocab_file=\S+/dir is a directory, not a file\.$"),
    (lambda t: ConvertCheckpointOptions(input_format="huggingface", input="x", output_dir=str(t / "file.txt")),
     r"^--output_dir=\S+/file.txt is a file, not a directory\.$"),
    (lambda t: ConvertCheckpointOptions(input_format="huggingface", input="x", output_dir="/proc/1/out"),
     r"^--output_dir=/proc/1/out is not a writable directory \(/proc/1: .+\)\.$"),
    (lambda t: studies.ReproduceOptions(experiment="table2b", output_dir=str(t / "file.txt")),
     r"^--output_dir=\S+/file.txt is a file, not a directory\.$"),
    (lambda t: studies.ReproduceOptions(experiment="table2b", output_dir="/proc/1/plan"),
     r"^--output_dir=/proc/1/plan is not a writable directory \(/proc/1: .+\)\.$"),
    (lambda t: LmOptions(output_dir=str(t / "out"), do_train=True, train_file="x", lm_config_file=str(t / "dir")),
     r"^--lm_config_file=\S+/dir is a directory, not a file\.$"),
    (lambda t: NmtOptions(output_dir=str(t / "out"), do_train=True, train_tsv="x", model_config_file=str(t / "dir")),
     r"^--model_config_file=\S+/dir is a directory, not a file\.$"),
    (lambda t: PretrainingOptions(output_dir=str(t / "out"), do_train=True, input_file="x",
                                  bert_config_file=str(t / "dir")),
     r"^--bert_config_file=\S+/dir is a directory, not a file\.$"),
]


@pytest.mark.parametrize("make,message", CASES)
def test_entry_points_name_a_bad_path_when_the_flags_are_read(tree, make, message):
    with pytest.raises(ValueError, match=message):
        make(tree).validate()
