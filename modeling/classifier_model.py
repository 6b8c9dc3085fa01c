"""`BertClassifierModel`: the encoder with run_classifier's output layer.

Checkpoint names (root scope, as the original's `create_model`):
  output_weights [num_labels, H], output_bias [num_labels]
"""

import tf_keras

from modeling.bert_model import BertModel, TaskModelVariables
from modeling.transposed_dense import TransposedDense

# The original fixes both, independently of the config.
CLASSIFIER_DROPOUT = 0.1
CLASSIFIER_INITIALIZER_RANGE = 0.02


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class BertClassifierModel(TaskModelVariables, tf_keras.Model):
    """Sentence(-pair) classification or regression on the pooled output.

    Call with the `BertModel` inputs. Returns a dict with the encoder outputs
    plus logits: float Tensor [batch_size, num_labels] (num_labels=1 for
    regression).
    """

    def __init__(self, config, num_labels, name="bert_classifier", **kwargs):
        super().__init__(name=name, **kwargs)
        self.bert = BertModel(config)
        self.config = self.bert.config
        self.num_labels = num_labels
        self.dropout = tf_keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = TransposedDense(
            num_labels, CLASSIFIER_INITIALIZER_RANGE, name="classifier"
        )

    def call(self, inputs, training=None):
        outputs = dict(self.bert(inputs, training=training))
        pooled = self.dropout(outputs["pooled_output"], training=training)
        outputs["logits"] = self.classifier(pooled)
        return outputs

    def head_variables(self):
        """{original checkpoint name: variable} for the output layer."""
        return {
            "output_weights": self.classifier.output_weights,
            "output_bias": self.classifier.output_bias,
        }

    def get_config(self):
        return {"config": self.config.to_dict(), "num_labels": self.num_labels, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(config["config"], config["num_labels"], name=config.get("name", "bert_classifier"))
