"""HF directories: a hand-made model.safetensors checked through the NumPy BERT forward; the files; the errors."""

import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf
from safetensors import numpy as safetensors_numpy

import modeling
from modeling.checkpoint_conversion import hf_format, testing
from modeling.checkpoint_conversion.converted_checkpoint import load_into_model
from modeling.checkpoint_conversion.errors import ConversionError
from modeling.testing import original_bert_numpy as reference

LAYERS = testing.CONFIG.num_hidden_layers


@pytest.fixture(scope="module")
def tensors():
    return testing.random_tensors(seed=3)


def _inputs():
    rng = np.random.RandomState(0)
    ids = rng.randint(0, testing.CONFIG.vocab_size, size=[2, 7]).astype(np.int32)
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3], np.int32)
    types = np.array([[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 0, 0, 0]], np.int32)
    return ids, mask, types


def test_a_hand_made_safetensors_model_computes_the_original_bert(tmp_path, tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    hf["bert.embeddings.position_ids"] = np.arange(16, dtype=np.int64)[None]
    testing.write_hf_dir(str(tmp_path), hf)
    checkpoint = hf_format.read_huggingface(str(tmp_path))
    assert checkpoint.config == testing.CONFIG and checkpoint.vocab_file == str(tmp_path / "vocab.txt")
    model, absent = load_into_model(checkpoint)
    assert absent == []

    ids, mask, types = _inputs()
    positions = np.array([[1, 5], [0, 2]], np.int32)
    got = model(dict(input_ids=ids, input_mask=mask, token_type_ids=types, masked_lm_positions=positions))
    # The reference reads the original tensors, not the HF file: HF "gelu" is the exact GELU.
    want = reference.bert_forward(testing.CONFIG, tensors, ids, mask, types)
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(got[key].numpy(), want[key], atol=1e-5, rtol=0, err_msg=key)
    mlm, nsp = reference.pretraining_heads_forward(testing.CONFIG, tensors, want["sequence_output"],
                                                   want["pooled_output"], positions)
    np.testing.assert_allclose(got["masked_lm_logits"].numpy(), mlm, atol=1e-5, rtol=0)
    np.testing.assert_allclose(got["next_sentence_logits"].numpy(), nsp, atol=1e-5, rtol=0)


def test_a_plain_bert_model_without_pooler_converts_what_it_has(tmp_path, tensors, caplog):
    encoder = {n: v for n, v in tensors.items() if n.startswith(("bert/embeddings/", "bert/encoder/"))}
    testing.write_hf_dir(str(tmp_path), testing.hf_state_dict(encoder, LAYERS, prefix="", pooler=False))
    checkpoint = hf_format.read_huggingface(str(tmp_path / "model.safetensors"))  # The weights file names it too.
    assert sorted(checkpoint.tensors) == sorted(encoder)
    with caplog.at_level("WARNING"):
        _, absent = load_into_model(checkpoint)
    assert absent == sorted(set(tensors) - set(encoder))
    assert "model.safetensors has no pooler (bert/pooler/)" in caplog.text
    assert "has no masked-LM head (cls/predictions/)" in caplog.text
    assert "has no next-sentence head (cls/seq_relationship/)" in caplog.text


def test_shards_float16_and_bfloat16_read_exactly(tmp_path, tensors):
    hf = testing.hf_state_dict(tensors, LAYERS)
    names = sorted(hf)
    half = {n: hf[n].astype(np.float16) for n in names[:10]}
    brain = {n: hf[n].astype("bfloat16") for n in names[10:20]}
    rest = {n: hf[n] for n in names[20:]}
    testing.write_hf_dir(str(tmp_path), {})
    os.remove(tmp_path / "model.safetensors")
    weight_map = {}
    for shard, part in (("model-00001-of-00003.safetensors", half), ("model-00002-of-00003.safetensors", brain),
                        ("model-00003-of-00003.safetensors", rest)):
        safetensors_numpy.save_file(part, str(tmp_path / shard), metadata={"format": "pt"})
        weight_map.update({n: shard for n in part})
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    checkpoint = hf_format.read_huggingface(str(tmp_path))
    model, _ = load_into_model(checkpoint)
    values = {name: entry.to_original(entry.variable.numpy())
              for name, entry in modeling.original_variables(model).items()}
    kernel = "bert/encoder/layer_0/attention/self/query/kernel"
    source = checkpoint.sources[kernel].split(": ")[1].split(" ")[0]
    assert values[kernel].dtype == np.float32
    np.testing.assert_array_equal(values[kernel], np.asarray(
        {**half, **brain, **rest}[source], np.float32).T)


def test_written_directory_is_what_transformers_reads(tmp_path, tensors):
    testing.write_hf_dir(str(tmp_path / "in"), testing.hf_state_dict(tensors, LAYERS))
    model, absent = load_into_model(hf_format.read_huggingface(str(tmp_path / "in")))
    paths = hf_format.write_huggingface(model, absent, testing.CONFIG, str(tmp_path / "in" / "vocab.txt"),
                                        str(tmp_path / "out"), do_lower_case=False)
    assert sorted(os.path.basename(p) for p in paths) == sorted(os.listdir(tmp_path / "out"))
    with open(tmp_path / "out" / "config.json") as f:
        config = json.load(f)
    assert config["architectures"] == ["BertForPreTraining"] and config["hidden_act"] == "gelu"
    with open(tmp_path / "out" / "tokenizer_config.json") as f:
        assert json.load(f)["do_lower_case"] is False
    from safetensors import safe_open  # pylint: disable=import-outside-toplevel
    with safe_open(str(tmp_path / "out" / "model.safetensors"), framework="np") as f:
        assert f.metadata() == {"format": "pt"}  # from_pretrained refuses a file without it
        written = {name: f.get_tensor(name) for name in f.keys()}
    expected = testing.hf_state_dict(tensors, LAYERS)
    assert sorted(written) == sorted(expected)
    for name in expected:
        np.testing.assert_array_equal(written[name], expected[name], err_msg=name)
    assert (tmp_path / "out" / "vocab.txt").read_text() == (tmp_path / "in" / "vocab.txt").read_text()


def test_pytorch_weights_without_torch_name_what_to_do(tmp_path, monkeypatch):
    testing.write_hf_dir(str(tmp_path), {})
    os.remove(tmp_path / "model.safetensors")
    (tmp_path / "pytorch_model.bin").write_bytes(b"not read")
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(ConversionError, match=r"pytorch_model.bin is a PyTorch file, and reading it needs torch, "
                                              r"which is not installed: `pip install torch`, or give a directory with "
                                              r"model.safetensors"):
        hf_format.read_huggingface(str(tmp_path))


def test_missing_files_are_named(tmp_path):
    with pytest.raises(ConversionError, match=r"Hugging Face model %s/nothing not found" % tmp_path):
        hf_format.read_huggingface(str(tmp_path / "nothing"))
    with pytest.raises(ConversionError, match=r"%s/config.json not found: a Hugging Face BERT directory needs "
                                              r"config.json" % tmp_path):
        hf_format.read_huggingface(str(tmp_path))
    testing.write_hf_dir(str(tmp_path), {})
    os.remove(tmp_path / "model.safetensors")
    (tmp_path / "tf_model.h5").write_bytes(b"")
    with pytest.raises(ConversionError, match=r"has no weights this converter reads: expected one of "
                                              r"model.safetensors, .*\(tf_model.h5 is not read\)"):
        hf_format.read_huggingface(str(tmp_path))
    (tmp_path / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}")
    with pytest.raises(ConversionError, match=r"model.safetensors is not a readable safetensors file"):
        hf_format.read_huggingface(str(tmp_path))


def test_a_missing_vocabulary_is_named(tmp_path, tensors):
    testing.write_hf_dir(str(tmp_path), testing.hf_state_dict(tensors, LAYERS))
    os.remove(tmp_path / "vocab.txt")
    with pytest.raises(ConversionError, match=r"vocab.txt not found: a Hugging Face BERT directory needs vocab.txt"):
        hf_format.read_huggingface(str(tmp_path))
    assert tf.io.gfile.exists(str(tmp_path / "config.json"))
