"""The run record: what it holds, and that a resume must agree with it."""

import dataclasses
import json

import pytest

from training import run_record


@dataclasses.dataclass
class _Flags:
    output_dir: str
    do_train: bool = True
    train_batch_size: int = 8
    max_seq_length: int = 64
    dtype: str = "float32"
    optimizer: str = "adamw"


def test_files_summary_counts_names_and_sizes_not_folders(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "x.txt").write_text("12345")
    same = run_record.files_summary([str(tmp_path / "a" / "x.txt")])
    assert same == run_record.files_summary([str(tmp_path / "b" / "x.txt")])
    assert same.startswith("1 files, 5 bytes, sha256:")
    (tmp_path / "b" / "x.txt").write_text("123456")
    assert run_record.files_summary([str(tmp_path / "b" / "x.txt")]) != same


def test_a_fresh_run_is_never_refused_and_a_resume_must_agree(tmp_path):
    flags = _Flags(output_dir=str(tmp_path))
    record = run_record.check_training_run(flags, train_file="data")
    (tmp_path / run_record.RUN_FILE).write_text(run_record.text(record))
    # No checkpoint: a new run in a folder with an old run.json starts afresh.
    run_record.check_training_run(_Flags(output_dir=str(tmp_path), train_batch_size=4), train_file="data")
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-2"\n')
    (tmp_path / "model.ckpt-2.index").write_text("")
    assert run_record.check_training_run(flags, train_file="data") == json.loads(run_record.text(record))
    with pytest.raises(ValueError, match=r"^--dtype: \S+ holds checkpoints of a run trained with \"float32\", and this "
                                         r"run has \"bfloat16\"; resume with the same value"):
        run_record.check_training_run(dataclasses.replace(flags, dtype="bfloat16"), train_file="data")
    with pytest.raises(ValueError, match=r'^--train_file: .* trained with "data", and this run has "other";'):
        run_record.check_training_run(flags, train_file="other")
    # Evaluation only: nothing is trained on, nothing to refuse.
    run_record.check_training_run(dataclasses.replace(flags, do_train=False, train_batch_size=1), train_file="x")
