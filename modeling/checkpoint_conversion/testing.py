"""Test support: tiny checkpoints in each format, written by hand.

`hf_state_dict` spells out HF's BERT names and layouts name by name, from
transformers' modeling_bert.py, independently of `hf_names`' table, so that
tests of the converter check it against a second transcription.
"""

import json
import os

import numpy as np
from safetensors import numpy as safetensors_numpy

import modeling
from modeling.testing import original_bert_numpy

CONFIG = modeling.BertConfig(
    vocab_size=30,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=48,
    max_position_embeddings=16,
    type_vocab_size=2,
    hidden_act="gelu_exact",
)
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["tok%d" % i for i in range(25)]


def random_tensors(config=CONFIG, seed=0, pretraining=True):
    """{original name: float32 array} with every term non-trivial."""
    return original_bert_numpy.random_original_tensors(config, seed, pretraining=pretraining)


def hf_state_dict(t, num_layers, prefix="bert.", pooler=True):
    """The HF BertForPreTraining / BertModel state dict of original tensors `t`.

    nn.Linear weights are [out, in]: the original kernels transposed. The
    `cls.` heads are included when `t` has them.
    """
    hf = {
        prefix + "embeddings.word_embeddings.weight": t["bert/embeddings/word_embeddings"],
        prefix + "embeddings.position_embeddings.weight": t["bert/embeddings/position_embeddings"],
        prefix + "embeddings.token_type_embeddings.weight": t["bert/embeddings/token_type_embeddings"],
        prefix + "embeddings.LayerNorm.weight": t["bert/embeddings/LayerNorm/gamma"],
        prefix + "embeddings.LayerNorm.bias": t["bert/embeddings/LayerNorm/beta"],
    }
    for i in range(num_layers):
        hf_layer = "%sencoder.layer.%d." % (prefix, i)
        layer = "bert/encoder/layer_%d/" % i
        for part in ("query", "key", "value"):
            hf[hf_layer + "attention.self.%s.weight" % part] = t[layer + "attention/self/%s/kernel" % part].T
            hf[hf_layer + "attention.self.%s.bias" % part] = t[layer + "attention/self/%s/bias" % part]
        hf[hf_layer + "attention.output.dense.weight"] = t[layer + "attention/output/dense/kernel"].T
        hf[hf_layer + "attention.output.dense.bias"] = t[layer + "attention/output/dense/bias"]
        hf[hf_layer + "attention.output.LayerNorm.weight"] = t[layer + "attention/output/LayerNorm/gamma"]
        hf[hf_layer + "attention.output.LayerNorm.bias"] = t[layer + "attention/output/LayerNorm/beta"]
        hf[hf_layer + "intermediate.dense.weight"] = t[layer + "intermediate/dense/kernel"].T
        hf[hf_layer + "intermediate.dense.bias"] = t[layer + "intermediate/dense/bias"]
        hf[hf_layer + "output.dense.weight"] = t[layer + "output/dense/kernel"].T
        hf[hf_layer + "output.dense.bias"] = t[layer + "output/dense/bias"]
        hf[hf_layer + "output.LayerNorm.weight"] = t[layer + "output/LayerNorm/gamma"]
        hf[hf_layer + "output.LayerNorm.bias"] = t[layer + "output/LayerNorm/beta"]
    if pooler:
        hf[prefix + "pooler.dense.weight"] = t["bert/pooler/dense/kernel"].T
        hf[prefix + "pooler.dense.bias"] = t["bert/pooler/dense/bias"]
    if "cls/predictions/output_bias" in t:
        hf["cls.predictions.transform.dense.weight"] = t["cls/predictions/transform/dense/kernel"].T
        hf["cls.predictions.transform.dense.bias"] = t["cls/predictions/transform/dense/bias"]
        hf["cls.predictions.transform.LayerNorm.weight"] = t["cls/predictions/transform/LayerNorm/gamma"]
        hf["cls.predictions.transform.LayerNorm.bias"] = t["cls/predictions/transform/LayerNorm/beta"]
        hf["cls.predictions.bias"] = t["cls/predictions/output_bias"]
    if "cls/seq_relationship/output_weights" in t:
        hf["cls.seq_relationship.weight"] = t["cls/seq_relationship/output_weights"]  # [2, H] in both
        hf["cls.seq_relationship.bias"] = t["cls/seq_relationship/output_bias"]
    return {name: np.ascontiguousarray(value) for name, value in hf.items()}


def hf_config(config=CONFIG, **overrides):
    """A HF config.json dict as transformers writes one for `config`."""
    values = {
        "architectures": ["BertForPreTraining"],
        "model_type": "bert",
        "attention_probs_dropout_prob": config.attention_probs_dropout_prob,
        "hidden_act": {"gelu_exact": "gelu", "gelu": "gelu_new"}.get(config.hidden_act, config.hidden_act),
        "hidden_dropout_prob": config.hidden_dropout_prob,
        "hidden_size": config.hidden_size,
        "initializer_range": config.initializer_range,
        "intermediate_size": config.intermediate_size,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": config.max_position_embeddings,
        "num_attention_heads": config.num_attention_heads,
        "num_hidden_layers": config.num_hidden_layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "transformers_version": "4.40.0",
        "type_vocab_size": config.type_vocab_size,
        "use_cache": True,
        "vocab_size": config.vocab_size,
    }
    values.update(overrides)
    return values


def write_vocab(path):
    with open(path, "w") as f:
        f.write("".join(token + "\n" for token in VOCAB))
    return path


def write_hf_dir(directory, hf_tensors, config_values=None):
    """A HF model directory: config.json, model.safetensors (metadata format pt), vocab.txt."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(hf_config() if config_values is None else config_values, f)
    safetensors_numpy.save_file(hf_tensors, os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    write_vocab(os.path.join(directory, "vocab.txt"))
    return directory


def write_original_dir(directory, tensors, config=CONFIG):
    """Our layout: bert_model.ckpt saved by `modeling.save_checkpoint`, bert_config.json, vocab.txt."""
    os.makedirs(directory, exist_ok=True)
    model = modeling.build_model(modeling.BertPretrainingModel(config))
    variables = modeling.original_variables(model)
    for name, value in tensors.items():
        variables[name].variable.assign(variables[name].from_original(value))
    omit = [name for name in variables if name not in tensors]
    modeling.save_checkpoint(model, os.path.join(directory, "bert_model.ckpt"), omit=omit)
    config.to_json_file(os.path.join(directory, "bert_config.json"))
    write_vocab(os.path.join(directory, "vocab.txt"))
    return directory
