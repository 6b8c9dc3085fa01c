"""probe_attention_rank.py's command line, run in process on a tiny checkpoint.

The flags are defined on a FlagValues of the test's own, as the entry point
defines them on absl's global one: importing the entry point would clash
with other modules' global flags of the same names (--head_size) in a
shared test process.
"""

import json
import os

import pytest
from absl import flags

import options
import tokenization
from analysis import attention_rank, testing

PROGRAM = "probe_attention_rank.py"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A checkpoint of head size 6 (`modeling.save_checkpoint`) whose bert_config.json says 5."""
    directory = str(tmp_path_factory.mktemp("tiny"))
    model = testing.write_initial_model(directory, head_size=6)
    testing.write_files(directory, model["config"].replace(head_size=5))
    return model


@pytest.fixture
def main():
    """What probe_attention_rank.py does: parse argv as app.run would, then run_or_exit."""
    flag_values = flags.FlagValues()
    options_class = attention_rank.ProbeAttentionRankOptions
    options.define_flags(options_class, flag_values)
    parse = options.flags_parser(PROGRAM, options_class, flag_values)

    def run(argv):
        parse([PROGRAM] + argv)
        options.run_or_exit(PROGRAM, attention_rank.run_from_options, options.from_flags(options_class, flag_values))

    return run


def _argv(tiny, tmp_path, *extra):
    return ["--input_file=%s" % (tmp_path / "input.txt"), "--output_file=%s" % (tmp_path / "ranks.jsonl"),
            "--bert_config_file=%s" % tiny["bert_config_file"], "--init_checkpoint=%s" % tiny["init_checkpoint"],
            "--vocab_file=%s" % tiny["vocab_file"], "--max_seq_length=16"] + list(extra)  # The last value counts.


def test_a_run_writes_what_the_library_computes(tiny, tmp_path, main):
    lines = ["The Cat sat on the mat.", "the dog ||| a cat sat", "big red dogs ran under the mat and the cat"]
    (tmp_path / "input.txt").write_text("".join(line + "\n" for line in lines))
    # --head_size overrides the config's 5: the checkpoint loads only with 6.
    main(_argv(tiny, tmp_path, "--max_seq_length=12", "--head_size=6", "--batch_size=2"))

    assert sorted(os.listdir(tmp_path)) == [
        "input.txt", "ranks.jsonl", "ranks.jsonl.rank_vs_length.png", "ranks.jsonl.summary.json"]
    with open(tmp_path / "ranks.jsonl") as f:
        records = [json.loads(line) for line in f]
    tokenizer = tokenization.FullTokenizer(tiny["vocab_file"], do_lower_case=True)
    assert records == attention_rank.probe(tiny["config"], tiny["init_checkpoint"], tokenizer, lines,
                                           max_seq_length=12, batch_size=2)
    assert records[0]["tokens"] == "[CLS] the cat sat on the mat . [SEP]".split()  # Lower-cased.
    assert len(records[2]["tokens"]) == 12  # Truncated to --max_seq_length.
    with open(tmp_path / "ranks.jsonl.summary.json") as f:
        summary = json.load(f)
    assert summary == attention_rank.summarize(records, 6)
    assert summary["head_size"] == 6 and summary["num_tokens"] == [9, 8, 12]
    with open(tmp_path / "ranks.jsonl.rank_vs_length.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_summary_and_plot_go_where_the_flags_say(tiny, tmp_path, main):
    (tmp_path / "input.txt").write_text("the cat\n")
    main(_argv(tiny, tmp_path, "--head_size=6", "--summary_file=%s" % (tmp_path / "s.json"),
               "--plot_file=%s" % (tmp_path / "p.png")))
    assert sorted(os.listdir(tmp_path)) == ["input.txt", "p.png", "ranks.jsonl", "s.json"]


@pytest.mark.parametrize("argv, message", [
    (lambda tiny, tmp: [], "missing required flags --bert_config_file, --input_file, --output_file, "
                           "--init_checkpoint, --vocab_file. Try --help."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--max_seq_length=abc"),
     "--max_seq_length=abc is not valid; expected an integer. Try --help."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--plot-file=x"),
     "Unknown command line flag 'plot-file'. Did you mean: plot_file ? Try --help."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--batch_size=0"), "--batch_size=0 must be positive."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--head_size=0"), "--head_size=0 must be positive."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--bert_config_file=%s/none.json" % tmp),
     "--bert_config_file={tmp}/none.json does not exist."),
    (lambda tiny, tmp: _argv(tiny, tmp, "--head_size=6", "--vocab_file=%s/none.txt" % tmp),
     "--vocab_file={tmp}/none.txt does not exist."),
    (lambda tiny, tmp: _argv(tiny, tmp),  # The config's head size 5 against the checkpoint's 6.
     "Checkpoint {ckpt} does not fit the model (a changed head_size or bert_config?). Shape mismatch for "
     "14 variable(s): bert/encoder/layer_0/attention/self/query/kernel: checkpoint shape [16, 18], "
     "model shape [16, 15]; "),
], ids=["missing", "not_int", "unknown", "batch", "head_size", "config", "vocab", "checkpoint"])
def test_bad_input_ends_with_one_line(tiny, tmp_path, main, argv, message):
    (tmp_path / "input.txt").write_text("the cat\n")
    with pytest.raises(SystemExit) as exit_info:
        main(argv(tiny, tmp_path))
    error = exit_info.value.code
    assert isinstance(error, str) and "\n" not in error
    message = message.format(tmp=tmp_path, ckpt=tiny["init_checkpoint"])
    assert error.startswith("%s: error: %s" % (PROGRAM, message))
    assert os.listdir(tmp_path) == ["input.txt"]
