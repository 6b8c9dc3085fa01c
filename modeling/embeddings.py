"""`BertEmbeddings`: word + position + token-type embeddings, LayerNorm, dropout.

The original's `embedding_lookup` + `embedding_postprocessor`, assembled from
Model Garden's embedding layers. Checkpoint names (BertModel.checkpoint_variables):
`bert/embeddings/{word_embeddings, token_type_embeddings,
position_embeddings, LayerNorm/gamma, LayerNorm/beta}`.
"""

import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers

from layers import layer_norm

# The original's layer_norm (tf.contrib.layers.layer_norm) epsilon.
LAYER_NORM_EPSILON = 1e-12


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class BertEmbeddings(tf_keras.layers.Layer):
    """Embeds token ids.

    Call arguments:
      input_ids: int Tensor [batch_size, seq_length].
      token_type_ids: int Tensor [batch_size, seq_length].
      training: bool, dropout is applied only when True.

    Returns:
      float Tensor [batch_size, seq_length, hidden_size].
    """

    def __init__(
        self,
        vocab_size,
        hidden_size,
        max_position_embeddings,
        type_vocab_size,
        dropout_rate,
        initializer,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._config = dict(
            vocab_size=vocab_size,
            hidden_size=hidden_size,
            max_position_embeddings=max_position_embeddings,
            type_vocab_size=type_vocab_size,
            dropout_rate=dropout_rate,
            initializer=tf_keras.initializers.serialize(initializer),
        )
        self.word_embeddings = layers.OnDeviceEmbedding(
            vocab_size=vocab_size,
            embedding_width=hidden_size,
            initializer=tf_utils.clone_initializer(initializer),
            name="word_embeddings",
        )
        # One-hot matmul, as the original does for the small type vocabulary.
        self.token_type_embeddings = layers.OnDeviceEmbedding(
            vocab_size=type_vocab_size,
            embedding_width=hidden_size,
            initializer=tf_utils.clone_initializer(initializer),
            use_one_hot=True,
            name="token_type_embeddings",
        )
        self.position_embeddings = layers.PositionEmbedding(
            max_length=max_position_embeddings,
            initializer=tf_utils.clone_initializer(initializer),
            name="position_embeddings",
        )
        # LayerNorm in float32 under mixed precision, as Model Garden does.
        self.layer_norm = layer_norm.LayerNormalization(
            axis=-1, epsilon=LAYER_NORM_EPSILON, dtype=tf.float32, name="LayerNorm",
            fewer_passes=self.compute_dtype != "float32",  # layers/layer_norm.py: mixed precision only
        )
        self.dropout = tf_keras.layers.Dropout(rate=dropout_rate)

    def call(self, input_ids, token_type_ids, training=None):
        word = self.word_embeddings(input_ids)
        embeddings = (
            word
            + self.position_embeddings(word)
            + self.token_type_embeddings(token_type_ids)
        )
        embeddings = self.layer_norm(embeddings)
        return self.dropout(embeddings, training=training)

    @property
    def embedding_table(self):
        """The word embedding variable [vocab_size, hidden_size]."""
        return self.word_embeddings.embeddings

    def get_config(self):
        config = super().get_config()
        config.update(self._config)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["initializer"] = tf_keras.initializers.deserialize(config["initializer"])
        return cls(**config)
