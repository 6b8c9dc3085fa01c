"""Reading a model family's JSON config file: unknown keys warned about, near-misses refused.

`LmConfig` and `NmtConfig` are frozen dataclasses that inherit `JsonConfig`
and name their flag (`FLAG`); `BertConfig` keeps the original's own reader
and shares the checks here (typo distance, positive integers, real numbers).
"""

import dataclasses
import json
import math

import tensorflow as tf
from absl import logging

from layers import activations

# An unknown key this close to a known one is taken for a typo ("head_sise"):
# silently ignoring it would train another model than the one asked for.
TYPO_DISTANCE = 2
_PROBABILITY_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob")


def decode_utf8(data, path, who):
    """The text of a config file; ValueError naming `who` (the owner and its flag), the file and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError("%s: %s is not UTF-8 text (byte %d); a config file is JSON in UTF-8."
                         % (who, path, error.start + 1)) from None


def is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def edit_distance(a, b):
    """Levenshtein distance: insertions, deletions and substitutions."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def check_positive_int(key, value, owner="BertConfig"):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("%s: `%s` = %r must be a positive integer." % (owner, key, value))


class JsonConfig:
    """Mixin of a frozen config dataclass: from_dict / from_json_file / to_dict / replace."""

    FLAG = "--config_file"  # the flag that names the file, for error messages

    @classmethod
    def from_dict(cls, values, source="the config"):
        """A config from a dict; unknown keys warned about, near-misses refused.

        Raises:
          ValueError: naming the key (and `source`) for an invalid or misspelt key.
        """
        owner = cls.__name__
        known = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(key for key in values if key not in known)
        for key in unknown:
            close = [k for k in known if edit_distance(key, k) <= TYPO_DISTANCE]
            if close:
                raise ValueError("%s: unknown key `%s` in %s (did you mean %s?)." % (owner, key, source, close[0]))
        if unknown:
            logging.warning("%s: %s has keys the model does not use: %s (ignored).",
                            owner, source, ", ".join(unknown))
        return cls(**{key: value for key, value in values.items() if key in known})

    @classmethod
    def from_json_file(cls, path):
        """Reads the config file named by `FLAG`.

        Raises:
          ValueError: the file is missing, not JSON, not an object, or has a bad key.
        """
        owner = cls.__name__
        if not tf.io.gfile.exists(path):
            raise ValueError("%s=%s does not exist." % (cls.FLAG, path))
        with tf.io.gfile.GFile(path, "rb") as f:
            text = decode_utf8(f.read(), path, "%s (%s)" % (owner, cls.FLAG))
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError("%s: %s is not valid JSON (line %d: %s)." % (owner, path, error.lineno, error.msg)) from None
        if not isinstance(values, dict):
            raise ValueError("%s: %s must hold a JSON object." % (owner, path))
        return cls.from_dict(values, source=path)

    def check_common_keys(self, positive_int_keys):
        """The checks every family's config shares: vocab_size (may be unset), the positive integers,
        hidden_act and the dropout probabilities. Raises ValueError naming the key and value."""
        owner = type(self).__name__
        if self.vocab_size is not None:
            check_positive_int("vocab_size", self.vocab_size, owner)
        for key in positive_int_keys:
            check_positive_int(key, getattr(self, key), owner)
        if self.hidden_act not in activations.NAMES:
            raise ValueError("%s: `hidden_act` = %r is not supported; expected one of %s."
                             % (owner, self.hidden_act, ", ".join(activations.NAMES)))
        for key in _PROBABILITY_KEYS:
            value = getattr(self, key)
            if not is_real(value) or not 0.0 <= value < 1.0:
                raise ValueError("%s: `%s` = %r must be a probability in [0, 1)." % (owner, key, value))

    def check_initializer_range(self):
        owner = type(self).__name__
        if not is_real(self.initializer_range) or not self.initializer_range > 0:
            raise ValueError("%s: `initializer_range` = %r must be a positive number."
                             % (owner, self.initializer_range))

    def check_head_size(self):
        """head_size positive, or (null) hidden_size a multiple of num_attention_heads."""
        owner = type(self).__name__
        if self.head_size is None:
            if self.hidden_size % self.num_attention_heads:
                raise ValueError(
                    "%s: hidden_size %d is not a multiple of num_attention_heads %d; set `head_size` "
                    "to use heads of any size." % (owner, self.hidden_size, self.num_attention_heads))
        else:
            check_positive_int("head_size", self.head_size, owner)

    @property
    def attention_head_size(self):
        """d_p in effect: head_size, or d / h when it is null."""
        return self.head_size or self.hidden_size // self.num_attention_heads

    def replace(self, **overrides):
        """A validated copy with some keys changed."""
        return dataclasses.replace(self, **overrides)

    def to_dict(self):
        return dataclasses.asdict(self)

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
