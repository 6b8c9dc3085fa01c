"""End-to-end test of the create_pretraining_data.py command line, in a subprocess."""

import glob
import os
import re
import signal
import subprocess
import sys
import time

import tensorflow as tf

from modeling import pretraining_input
from pretraining_data import testing

REPO_DIR = os.path.dirname(os.path.abspath(__file__))


def test_command_line(tmp_path):
    vocab_file = testing.write_vocab(str(tmp_path / "vocab.txt"))
    documents = testing.make_documents(60, seed=3)
    testing.write_corpus(str(tmp_path / "a.txt"), documents[:30])
    testing.write_corpus(str(tmp_path / "b.txt"), documents[30:])
    outputs = [str(tmp_path / "out-0.tfrecord"), str(tmp_path / "out-1.tfrecord")]

    process = subprocess.run(
        [
            sys.executable,
            "-X", "importtime",  # To check that TensorFlow is never imported.
            os.path.join(REPO_DIR, "create_pretraining_data.py"),
            "--input_file=%s" % (tmp_path / "*.txt"),
            "--output_file=%s" % ",".join(outputs),
            "--vocab_file=%s" % vocab_file,
            "--do_lower_case=True",
            "--do_whole_word_mask=True",
            "--max_seq_length=32",
            "--max_predictions_per_seq=5",
            "--random_seed=1",
            "--dupe_factor=2",
            "--masked_lm_prob=0.15",
            "--short_seq_prob=0.1",
            "--num_workers=2",
            "--documents_per_shard=20",
        ],
        cwd=REPO_DIR,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    imported = re.findall(r"^import time:.*\| +(\S+)$", process.stderr, re.MULTILINE)
    assert "pretraining_data.pipeline" in imported and "tensorflow" not in imported

    total = int(re.search(r"Wrote (\d+) total instances", process.stderr).group(1))
    counts = [sum(1 for _ in tf.data.TFRecordDataset(path)) for path in outputs]
    assert sum(counts) == total > 100
    assert abs(counts[0] - counts[1]) <= 1  # Round-robin.
    pretraining_input.check_record_lengths(outputs, 32, 5)
    assert process.stderr.count("*** Example ***") == 20
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt", "out-0.tfrecord",
                                            "out-1.tfrecord", "vocab.txt"]


def _children(pid):
    """The pids of the child processes of `pid` (Linux)."""
    children = set()
    for path in glob.glob("/proc/%d/task/*/children" % pid):
        with open(path) as f:
            children.update(int(child) for child in f.read().split())
    return children


def _running(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_killing_the_main_process_kills_the_workers_and_leaves_no_output(tmp_path):
    vocab_file = testing.write_vocab(str(tmp_path / "vocab.txt"))
    # Two shards of ~1 s of a worker's time: killed as it writes shard 0, the
    # main process leaves a worker busy with shard 1, which (on its own) would
    # then wait forever for a task: it holds the task queue's write end too.
    corpus = testing.write_corpus(str(tmp_path / "corpus.txt"),
                                  testing.make_documents(500, seed=4) * 4)
    output = str(tmp_path / "out.tfrecord")
    process = subprocess.Popen(
        [sys.executable, os.path.join(REPO_DIR, "create_pretraining_data.py"),
         "--input_file=" + corpus, "--output_file=" + output, "--vocab_file=" + vocab_file,
         "--num_workers=1", "--documents_per_shard=1000"],
        cwd=REPO_DIR, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        incomplete = output + ".incomplete"
        deadline = time.monotonic() + 120
        while not (os.path.exists(incomplete) and os.path.getsize(incomplete)):
            assert process.poll() is None and time.monotonic() < deadline, "not writing"
            time.sleep(0.02)
        workers = _children(process.pid)
    finally:
        process.kill()  # SIGKILL: the process cannot clean up.
        process.wait()
    assert workers
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline and any(map(_running, workers)):
            time.sleep(0.05)
        assert not [pid for pid in workers if _running(pid)]
    finally:
        for pid in filter(_running, workers):
            os.kill(pid, signal.SIGKILL)  # Not left running if the test fails.
    size = os.path.getsize(incomplete)
    time.sleep(0.3)
    assert os.path.getsize(incomplete) == size  # Nothing writes it any more.
    assert not os.path.exists(output)
