"""convert_checkpoint.py's run: ours -> HF -> ours bit for bit, the flags' checks, the output directory."""

import os

import numpy as np
import pytest
import tensorflow as tf

from modeling.checkpoint_conversion import ConvertCheckpointOptions, run, testing
from modeling.checkpoint_conversion.errors import ConversionError


def _variables(prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


@pytest.mark.parametrize("heads", [True, False])
def test_ours_to_hf_to_ours_is_bit_exact(tmp_path, heads):
    """Every variable of our checkpoint comes back with the same bytes (with all groups, and with the encoder only)."""
    tensors = testing.random_tensors(pretraining=heads)
    if not heads:
        tensors = {n: v for n, v in tensors.items() if not n.startswith("bert/pooler/")}
    ours = testing.write_original_dir(str(tmp_path / "ours"), tensors)
    to_hf = run(ConvertCheckpointOptions(input_format="original", input=ours, output_format="huggingface",
                                         output_dir=str(tmp_path / "hf")))
    back = run(ConvertCheckpointOptions(input_format="huggingface", input=str(tmp_path / "hf"),
                                        output_dir=str(tmp_path / "back")))
    assert to_hf.absent == back.absent == ([] if heads else sorted(set(testing.random_tensors()) - set(tensors)))

    before, after = _variables(os.path.join(ours, "bert_model.ckpt")), _variables(str(tmp_path / "back" /
                                                                                       "bert_model.ckpt"))
    assert sorted(before) == sorted(after) == sorted(tensors)
    for name in before:
        assert after[name].dtype == before[name].dtype == np.float32
        assert after[name].tobytes() == before[name].tobytes(), name
    assert back.config == testing.CONFIG
    assert (tmp_path / "back" / "vocab.txt").read_text() == (tmp_path / "ours" / "vocab.txt").read_text()


def test_a_head_size_hf_cannot_express_is_refused_before_writing(tmp_path):
    config = testing.CONFIG.replace(head_size=6)
    ours = testing.write_original_dir(str(tmp_path / "ours"), testing.random_tensors(config), config)
    with pytest.raises(ConversionError, match=r"BertConfig `head_size` = 6 cannot be expressed in a Hugging Face "
                                              r"BertConfig"):
        run(ConvertCheckpointOptions(input_format="original", input=ours, output_format="huggingface",
                                     output_dir=str(tmp_path / "hf")))
    assert not os.path.exists(tmp_path / "hf" / "model.safetensors")


def test_model_garden_converts_straight_to_hf(tmp_path):
    from official.nlp.modeling import networks  # pylint: disable=import-outside-toplevel
    config = testing.CONFIG.replace(hidden_act="gelu")
    encoder = networks.BertEncoderV2(vocab_size=30, hidden_size=32, num_layers=2, num_attention_heads=4,
                                     max_sequence_length=16, type_vocab_size=2, inner_dim=48)
    ids = tf.zeros([1, 2], tf.int32)
    encoder(dict(input_word_ids=ids, input_mask=ids, input_type_ids=ids))
    tf.train.Checkpoint(encoder=encoder).save(str(tmp_path / "garden" / "ckpt"))
    config.to_json_file(str(tmp_path / "garden" / "bert_config.json"))
    vocab = testing.write_vocab(str(tmp_path / "vocab.txt"))  # Given by flag: not beside the checkpoint.
    result = run(ConvertCheckpointOptions(input_format="model_garden", input=str(tmp_path / "garden"),
                                          vocab_file=vocab, output_format="huggingface",
                                          output_dir=str(tmp_path / "hf")))
    assert result.absent[0].startswith("cls/") and sorted(os.listdir(tmp_path / "hf")) == [
        "config.json", "model.safetensors", "tokenizer_config.json", "vocab.txt"]


@pytest.mark.parametrize("flags,expected", [
    (dict(input_format="original", output_format="original"),
     r"--input_format=original and --output_format=original: nothing to convert"),
    (dict(input_format="huggingface", bert_config_file="c.json"),
     r"--bert_config_file is for model_garden and original input; a Hugging Face directory has its own config.json"),
    (dict(input_format="tf1"), r"--input_format=tf1 is not supported; expected one of huggingface, model_garden, "
                               r"original"),
])
def test_flags_are_checked(tmp_path, flags, expected):
    with pytest.raises(ValueError, match=expected):
        run(ConvertCheckpointOptions(input=str(tmp_path), output_dir=str(tmp_path / "out"), **flags))


def test_existing_output_files_are_not_overwritten(tmp_path):
    ours = testing.write_original_dir(str(tmp_path / "ours"), testing.random_tensors())
    with pytest.raises(ValueError, match=r"--output_dir=%s already holds bert_model.ckpt.index, "
                                         r"bert_model.ckpt.data-00000-of-00001, bert_config.json, vocab.txt; give a "
                                         r"directory without them" % ours):
        run(ConvertCheckpointOptions(input_format="huggingface", input=ours, output_dir=ours))


def test_a_vocabulary_larger_than_the_embedding_table_is_refused(tmp_path):
    ours = testing.write_original_dir(str(tmp_path / "ours"), testing.random_tensors())
    with open(os.path.join(ours, "vocab.txt"), "a") as f:
        f.write("extra\n")
    with pytest.raises(ConversionError, match=r"ours/vocab.txt has 31 tokens, more than `vocab_size` = 30 in "
                                              r".*ours/bert_config.json: expected at most that many"):
        run(ConvertCheckpointOptions(input_format="original", input=ours, output_format="huggingface",
                                     output_dir=str(tmp_path / "hf")))


def test_a_vocabulary_without_the_bert_specials_is_refused(tmp_path):
    ours = testing.write_original_dir(str(tmp_path / "ours"), testing.random_tensors())
    with open(os.path.join(ours, "vocab.txt"), "w") as f:
        f.write("".join("tok%d\n" % i for i in range(30)))
    with pytest.raises(ConversionError, match=r"^\S+ours/vocab.txt lacks \[CLS\], \[SEP\], \[UNK\]: not a BERT "
                                              r"WordPiece vocabulary"):
        run(ConvertCheckpointOptions(input_format="original", input=ours, output_format="huggingface",
                                     output_dir=str(tmp_path / "hf")))
    assert not os.path.exists(tmp_path / "hf")
