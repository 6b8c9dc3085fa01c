"""The pipeline end to end: parity with the original, workers, outputs, errors."""

import logging
import os
import subprocess
import re
import sys

import numpy as np
import pytest
import tensorflow as tf

from modeling import pretraining_input
from pretraining_data import instances
from pretraining_data import pipeline
from pretraining_data import reference
from pretraining_data import shard_worker
from pretraining_data import testing
from pretraining_data import writer as writer_lib

# The instance flags of these tests (the rest keep their defaults).
SMALL = dict(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=3)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A vocab and a corpus of 120 documents in two files."""
    directory = tmp_path_factory.mktemp("pipeline")
    documents = testing.make_documents(120, seed=1)
    return {
        "dir": directory,
        "vocab": testing.write_vocab(str(directory / "vocab.txt")),
        "inputs": [testing.write_corpus(str(directory / "part-0.txt"), documents[:70]),
                   testing.write_corpus(str(directory / "part-1.txt"), documents[70:])],
    }


def _run(data, name, fast_tokenizer=True, **kwargs):
    """Runs the pipeline; returns (summary, list of records per output file)."""
    outputs = _output_files(data, name, kwargs.pop("num_outputs", 1))
    options = instances.CreatePretrainingDataOptions(
        input_file=",".join(kwargs.pop("inputs", data["inputs"])),
        output_file=",".join(outputs),
        vocab_file=data["vocab"],
        # In-process unless a test is about workers.
        **{**SMALL, "num_workers": 0, **kwargs})
    summary = pipeline.run(options, fast_tokenizer=fast_tokenizer, progress_interval_seconds=0.05)
    return summary, [_records(path) for path in outputs]


def _output_files(data, name, num_outputs):
    return [str(data["dir"] / ("%s-%d.tfrecord" % (name, i))) for i in range(num_outputs)]


def _records(path):
    return [record.numpy() for record in tf.data.TFRecordDataset(path)]


@pytest.mark.parametrize("fast_tokenizer,whole_word", [(False, False), (True, False),
                                                       (True, True)])
def test_one_shard_is_byte_identical_to_the_original_algorithm(data, fast_tokenizer, whole_word):
    expected = [str(data["dir"] / ("reference-%d.tfrecord" % i)) for i in range(2)]
    options = instances.CreatePretrainingDataOptions(
        input_file=",".join(data["inputs"]), output_file=",".join(expected),
        vocab_file=data["vocab"], do_whole_word_mask=whole_word, random_seed=7, **SMALL)
    count = reference.create_pretraining_data(data["inputs"], expected, options)
    summary, ours = _run(data, "one-shard", num_outputs=2, do_whole_word_mask=whole_word,
                         random_seed=7, documents_per_shard=1000, fast_tokenizer=fast_tokenizer)
    assert summary.num_shards == 1 and summary.num_instances == count > 500
    for path, records in zip(expected, ours):
        with open(path, "rb") as f:
            expected_bytes = f.read()
        with open(path.replace("reference", "one-shard"), "rb") as f:
            assert f.read() == expected_bytes
        assert records


def test_output_is_identical_for_any_number_of_workers(data):
    runs = [_run(data, "workers-%d" % n, num_workers=n, documents_per_shard=25) for n in (0, 1, 2)]
    for summary, records in runs:
        assert summary.num_shards == 5  # 4 x 25 and a tail of 20.
        assert summary.num_documents == 120
        assert records == runs[0][1]


def test_seed_determines_the_output(data):
    _, first = _run(data, "seed-a", random_seed=1, documents_per_shard=40)
    _, again = _run(data, "seed-b", random_seed=1, documents_per_shard=40)
    _, other = _run(data, "seed-c", random_seed=2, documents_per_shard=40)
    assert first == again
    assert first != other


def test_outputs_are_written_round_robin(data):
    _, (single,) = _run(data, "single", documents_per_shard=30)
    _, (even, odd) = _run(data, "pair", num_outputs=2, documents_per_shard=30)
    assert even == single[0::2] and odd == single[1::2]


def test_records_load_in_the_training_input_pipeline(data):
    summary, (records,) = _run(data, "training", documents_per_shard=30)
    path = summary.output_files[0]
    pretraining_input.check_record_lengths([path], 64, 10)
    spec = pretraining_input.feature_spec(64, 10)
    for record in records[:50]:
        features = tf.io.parse_single_example(record, spec)
        mask = features["input_mask"].numpy()
        num_tokens = int(mask.sum())
        assert mask.tolist() == [1] * num_tokens + [0] * (64 - num_tokens)
        weights = features["masked_lm_weights"].numpy()
        assert 1 <= weights.sum() <= 10
    batch = next(iter(pretraining_input.training_dataset([path], 8, 64, 10, seed=1)))
    assert batch["input_ids"].shape == (8, 64)
    assert batch["masked_lm_ids"].shape == (8, 10)
    assert batch["next_sentence_labels"].shape == (8, 1)
    labels = np.array([int(tf.io.parse_single_example(r, spec)["next_sentence_labels"][0])
                       for r in records])
    assert 0.4 < labels.mean() < 0.65


def test_logs_the_first_instances_and_the_total(data, caplog):
    caplog.set_level(logging.INFO)
    summary, _ = _run(data, "logged", documents_per_shard=30)
    messages = [record.getMessage() for record in caplog.records]
    assert messages.count("*** Example ***") == 20
    assert any(m.startswith("tokens: [CLS] ") for m in messages)
    assert "Wrote %d total instances" % summary.num_instances in messages
    assert any("instances/s" in m and "ETA" in m for m in messages)


def test_invalid_utf8_lines_are_skipped_and_counted(data):
    path = data["dir"] / "bad.txt"
    path.write_bytes(b"A good line of text.\nbad \xff line\nThe end of it.\n\nNext doc \xfe.\n")
    summary, _ = _run(data, "bad-utf8", inputs=[str(path)])
    assert summary.skipped_lines == {str(path): 2}
    assert summary.num_documents == 1


@pytest.mark.parametrize("make_input,message", [
    (lambda d: d / "missing.txt", "missing.txt does not exist"),
    (lambda d: d / "nothing-*.txt", "matches no file"),
    (lambda d: _with(d / "empty.txt", b""), "The input files are empty"),
    (lambda d: _with(d / "blank.txt", b"\n  \n\n"), "The input holds no text"),
    (lambda d: _with(d / "invalid.txt", b"\xff\xfe\n"),
     r"no line of .*invalid.txt tokenizes to anything \(lines skipped as not UTF-8: 1\)"),
])
def test_input_errors(data, make_input, message):
    with pytest.raises(ValueError, match=message):
        _run(data, "error", inputs=[str(make_input(data["dir"]))])
    # Not even an empty output file, nor its .incomplete.
    assert not [name for name in os.listdir(data["dir"]) if name.startswith("error-")]


def _with(path, content):
    path.write_bytes(content)
    return path


def test_vocab_errors(data, tmp_path):
    with pytest.raises(ValueError, match="--vocab_file: .*no-vocab.txt does not exist"):
        _run(dict(data, vocab=str(tmp_path / "no-vocab.txt")), "error")
    no_mask = tmp_path / "no-mask.txt"
    no_mask.write_text("\n".join(t for t in testing.vocab_tokens() if t != "[MASK]") + "\n")
    with pytest.raises(ValueError, match=r"^--vocab_file \S+/no-mask.txt lacks \[MASK\] \(\d+ tokens\): pre-training "
                                         r"data needs \[CLS\], \[SEP\] and \[MASK\]"):
        _run(dict(data, vocab=str(no_mask)), "error")


def test_flag_errors(data, tmp_path):
    with pytest.raises(ValueError, match="--num_workers"):
        _run(data, "error", num_workers=-1)
    with pytest.raises(ValueError, match="--documents_per_shard"):
        _run(data, "error", documents_per_shard=0)
    with pytest.raises(ValueError, match="--max_seq_length"):
        _run(data, "error", max_seq_length=3)
    with pytest.raises(ValueError, match="Cannot create output file"):
        pipeline.run(instances.CreatePretrainingDataOptions(
            input_file=data["inputs"][0], output_file=str(tmp_path / "no-dir" / "out.tfrecord"),
            vocab_file=data["vocab"], num_workers=0))


def test_an_interrupted_run_leaves_no_output_and_keeps_a_previous_one(data, monkeypatch):
    paths = _output_files(data, "interrupted", 2)
    _run(data, "interrupted", documents_per_shard=30)  # A complete paths[0].
    with open(paths[0], "rb") as f:
        previous = f.read()
    write_shard = writer_lib.RoundRobinWriter.write_shard

    def write_one_shard_then_stop(writer, records):
        if writer.total_written:
            raise KeyboardInterrupt
        write_shard(writer, records)

    monkeypatch.setattr(writer_lib.RoundRobinWriter, "write_shard", write_one_shard_then_stop)
    with pytest.raises(KeyboardInterrupt):
        _run(data, "interrupted", num_outputs=2, documents_per_shard=30)
    with open(paths[0], "rb") as f:
        assert f.read() == previous
    assert sorted(n for n in os.listdir(data["dir"]) if n.startswith("interrupted-")) == [
        "interrupted-0.tfrecord"]


def test_without_prctl_a_worker_exits_once_its_parent_pid_changes(monkeypatch):
    # The fallback of shard_worker.exit_with_parent; Linux uses PR_SET_PDEATHSIG
    # (create_pretraining_data_test kills a main process).
    parent_pids = iter([42, 42, 1])  # Orphans are adopted: the parent pid changes.
    monkeypatch.setattr(shard_worker.os, "getppid", lambda: next(parent_pids))
    exits = []
    shard_worker.watch_parent(42, interval_seconds=0, exit_process=exits.append)
    assert exits == [1] and next(parent_pids, None) is None


def test_worker_modules_do_not_import_tensorflow():
    # Workers are spawned: they must start fast and small.
    code = ("import sys; import pretraining_data.shard_worker; "
            "sys.exit('tensorflow' in sys.modules)")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert subprocess.run([sys.executable, "-c", code], cwd=repo, timeout=60).returncode == 0


def test_every_compiled_module_is_in_use():
    assert pipeline.missing_compiled_modules() == [], "run make setup"


def test_a_missing_compiled_module_is_named_in_a_warning(data, caplog, monkeypatch):
    from pretraining_data import example_encoder
    monkeypatch.setattr(example_encoder, "COMPILED", False)
    assert pipeline.missing_compiled_modules() == ["pretraining_data/_example_encoding.pyx"]
    caplog.set_level(logging.WARNING)
    summary, _ = _run(data, "python-encoding", documents_per_shard=60)
    assert summary.num_instances > 0
    assert any("pretraining_data/_example_encoding.pyx; run `make setup`" in r.getMessage()
               for r in caplog.records)


def test_text_the_vocabulary_does_not_cover_is_named_in_a_warning(data, tmp_path, caplog):
    with caplog.at_level("WARNING"):
        _run(data, "covered")
    assert "[UNK]" not in caplog.text
    # Upper-cased text kept cased (--do_lower_case=False) against a lower-case vocab: almost every piece unknown.
    shouted = testing.write_corpus(str(tmp_path / "shouted.txt"), [
        [sentence.upper() for sentence in document] for document in testing.make_documents(30, seed=2)])
    caplog.clear()
    with caplog.at_level("WARNING"):
        _run(data, "shouted", inputs=[shouted], do_lower_case=False)
    found = re.search(r"(\d+) of the (\d+) word pieces of the first instances \(\d+%\) are \[UNK\]: the vocabulary "
                      r"does not cover this text\. Check --vocab_file and --do_lower_case", caplog.text)
    assert found and int(found.group(1)) > 0.5 * int(found.group(2)), caplog.text
