"""convert_checkpoint.py's command line, run in process.

The flags are defined on a FlagValues of the test's own, as the entry point
defines them on absl's global one (other modules define --vocab_file and
--bert_config_file there too).
"""

import os

import pytest
from absl import flags

import modeling
import options
from modeling.checkpoint_conversion import ConvertCheckpointOptions, run, testing

PROGRAM = "convert_checkpoint.py"


@pytest.fixture
def main():
    """What convert_checkpoint.py does: parse argv as app.run would, then run_or_exit."""
    flag_values = flags.FlagValues()
    options.define_flags(ConvertCheckpointOptions, flag_values)
    parse = options.flags_parser(PROGRAM, ConvertCheckpointOptions, flag_values)

    def call(argv):
        parse([PROGRAM] + argv)
        return options.run_or_exit(PROGRAM, run, options.from_flags(ConvertCheckpointOptions, flag_values))

    return call


def test_a_hf_directory_becomes_what_the_scripts_take(tmp_path, main):
    tensors = testing.random_tensors()
    testing.write_hf_dir(str(tmp_path / "hf"), testing.hf_state_dict(tensors, testing.CONFIG.num_hidden_layers))
    main(["--input_format=huggingface", "--input=%s" % (tmp_path / "hf"), "--output_dir=%s" % (tmp_path / "out")])
    assert sorted(os.listdir(tmp_path / "out")) == [
        "bert_config.json", "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index", "vocab.txt"]
    # --init_checkpoint, --bert_config_file: the model loads everything, nothing left over.
    config = modeling.BertConfig.from_json_file(str(tmp_path / "out" / "bert_config.json"))
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    result = modeling.load_checkpoint(model, str(tmp_path / "out" / "bert_model.ckpt"))
    assert result.missing == [] and result.unexpected == [] and len(result.loaded) == len(tensors)


def test_bad_input_ends_with_one_line_naming_it(tmp_path, main):
    with pytest.raises(SystemExit, match=r"^convert_checkpoint.py: error: Hugging Face model %s/missing not found"
                                         % tmp_path):
        main(["--input_format=huggingface", "--input=%s" % (tmp_path / "missing"),
              "--output_dir=%s" % (tmp_path / "out")])
