"""`BertSquadModel`: the encoder with run_squad's span output layer.

Checkpoint names: cls/squad/output_weights [2, H], cls/squad/output_bias [2].
"""

import tf_keras

from modeling.bert_model import BertModel, TaskModelVariables
from modeling.transposed_dense import TransposedDense

# The original fixes it, independently of the config.
SQUAD_INITIALIZER_RANGE = 0.02


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class BertSquadModel(TaskModelVariables, tf_keras.Model):
    """Answer-span scoring on every token.

    Call with the `BertModel` inputs. Returns a dict with the encoder outputs plus
      start_logits, end_logits: float Tensors [batch_size, seq_length].
    """

    def __init__(self, config, name="bert_squad", **kwargs):
        super().__init__(name=name, **kwargs)
        self.bert = BertModel(config)
        self.config = self.bert.config
        self.span = TransposedDense(2, SQUAD_INITIALIZER_RANGE, name="squad")

    def call(self, inputs, training=None):
        outputs = dict(self.bert(inputs, training=training))
        logits = self.span(outputs["sequence_output"])  # [batch, seq, 2]
        outputs["start_logits"] = logits[:, :, 0]
        outputs["end_logits"] = logits[:, :, 1]
        return outputs

    def head_variables(self):
        """{original checkpoint name: variable} for the span layer."""
        return {
            "cls/squad/output_weights": self.span.output_weights,
            "cls/squad/output_bias": self.span.output_bias,
        }

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(config["config"], name=config.get("name", "bert_squad"))
