"""Hugging Face `config.json` of a BERT <-> our `BertConfig`.

The eleven architecture keys have the same names and meanings in both (HF's
BertConfig was written from the original's). What differs:

  * `hidden_act`: HF's "gelu" is the exact (erf) GELU, our "gelu_exact"; the
    original's tanh approximation, our "gelu", is HF's "gelu_new" (also
    "gelu_fast", "gelu_pytorch_tanh": the same function).
  * HF's defaults for absent keys differ from the original's (type_vocab_size
    2, not 16): absent keys take HF's defaults, as HF would.
  * HF keys that change the model in ways ours cannot follow are refused:
    another `model_type`, relative `position_embedding_type`, a
    `layer_norm_eps` other than the original's 1e-12, a decoder
    (`is_decoder`, `add_cross_attention`).
  * HF has no head size: it is hidden_size / num_attention_heads. A config of
    ours with another `head_size` cannot be written for HF.
"""

import collections

from absl import logging

from modeling.bert_config import BertConfig
from modeling.checkpoint_conversion.errors import ConversionError

# HF BertConfig's defaults for the keys both configs have.
HF_DEFAULTS = collections.OrderedDict(
    [
        ("vocab_size", 30522),
        ("hidden_size", 768),
        ("num_hidden_layers", 12),
        ("num_attention_heads", 12),
        ("intermediate_size", 3072),
        ("hidden_act", "gelu"),
        ("hidden_dropout_prob", 0.1),
        ("attention_probs_dropout_prob", 0.1),
        ("max_position_embeddings", 512),
        ("type_vocab_size", 2),
        ("initializer_range", 0.02),
    ]
)
# HF hidden_act -> ours (same function).
ACTIVATIONS_FROM_HF = {
    "gelu": "gelu_exact",
    "gelu_python": "gelu_exact",
    "gelu_new": "gelu",
    "gelu_fast": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
ACTIVATIONS_TO_HF = {"gelu": "gelu_new", "gelu_exact": "gelu", "relu": "relu", "tanh": "tanh", "linear": "linear"}
LAYER_NORM_EPS = 1e-12  # The original's, and our model's.
# Keys checked to have the one value our model follows.
CHECKED_KEYS = ("model_type", "position_embedding_type", "layer_norm_eps", "is_decoder", "add_cross_attention",
                "embedding_size")


def bert_config_from_hf(values, source):
    """Our `BertConfig` from a HF config.json's dict.

    Raises:
      ConversionError: naming `source` and the key, for a config the model
        cannot follow or a value BertConfig refuses.
    """
    if not isinstance(values, dict):
        raise ConversionError("%s must hold a JSON object." % source)

    def refuse(key, expected):
        raise ConversionError("%s: `%s` = %r is not supported; expected %s." % (source, key, values[key], expected))

    if values.get("model_type", "bert") != "bert":
        refuse("model_type", '"bert" (this converter reads BERT only)')
    if values.get("position_embedding_type", "absolute") != "absolute":
        refuse("position_embedding_type", '"absolute", the original BERT position embeddings')
    if values.get("layer_norm_eps", LAYER_NORM_EPS) != LAYER_NORM_EPS:
        refuse("layer_norm_eps", "%g, the original BERT's (our model's LayerNorm epsilon is fixed)" % LAYER_NORM_EPS)
    for key in ("is_decoder", "add_cross_attention"):
        if values.get(key, False):
            refuse(key, "false: BERT is an encoder")
    activation = values.get("hidden_act", HF_DEFAULTS["hidden_act"])
    if not isinstance(activation, str) or activation not in ACTIVATIONS_FROM_HF:
        refuse("hidden_act", "one of %s" % ", ".join(sorted(ACTIVATIONS_FROM_HF)))
    if "embedding_size" in values and values["embedding_size"] != values.get("hidden_size", HF_DEFAULTS["hidden_size"]):
        refuse("embedding_size", "hidden_size: BERT has no embedding projection")

    settings = {key: values.get(key, default) for key, default in HF_DEFAULTS.items()}
    settings["hidden_act"] = ACTIVATIONS_FROM_HF[activation]
    try:
        config = BertConfig(**settings)
    except ValueError as error:
        raise ConversionError("%s: %s" % (source, error)) from None
    defaulted = [key for key in HF_DEFAULTS if key not in values]
    if defaulted:
        logging.info("%s has no %s: HF's defaults apply.", source, ", ".join(defaulted))
    ignored = sorted(set(values) - set(HF_DEFAULTS) - set(CHECKED_KEYS))
    logging.info("%s: hidden_act %r is our %r. Other keys, not converted (BertConfig has none of them): %s.",
                 source, activation, config.hidden_act, ", ".join(ignored) or "none")
    return config


def hf_config_from_bert(config, architecture):
    """HF config.json's dict for our `BertConfig`.

    Raises:
      ConversionError: for a `head_size` other than hidden_size / num_attention_heads.
    """
    natural = config.hidden_size // config.num_attention_heads
    if config.head_size is not None and (
            config.head_size != natural or config.hidden_size % config.num_attention_heads):
        raise ConversionError(
            "BertConfig `head_size` = %d cannot be expressed in a Hugging Face BertConfig, whose head size is "
            "hidden_size / num_attention_heads = %d / %d; only head_size null (or equal to that) converts."
            % (config.head_size, config.hidden_size, config.num_attention_heads))
    values = collections.OrderedDict([("architectures", [architecture]), ("model_type", "bert")])
    for key in HF_DEFAULTS:
        values[key] = getattr(config, key)
    values["hidden_act"] = ACTIVATIONS_TO_HF[config.hidden_act]
    values["layer_norm_eps"] = LAYER_NORM_EPS
    values["position_embedding_type"] = "absolute"
    extra = sorted(set(config.to_dict()) - set(HF_DEFAULTS) - {"head_size"})
    if extra:
        logging.info("BertConfig keys with no meaning for the model, not written to config.json: %s.",
                     ", ".join(extra))
    return values
