"""`BertConfig`: the original `bert_config.json`, plus `head_size`.

The keys and defaults are the original google-research/bert ones, so released
configs load unchanged and configs we write load in the original code (which
ignores keys it does not know, as we keep keys we do not know).

`head_size` is the per-head projection size d_p of Bhojanapalli et al. (2020).
Absent or null it is `hidden_size // num_attention_heads`, exactly the original
model; set, Q, K and V project hidden -> num_attention_heads * head_size and
the attention output projects back to hidden, with no divisibility needed.
"""

import copy
import json

import tensorflow as tf
from absl import logging

from layers import activations
from layers.json_config import TYPO_DISTANCE, check_positive_int, decode_utf8, edit_distance, is_real

_POSITIVE_INT_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)
_PROBABILITY_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob")


class BertConfig:
    """Configuration of a `BertModel`.

    Attributes are the `bert_config.json` keys. Keys the original does not know
    (released multilingual configs carry `pooler_*` and `directionality`) are
    kept as attributes and written back, as the original `from_dict` does.
    """

    def __init__(
        self,
        vocab_size,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=512,
        type_vocab_size=16,
        initializer_range=0.02,
        head_size=None,
    ):
        """Builds and validates a config.

        Args:
          vocab_size: int, rows of the word embedding table.
          hidden_size: int, H, width of every layer's output.
          num_hidden_layers: int, L, number of Transformer layers.
          num_attention_heads: int, N, attention heads per layer.
          intermediate_size: int, I, width of the feed-forward layer.
          hidden_act: str, feed-forward and MLM-transform activation; one of
            activations.NAMES ("gelu" is the original's tanh approximation).
          hidden_dropout_prob: float in [0, 1), dropout on embeddings and on
            every sub-layer output.
          attention_probs_dropout_prob: float in [0, 1), dropout on the
            attention probabilities.
          max_position_embeddings: int, P, longest sequence the model accepts.
          type_vocab_size: int, T, number of token types (segments).
          initializer_range: float, stddev of the truncated-normal initializer.
          head_size: int or None, D, per-head size of Q, K and V. None means
            hidden_size // num_attention_heads, which must then divide evenly.

        Raises:
          ValueError: naming the key and the value, for an invalid setting.
        """
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.head_size = head_size
        self.validate()

    @property
    def attention_head_size(self):
        """D: the head size in effect (the original name for d/h)."""
        if self.head_size is None:
            return self.hidden_size // self.num_attention_heads
        return self.head_size

    def validate(self):
        """Raises ValueError naming the offending key and value."""
        if self.vocab_size is None:
            raise ValueError("BertConfig: `vocab_size` is required (got None).")
        for key in _POSITIVE_INT_KEYS:
            check_positive_int(key, getattr(self, key))
        if self.hidden_act not in activations.NAMES:
            raise ValueError(
                "BertConfig: `hidden_act` = %r is not supported; expected one of %s."
                % (self.hidden_act, ", ".join(activations.NAMES))
            )
        for key in _PROBABILITY_KEYS:
            value = getattr(self, key)
            if not is_real(value) or not 0.0 <= value < 1.0:
                raise ValueError(
                    "BertConfig: `%s` = %r must be a probability in [0, 1)." % (key, value)
                )
        if not is_real(self.initializer_range) or not self.initializer_range > 0:
            raise ValueError(
                "BertConfig: `initializer_range` = %r must be a positive number."
                % (self.initializer_range,)
            )
        if self.head_size is None:
            # The original model's rule: heads split the hidden size evenly.
            if self.hidden_size % self.num_attention_heads != 0:
                raise ValueError(
                    "The hidden size (%d) is not a multiple of the number of attention "
                    "heads (%d); set `head_size` to use heads of any size."
                    % (self.hidden_size, self.num_attention_heads)
                )
        else:
            check_positive_int("head_size", self.head_size)

    @classmethod
    def from_dict(cls, json_object, source="the config"):
        """Constructs a `BertConfig` from a dict of parameters.

        Unknown keys are kept as attributes (and written back by `to_dict`), as
        the original keeps them; each is named in a warning.

        Args:
          json_object: dict of config keys.
          source: where the keys come from, for messages (e.g. the file).

        Raises:
          ValueError: a key is missing or invalid, or an unknown key is within
            two edits of a known one (a typo the original would ignore).
        """
        if "vocab_size" not in json_object:
            raise ValueError("BertConfig: `vocab_size` is required but missing in %s." % source)
        known = cls(vocab_size=1).to_dict()
        unknown = sorted(key for key in json_object if key not in known)
        for key in unknown:
            close = [k for k in sorted(known) if edit_distance(key, k) <= TYPO_DISTANCE]
            if close:
                raise ValueError(
                    "BertConfig: unknown key `%s` in %s (did you mean %s?)." % (key, source, close[0]))
        if unknown:
            logging.warning(
                "BertConfig: %s has keys the model does not use: %s (kept, and written back).",
                source, ", ".join(unknown))
        return cls._from_values(dict(known, **json_object))

    @classmethod
    def _from_values(cls, values):
        config = cls.__new__(cls)
        for key, value in values.items():
            setattr(config, key, value)
        config.validate()
        return config

    @classmethod
    def from_json_file(cls, json_file):
        """Constructs a `BertConfig` from a json file of parameters."""
        try:
            with tf.io.gfile.GFile(json_file, "rb") as reader:
                text = decode_utf8(reader.read(), json_file, "BertConfig (--bert_config_file)")
        except tf.errors.NotFoundError:
            raise ValueError("BertConfig: config file not found: %s" % json_file) from None
        try:
            json_object = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(
                "BertConfig: %s is not valid JSON (line %d: %s)."
                % (json_file, error.lineno, error.msg)
            ) from None
        if not isinstance(json_object, dict):
            raise ValueError("BertConfig: %s must hold a JSON object." % json_file)
        return cls.from_dict(json_object, source=json_file)

    def replace(self, **overrides):
        """Returns a validated copy with some keys changed (e.g. head_size)."""
        unknown = sorted(set(overrides) - set(type(self)(vocab_size=1).to_dict()))
        if unknown:
            raise ValueError("BertConfig: cannot replace unknown keys %s." % ", ".join(unknown))
        values = self.to_dict()
        values.update(overrides)
        return type(self)._from_values(values)

    def to_dict(self):
        """Serializes this instance to a Python dictionary."""
        return copy.deepcopy(self.__dict__)

    def to_json_string(self):
        """Serializes this instance to a JSON string (sorted keys, indent 2)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file):
        with tf.io.gfile.GFile(json_file, "w") as writer:
            writer.write(self.to_json_string())

    def __eq__(self, other):
        return isinstance(other, BertConfig) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return "BertConfig(%s)" % ", ".join(
            "%s=%r" % item for item in sorted(self.to_dict().items())
        )
