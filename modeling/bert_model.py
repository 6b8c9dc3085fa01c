"""`BertModel`: the original BERT encoder, with an independent head size.

Embeddings, then `num_hidden_layers` of Model Garden's post-LayerNorm
`TransformerEncoderBlock`, then the tanh pooler on the first token. The
block's `key_dim` is the head size D: Q, K and V project H -> N*D, logits are
scaled by 1/sqrt(D), and the output projection maps N*D -> H. With
`head_size` unset D = H/N, which is the original model exactly.
"""

import collections
import functools

import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers

from checkpoints.original_names import OriginalVariable, block_variables
from layers.encoder_block import transformer_block
from layers.initializers import bert_initializer_of, create_initializer
from modeling.bert_config import BertConfig
from modeling.embeddings import LAYER_NORM_EPSILON, BertEmbeddings


def build_model(model, seq_length=2):
    """Creates every variable of a BERT model or task model by calling it once.

    Keras creates variables on the first call; checkpoints are loaded after.
    """
    ids = tf.zeros([1, seq_length], tf.int32)
    model(
        dict(
            input_ids=ids,
            input_mask=tf.ones_like(ids),
            token_type_ids=ids,
            masked_lm_positions=tf.zeros([1, 1], tf.int32),
        )
    )
    return model


def initializers(config):
    """name -> (kind, stddev) for a BertConfig: BERT's scheme (the freezer's `initializer_of`)."""
    return functools.partial(bert_initializer_of, initializer_range=config.initializer_range)


class TaskModelVariables:
    """The checkpoint code's two methods for a BERT task model: an encoder `bert` and heads (`head_variables()`)."""

    def checkpoint_variables(self):
        """{original name: OriginalVariable}: the encoder's, then the heads'."""
        names = self.bert.checkpoint_variables()
        for name, variable in self.head_variables().items():
            names[name] = OriginalVariable(variable, tuple(variable.shape))
        return names

    def initializer_of(self, name):
        """(kind, stddev) of an original name: BERT's scheme, the heads' fixed stddev included."""
        return self.bert.initializer_of(name)


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class BertModel(tf_keras.Model):
    """The BERT encoder.

    Call with a dict:
      input_ids: int Tensor [batch_size, seq_length].
      input_mask: (optional) int Tensor [batch_size, seq_length], 1 for real
        tokens and 0 for padding; padding keys get no attention. Default: ones.
      token_type_ids: (optional) int Tensor [batch_size, seq_length].
        Default: zeros.

    Returns a dict:
      sequence_output: float Tensor [batch_size, seq_length, hidden_size], the
        last layer's output.
      pooled_output: float Tensor [batch_size, hidden_size], tanh(dense) of the
        last layer's first token.
      all_encoder_layers: list of num_hidden_layers Tensors
        [batch_size, seq_length, hidden_size].
      embedding_output: float Tensor [batch_size, seq_length, hidden_size].
      embedding_table: the word embedding variable [vocab_size, hidden_size]
        (the MLM decoder is tied to it).
    """

    def __init__(self, config, name="bert", **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(config, dict):
            config = BertConfig.from_dict(config)
        config.validate()
        self.config = config.replace()  # A private copy.
        initializer = create_initializer(config.initializer_range)
        self.embeddings = BertEmbeddings(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            dropout_rate=config.hidden_dropout_prob,
            initializer=initializer,
            name="embeddings",
        )
        # Padding keys are excluded through the block's masked softmax. It
        # adds a large negative number where the original adds -10000: both
        # give exactly zero probability in float32.
        self.attention_mask = layers.SelfAttentionMask(name="attention_mask")
        self.encoder_layers = [
            transformer_block(config, initializer, norm_first=False, norm_epsilon=LAYER_NORM_EPSILON,
                              name="layer_%d" % i)
            for i in range(config.num_hidden_layers)
        ]
        self.pooler = tf_keras.layers.Dense(
            units=config.hidden_size,
            activation="tanh",
            kernel_initializer=tf_utils.clone_initializer(initializer),
            name="pooler",
        )

    def call(self, inputs, training=None):
        input_ids = inputs["input_ids"]
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = tf.ones_like(input_ids)
        token_type_ids = inputs.get("token_type_ids")
        if token_type_ids is None:
            token_type_ids = tf.zeros_like(input_ids)
        seq_length = input_ids.shape[1]
        if seq_length is not None and seq_length > self.config.max_position_embeddings:
            raise ValueError(
                "Sequence length %d is longer than max_position_embeddings %d of the "
                "BERT config." % (seq_length, self.config.max_position_embeddings)
            )

        embedding_output = self.embeddings(input_ids, token_type_ids, training=training)
        attention_mask = self.attention_mask(embedding_output, input_mask)
        all_encoder_layers = []
        x = embedding_output
        for block in self.encoder_layers:
            x = block([x, attention_mask], training=training)
            all_encoder_layers.append(x)
        pooled_output = self.pooler(x[:, 0, :])
        return dict(
            sequence_output=x,
            pooled_output=pooled_output,
            all_encoder_layers=all_encoder_layers,
            embedding_output=embedding_output,
            embedding_table=self.get_embedding_table(),  # the variable: no copy
        )

    def get_embedding_table(self):
        """The word embedding variable [vocab_size, hidden_size]."""
        return self.embeddings.embedding_table

    def checkpoint_variables(self):
        """{original name: OriginalVariable} of the built encoder (`bert/...`), in the original's order."""
        if not self.built:
            raise ValueError("Build the model first (modeling.build_model) to list its variables.")
        embeddings = self.embeddings
        names = collections.OrderedDict()

        def add(name, variable):
            names[name] = OriginalVariable(variable, tuple(variable.shape))

        add("bert/embeddings/word_embeddings", embeddings.word_embeddings.embeddings)
        add("bert/embeddings/token_type_embeddings", embeddings.token_type_embeddings.embeddings)
        add("bert/embeddings/position_embeddings", embeddings.position_embeddings.weights[0])
        add("bert/embeddings/LayerNorm/gamma", embeddings.layer_norm.gamma)
        add("bert/embeddings/LayerNorm/beta", embeddings.layer_norm.beta)
        for i, block in enumerate(self.encoder_layers):
            names.update(block_variables(block, "bert/encoder/layer_%d" % i))
        add("bert/pooler/dense/kernel", self.pooler.kernel)
        add("bert/pooler/dense/bias", self.pooler.bias)
        return names

    def initializer_of(self, name):
        """(kind, stddev) of an original name: BERT's scheme (layers/initializers.py)."""
        return bert_initializer_of(name, self.config.initializer_range)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(BertConfig.from_dict(config["config"]), name=config.get("name", "bert"))
