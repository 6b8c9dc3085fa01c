"""Reading a model family's JSON config file: unknown keys warned about, near-misses refused.

`LmConfig` and `NmtConfig` are frozen dataclasses that inherit `JsonConfig`
and name their flag (`FLAG`); `BertConfig` keeps the original's own reader.
"""

import dataclasses
import json

import tensorflow as tf
from absl import logging

from modeling.bert_config import TYPO_DISTANCE, edit_distance


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
        with tf.io.gfile.GFile(path) as f:
            text = f.read()
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError("%s: %s is not valid JSON (line %d: %s)." % (owner, path, error.lineno, error.msg)) from None
        if not isinstance(values, dict):
            raise ValueError("%s: %s must hold a JSON object." % (owner, path))
        return cls.from_dict(values, source=path)

    def replace(self, **overrides):
        """A validated copy with some keys changed."""
        return dataclasses.replace(self, **overrides)

    def to_dict(self):
        return dataclasses.asdict(self)

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
