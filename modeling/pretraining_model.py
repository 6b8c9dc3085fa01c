"""`BertPretrainingModel`: the encoder with the masked-LM and next-sentence heads.

Checkpoint names (the original `cls/` scope):
  cls/predictions/transform/dense/{kernel [H,H], bias [H]}
  cls/predictions/transform/LayerNorm/{gamma, beta} [H]
  cls/predictions/output_bias [V]   (decoder tied to bert/embeddings/word_embeddings)
  cls/seq_relationship/{output_weights [2,H], output_bias [2]}
"""

import tf_keras
from official.nlp.modeling import layers

from layers import activations
from layers.initializers import create_initializer
from modeling.bert_model import BertModel, build_model, TaskModelVariables
from modeling.transposed_dense import TransposedDense


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class BertPretrainingModel(TaskModelVariables, tf_keras.Model):
    """BERT with its two pre-training heads.

    Call with a dict: the `BertModel` inputs plus
      masked_lm_positions: int Tensor [batch_size, max_predictions_per_seq].

    Returns a dict with the encoder outputs plus
      masked_lm_logits: float Tensor [batch_size, max_predictions_per_seq, vocab_size].
      next_sentence_logits: float Tensor [batch_size, 2]; label 0 is "B is the
        actual next sentence", 1 is "B is random", as the original.
    """

    def __init__(self, config, name="bert_pretraining", **kwargs):
        super().__init__(name=name, **kwargs)
        # Built now: the MLM decoder needs the word-embedding variable.
        self.bert = build_model(BertModel(config))
        self.config = self.bert.config
        # Model Garden's MaskedLM is the original's transform + tied decoder:
        # dense(hidden_act) -> LayerNorm(1e-12) -> x . word_embeddings^T + bias.
        self.masked_lm = layers.MaskedLM(
            embedding_table=self.bert.get_embedding_table(),
            activation=activations.get_activation(self.config.hidden_act),
            initializer=create_initializer(self.config.initializer_range),
            output="logits",
            name="predictions",
        )
        self.next_sentence = TransposedDense(
            2, self.config.initializer_range, name="seq_relationship"
        )

    def call(self, inputs, training=None):
        outputs = dict(self.bert(inputs, training=training))
        outputs["masked_lm_logits"] = self.masked_lm(
            outputs["sequence_output"], masked_positions=inputs["masked_lm_positions"]
        )
        outputs["next_sentence_logits"] = self.next_sentence(outputs["pooled_output"])
        return outputs

    def head_variables(self):
        """{original checkpoint name: variable} for the `cls/` heads."""
        mlm = self.masked_lm
        return {
            "cls/predictions/transform/dense/kernel": mlm.dense.kernel,
            "cls/predictions/transform/dense/bias": mlm.dense.bias,
            "cls/predictions/transform/LayerNorm/gamma": mlm.layer_norm.gamma,
            "cls/predictions/transform/LayerNorm/beta": mlm.layer_norm.beta,
            "cls/predictions/output_bias": mlm.bias,
            "cls/seq_relationship/output_weights": self.next_sentence.output_weights,
            "cls/seq_relationship/output_bias": self.next_sentence.output_bias,
        }

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(config["config"], name=config.get("name", "bert_pretraining"))
