"""--init_checkpoint: every way it can be unreadable is one ValueError naming the flag."""

import pytest

import modeling
from checkpoints import init_checkpoint
from modeling.family import FAMILY
from modeling.pretraining import PretrainingOptions

CONFIG = modeling.BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=12, max_position_embeddings=16)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    model = modeling.build_model(modeling.BertModel(CONFIG))
    return modeling.save_checkpoint(model, str(tmp_path_factory.mktemp("ckpt") / "model.ckpt"))


def test_a_good_checkpoint_resolves_lists_and_loads(prefix, tmp_path):
    assert init_checkpoint.check(prefix) == prefix
    assert "bert/encoder/layer_0/attention/self/query/kernel" in init_checkpoint.variable_names(prefix)
    result = init_checkpoint.load(modeling.build_model(modeling.BertModel(CONFIG)), prefix)
    assert not result.missing


def test_a_damaged_index_is_refused_before_anything_is_built(prefix, tmp_path):
    damaged = tmp_path / "damaged.ckpt"
    damaged.with_suffix(".ckpt.index").write_bytes(open(prefix + ".index", "rb").read()[:100])
    options = PretrainingOptions(bert_config_file="unused", input_file="x", output_dir=str(tmp_path),
                                 init_checkpoint=str(damaged))
    with pytest.raises(ValueError, match=r"^--init_checkpoint: cannot read checkpoint %s: not an sstable"
                       % damaged):
        FAMILY.freezer(options, CONFIG)


def test_a_missing_data_file_is_named_when_loading(prefix, tmp_path):
    no_data = tmp_path / "no_data.ckpt"
    no_data.with_suffix(".ckpt.index").write_bytes(open(prefix + ".index", "rb").read())
    assert init_checkpoint.check(str(no_data)) == str(no_data)  # The index alone reads.
    with pytest.raises(ValueError) as error:
        init_checkpoint.load(modeling.build_model(modeling.BertModel(CONFIG)), str(no_data))
    assert str(error.value) == ("--init_checkpoint: cannot read checkpoint %s: %s.data-00000-of-00001; "
                                "No such file or directory" % (no_data, no_data))


@pytest.mark.parametrize("path, message", [
    ("", "--init_checkpoint is empty; give a checkpoint prefix or directory."),
    ("{tmp}/nope.ckpt", "--init_checkpoint: Checkpoint {tmp}/nope.ckpt not found: expected the file "
                        "{tmp}/nope.ckpt.index."),
    ("{tmp}", "--init_checkpoint: No checkpoint found in directory {tmp}."),
])
def test_nothing_there_is_named(tmp_path, path, message):
    with pytest.raises(ValueError) as error:
        init_checkpoint.check(path.format(tmp=tmp_path))
    assert str(error.value) == message.format(tmp=tmp_path)
