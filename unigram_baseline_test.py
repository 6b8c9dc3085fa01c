"""unigram_baseline.py's command line, run in process (flags on a FlagValues of the test's own)."""

import json

import pytest
from absl import flags

import options
from analysis import unigram_baseline
from analysis.testing import write_masked_lm_records

PROGRAM = "unigram_baseline.py"


@pytest.fixture
def main():
    """What unigram_baseline.py does: parse argv as app.run would, then run_or_exit."""
    flag_values = flags.FlagValues()
    options_class = unigram_baseline.UnigramBaselineOptions
    options.define_flags(options_class, flag_values)
    parse = options.flags_parser(PROGRAM, options_class, flag_values)

    def run(argv):
        parse([PROGRAM] + argv)
        return options.run_or_exit(PROGRAM, unigram_baseline.run, options.from_flags(options_class, flag_values))

    return run


@pytest.fixture
def files(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\n")
    write_masked_lm_records(tmp_path / "train.tfrecord", [([5, 5, 6], [1, 1, 1])], max_seq_length=4)
    write_masked_lm_records(tmp_path / "heldout.tfrecord", [([6, 5, 0], [1, 1, 0])], max_seq_length=4)
    return tmp_path


def _argv(files, *extra):
    return ["--input_file=%s" % (files / "train.tfrecord"), "--eval_input_file=%s" % (files / "heldout.tfrecord"),
            "--vocab_file=%s" % (files / "vocab.txt"), "--output_file=%s" % (files / "unigram.json"),
            "--max_seq_length=4", "--max_predictions_per_seq=3"] + list(extra)


def test_the_command_line_writes_the_baseline(files, main):
    main(_argv(files))
    with open(files / "unigram.json", encoding="utf-8") as f:
        written = json.load(f)
    # Always "the" (2 of 3 training tokens): right on 1 of the 2 held-out tokens.
    assert (written["accuracy"], written["most_frequent_token"], written["eval_masked_tokens"]) == (0.5, "the", 2)


def test_records_of_another_length_end_in_one_line_naming_the_flag(files, main):
    with pytest.raises(SystemExit) as exit_info:
        main(_argv(files, "--max_seq_length=8"))
    assert str(exit_info.value).startswith("unigram_baseline.py: error: Input file ")
    assert "input_ids has length 4 but --max_seq_length=8" in str(exit_info.value)
