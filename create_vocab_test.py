"""create_vocab.py's command line, run in process.

The flags are defined on a FlagValues of the test's own, as the entry point
defines them on absl's global one (see probe_attention_rank_test.py).
"""

import re

import pytest
from absl import flags

import options
import tokenization
from tokenization import vocab_builder

PROGRAM = "create_vocab.py"


@pytest.fixture
def main():
    """What create_vocab.py does: parse argv as app.run would, then run_or_exit."""
    flag_values = flags.FlagValues()
    options.define_flags(vocab_builder.CreateVocabOptions, flag_values)
    parse = options.flags_parser(PROGRAM, vocab_builder.CreateVocabOptions, flag_values)

    def run(argv):
        parse([PROGRAM] + argv)
        return options.run_or_exit(PROGRAM, vocab_builder.run,
                                   options.from_flags(vocab_builder.CreateVocabOptions, flag_values))

    return run


def test_a_run_writes_a_vocab_the_tokenizer_reads(tmp_path, main):
    (tmp_path / "a.txt").write_text("The cat sat on the mat.\nA dog ran.\n\nThe end.\n" * 15)
    summary = main(["--input_file=%s" % (tmp_path / "*.txt"), "--output_file=%s" % (tmp_path / "vocab.txt"),
                    "--vocab_size=200", "--num_unused=2"])
    tokens = (tmp_path / "vocab.txt").read_text().split("\n")[:-1]
    assert tokens[:7] == ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert summary.vocab_size == len(tokens) <= 200
    tokenizer = tokenization.FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case=True)
    assert tokenizer.tokenize("The cat sat on the mat.") == ["the", "cat", "sat", "on", "the", "mat", "."]


def test_defaults_are_bert_base_uncased_sizes(tmp_path, main, monkeypatch):
    seen = {}
    monkeypatch.setattr(vocab_builder, "run", lambda o: seen.setdefault("options", o))
    main(["--input_file=in.txt", "--output_file=out.txt"])
    assert seen["options"] == vocab_builder.CreateVocabOptions(
        input_file="in.txt", output_file="out.txt", vocab_size=30522, do_lower_case=True, num_unused=99)


@pytest.mark.parametrize("argv,message", [
    (["--output_file=v.txt"], "missing required flag --input_file."),
    (["--input_file={tmp}/none.txt", "--output_file=v.txt"], "--input_file: .*none.txt does not exist."),
    (["--input_file={tmp}/a.txt", "--output_file=v.txt", "--vocab_size=50"],
     "--vocab_size=50 leaves no room for learned tokens"),
    (["--input_file={tmp}/a.txt", "--output_file=v.txt", "--vocab_size=x"],
     "--vocab_size=x is not valid; expected an integer."),
    # Before any learning, and naming the flag, not an .incomplete file.
    (["--input_file={tmp}/a.txt", "--output_file={tmp}"], r"--output_file=\S+ is a directory, not a file\.$"),
    (["--input_file={tmp}/a.txt", "--output_file={tmp}/no/v7.txt"],
     r"--output_file=\S+/no/v7.txt: the directory \S+/no does not exist\.$"),
])
def test_bad_command_lines_end_with_one_line(tmp_path, main, capsys, argv, message):
    (tmp_path / "a.txt").write_text("words\n")
    with pytest.raises(SystemExit) as exit_info:
        main([arg.format(tmp=tmp_path) for arg in argv])
    assert exit_info.value.code.startswith(PROGRAM + ": error: ")
    assert re.search(message, exit_info.value.code)
