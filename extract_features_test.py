"""End-to-end test of the extract_features.py command line, in a subprocess."""

import json
import os
import subprocess
import sys

from feature_extraction.feature_extractor_test import write_tiny_model

REPO_DIR = os.path.dirname(os.path.abspath(__file__))


def test_command_line(tmp_path):
    # head_size only on the command line: the checkpoint (head_size 12) loads
    # only if --head_size overrides the config's default of hidden/heads = 8.
    tiny = write_tiny_model(str(tmp_path), head_size_in_config=False)
    input_file = tmp_path / "input.txt"
    input_file.write_text("The cat sat.\nthe dog ||| a cat\n")
    output_file = tmp_path / "output.jsonl"

    process = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO_DIR, "extract_features.py"),
            "--input_file=%s" % input_file,
            "--output_file=%s" % output_file,
            "--layers=-1,-2",
            "--bert_config_file=%s" % tiny["bert_config_file"],
            "--max_seq_length=16",
            "--init_checkpoint=%s" % tiny["init_checkpoint"],
            "--vocab_file=%s" % tiny["vocab_file"],
            "--do_lower_case=True",
            "--batch_size=1",
            "--head_size=12",
        ],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr[-3000:]

    with open(output_file) as f:
        records = [json.loads(line) for line in f]
    assert [r["linex_index"] for r in records] == [0, 1]
    assert [f["token"] for f in records[1]["features"]] == (
        "[CLS] the dog [SEP] a cat [SEP]".split()
    )
    for record in records:
        for feature in record["features"]:
            assert [layer["index"] for layer in feature["layers"]] == [-1, -2]
            assert all(len(layer["values"]) == 16 for layer in feature["layers"])


def test_a_bad_command_line_prints_one_line(tmp_path):
    # TF's C++ start-up notices (no GPU, ...) go to stderr too; silence them.
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    process = subprocess.run(
        [sys.executable, os.path.join(REPO_DIR, "extract_features.py"),
         "--output_file=%s" % (tmp_path / "output.jsonl")],
        cwd=REPO_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert process.returncode == 1
    assert process.stdout == ""
    assert process.stderr == (
        "extract_features.py: error: missing required flags --bert_config_file, --input_file, "
        "--init_checkpoint, --vocab_file. Try --help.\n"
    )
