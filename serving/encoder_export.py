"""A BERT encoder as a SavedModel, the way TF Hub's BERT encoders come.

    serving_default(input_word_ids, input_mask, input_type_ids)   int32 [batch, seq]
        -> pooled_output [batch, hidden], sequence_output [batch, seq, hidden]
    preprocess(text) / preprocess_pair(text_a, text_b)           string [batch]
        -> input_word_ids, input_mask, input_type_ids   int32 [batch, max_seq_length]

Any sequence length up to max_position_embeddings goes through
serving_default; preprocess packs to the export's max_seq_length. The
SavedModel also carries `vocab_file` (an asset) and `do_lower_case`, as TF
Hub's encoders do.
"""

import tensorflow as tf

from serving import saved_model_writer

_IDS = tf.TensorSpec([None, None], tf.int32)
_STRINGS = tf.TensorSpec([None], tf.string)


class EncoderServer(tf.Module):
    """A `BertModel` (any config, head_size included) and its text preprocessing."""

    def __init__(self, bert, text_inputs, name="encoder"):
        super().__init__(name=name)
        self._bert = saved_model_writer.ModelReference(bert)
        self.variables_of_model = list(bert.variables)  # what the signatures read
        self.text_inputs = text_inputs
        self.vocab_file = tf.saved_model.Asset(text_inputs.vocab_file)
        self.do_lower_case = tf.Variable(text_inputs.do_lower_case, trainable=False, name="do_lower_case")
        self.serving_default = tf.function(self._encode, input_signature=[_IDS, _IDS, _IDS])
        self.preprocess = tf.function(self._preprocess, input_signature=[_STRINGS])
        self.preprocess_pair = tf.function(self._preprocess_pair, input_signature=[_STRINGS, _STRINGS])

    def signatures(self):
        return {name: getattr(self, name).get_concrete_function()
                for name in ("serving_default", "preprocess", "preprocess_pair")}

    def _encode(self, input_word_ids, input_mask, input_type_ids):
        outputs = self._bert.model(dict(input_ids=input_word_ids, input_mask=input_mask, token_type_ids=input_type_ids),
                            training=False)
        return dict(pooled_output=tf.cast(outputs["pooled_output"], tf.float32),
                    sequence_output=tf.cast(outputs["sequence_output"], tf.float32))

    def _preprocess(self, text):
        return self.text_inputs.encode(text)

    def _preprocess_pair(self, text_a, text_b):
        return self.text_inputs.encode(text_a, text_b)
