"""A fine-tuned classifier as a SavedModel that takes raw text.

    serving_default(text_a[, text_b]) -> probabilities [batch, labels],
                                         label [batch] (the label's name),
                                         logits [batch, labels]
    (regression tasks, STS-B: prediction [batch], logits [batch, 1])

text_b is part of the signature for the tasks whose examples have it; an
empty text_b is packed as a single text, as run_classifier.py does.
"""

import tensorflow as tf

from serving import saved_model_writer

_STRINGS = tf.TensorSpec([None], tf.string)


class ClassifierServer(tf.Module):
    """Tokenization, packing and the classifier in one graph."""

    def __init__(self, model, text_inputs, label_list, is_regression, takes_text_pair, name="classifier"):
        """
        Args:
          model: a built `BertClassifierModel`.
          text_inputs: `serving.text_inputs.TextInputs`.
          label_list: list of str, the task's labels in run_classifier.py's order.
          is_regression: bool.
          takes_text_pair: bool, whether the signature has text_b.
        """
        super().__init__(name=name)
        self._model = saved_model_writer.ModelReference(model)
        self.variables_of_model = list(model.variables)  # what the signatures read
        self.text_inputs = text_inputs
        self.label_list = list(label_list)
        self.is_regression = is_regression
        self.takes_text_pair = takes_text_pair
        self.vocab_file = tf.saved_model.Asset(text_inputs.vocab_file)
        if takes_text_pair:
            self.serving_default = tf.function(self._classify_pair, input_signature=[_STRINGS, _STRINGS])
        else:
            self.serving_default = tf.function(self._classify_single, input_signature=[_STRINGS])

    def signatures(self):
        return {"serving_default": self.serving_default.get_concrete_function()}

    def _classify_single(self, text_a):
        return self._classify(self.text_inputs.encode(text_a))

    def _classify_pair(self, text_a, text_b):
        return self._classify(self.text_inputs.encode(text_a, text_b))

    def _classify(self, inputs):
        outputs = self._model.model(dict(input_ids=inputs["input_word_ids"], input_mask=inputs["input_mask"],
                                  token_type_ids=inputs["input_type_ids"]), training=False)
        logits = tf.cast(outputs["logits"], tf.float32)
        if self.is_regression:
            return dict(prediction=logits[:, 0], logits=logits)
        label_index = tf.argmax(logits, axis=-1)
        return dict(probabilities=tf.nn.softmax(logits, axis=-1),
                    label=tf.gather(tf.constant(self.label_list), label_index), logits=logits)
