"""`TransformerLm`: a decoder-only Transformer language model with an independent head size.

The LM1B model of Bhojanapalli et al. (2020) (a tensor2tensor language
model): learned token and position embeddings, `num_hidden_layers` of Model
Garden's `TransformerEncoderBlock` in pre-LayerNorm form (tensor2tensor's
default) under a causal mask (their attention `causal`, which skips the scores
of later keys block by block: layers/attention.py), a final LayerNorm, and
an output layer tied to the input embeddings (its own bias). The block's
`key_dim` is the head size d_p: Q, K and V project d -> h*d_p, logits are
scaled by 1/sqrt(d_p), the output projection maps h*d_p -> d.

Checkpoint names (`checkpoint_variables`), in BERT's style so the same tools
read them:
  lm/embeddings/word_embeddings       [vocab_size, d]
  lm/embeddings/position_embeddings   [max_position_embeddings, d]
  lm/decoder/layer_<i>/...            BERT's per-layer names (checkpoints/original_names.py);
                                      the LayerNorms here come before their sub-layer
  lm/decoder/LayerNorm/{gamma,beta}   the final LayerNorm
  lm/output/bias                      [vocab_size]
  lm/output/kernel                    [d, vocab_size], only with tie_embeddings false
"""

import collections
import functools

import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers

from checkpoints.original_names import OriginalVariable, block_variables
from layers.encoder_block import transformer_block
from layers.initializers import TOOLKIT, bert_initializer_of, create_initializer, toolkit_initializer_of, toolkit_keras_initializers
from lm.config import LmConfig

# tensor2tensor's layer_norm epsilon.
LAYER_NORM_EPSILON = 1e-6


def causal_attention_mask(input_mask):
    """[batch, T, T] with 1 where query i may attend key j: j <= i and key j is not padding.

    Args:
      input_mask: int Tensor [batch, T], 1 for real tokens.
    """
    length = tf.shape(input_mask)[1]
    causal = tf.linalg.band_part(tf.ones([length, length], input_mask.dtype), -1, 0)
    return causal[tf.newaxis, :, :] * input_mask[:, tf.newaxis, :]


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class TransformerLm(tf_keras.Model):
    """The language model.

    Call with a dict:
      input_ids: int Tensor [batch_size, seq_length].
      input_mask: (optional) int Tensor [batch_size, seq_length], 1 for real
        tokens, 0 for padding (at the end). Default: ones.

    Returns a dict:
      logits: float32 Tensor [batch_size, seq_length, vocab_size]; position t
        predicts token t+1.
      sequence_output: Tensor [batch_size, seq_length, hidden_size], after the
        final LayerNorm; `output_logits(sequence_output)` gives the logits, at
        any positions.
    """

    def __init__(self, config, name="lm", **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(config, dict):
            config = LmConfig.from_dict(config)
        if config.vocab_size is None:
            raise ValueError("LmConfig: `vocab_size` is needed to build the model.")
        self.config = config
        if config.initializer == TOOLKIT:
            embedding_init, initializer = toolkit_keras_initializers(config.hidden_size)
        else:
            embedding_init = initializer = create_initializer(config.initializer_range)
        self.word_embeddings = layers.OnDeviceEmbedding(
            vocab_size=config.vocab_size, embedding_width=config.hidden_size,
            initializer=tf_utils.clone_initializer(embedding_init), name="word_embeddings")
        self.position_embeddings = layers.PositionEmbedding(
            max_length=config.max_position_embeddings,
            initializer=tf_utils.clone_initializer(embedding_init), name="position_embeddings")
        self.embedding_dropout = tf_keras.layers.Dropout(config.hidden_dropout_prob)
        self.decoder_layers = [
            transformer_block(config, initializer, norm_first=True, norm_epsilon=LAYER_NORM_EPSILON,
                              name="layer_%d" % i, causal_attention=True)
            for i in range(config.num_hidden_layers)
        ]
        self.final_layer_norm = tf_keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, dtype=tf.float32, name="final_layer_norm")
        if config.tie_embeddings:
            self.output_kernel = None
        else:
            self.output_kernel = self.add_weight(
                "output_kernel", shape=[config.hidden_size, config.vocab_size],
                initializer=tf_utils.clone_initializer(initializer))
        self.output_bias = self.add_weight(
            "output_bias", shape=[config.vocab_size], initializer="zeros")

    def call(self, inputs, training=None):
        input_ids = inputs["input_ids"]
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = tf.ones_like(input_ids)
        seq_length = input_ids.shape[1]
        if seq_length is not None and seq_length > self.config.max_position_embeddings:
            raise ValueError("Sequence length %d is longer than max_position_embeddings %d of the "
                             "LM config." % (seq_length, self.config.max_position_embeddings))
        word = self.word_embeddings(input_ids)
        x = self.embedding_dropout(word + self.position_embeddings(word), training=training)
        mask = causal_attention_mask(tf.cast(input_mask, tf.int32))
        for block in self.decoder_layers:
            x = block([x, mask], training=training)
        x = self.final_layer_norm(x)
        # A loss that reads only sequence_output leaves the full logits out of its graph (pruned).
        return dict(logits=self.output_logits(x), sequence_output=x)

    def output_logits(self, x):
        """float32 [..., vocab_size] from final outputs [..., d] (the output layer, tied or not)."""
        # One 2-D product over all positions: a [batch, T, d] x [d, V] product broadcasts the
        # table over the batch, and its gradient materialised [batch, V, d] (262 MB at batch 8)
        # before summing it.
        flat = tf.reshape(tf.cast(x, self.compute_dtype), [-1, self.config.hidden_size])
        kernel = self.output_kernel
        if kernel is None:
            logits = tf.matmul(flat, tf.cast(self.word_embeddings.embeddings, self.compute_dtype), transpose_b=True)
        else:
            logits = tf.matmul(flat, tf.cast(kernel, self.compute_dtype))
        logits = tf.reshape(logits + tf.cast(self.output_bias, self.compute_dtype),
                            tf.concat([tf.shape(x)[:-1], [self.config.vocab_size]], 0))
        # The loss is computed in float32, as Model Garden's heads do under mixed precision.
        return tf.cast(logits, tf.float32)

    def checkpoint_variables(self):
        """{checkpoint name: OriginalVariable}, in model order (see the module docstring)."""
        if not self.built:
            raise ValueError("Build the model first (transformer_lm.build_lm) to list its variables.")
        names = collections.OrderedDict()

        def add(name, variable):
            names[name] = OriginalVariable(variable, tuple(variable.shape))

        add("lm/embeddings/word_embeddings", self.word_embeddings.embeddings)
        add("lm/embeddings/position_embeddings", self.position_embeddings.weights[0])
        for i, block in enumerate(self.decoder_layers):
            names.update(block_variables(block, "lm/decoder/layer_%d" % i))
        add("lm/decoder/LayerNorm/gamma", self.final_layer_norm.gamma)
        add("lm/decoder/LayerNorm/beta", self.final_layer_norm.beta)
        if self.output_kernel is not None:
            add("lm/output/kernel", self.output_kernel)
        add("lm/output/bias", self.output_bias)
        return names

    def initializer_of(self, name):
        """(kind, scale) of a checkpoint name under the config's `initializer` (LayerNorm ones/zeros, biases zeros)."""
        return initializers(self.config)(name)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(LmConfig.from_dict(config["config"]), name=config.get("name", "lm"))


def build_lm(model, seq_length=2):
    """Creates every variable of a TransformerLm by calling it once; returns it."""
    model(dict(input_ids=tf.zeros([1, seq_length], tf.int32)))
    return model


def initializers(config):
    """name -> (kind, scale) for an LmConfig (the freezer's `initializer_of`)."""
    if config.initializer != TOOLKIT:
        return functools.partial(bert_initializer_of, initializer_range=config.initializer_range)
    return lambda name: toolkit_initializer_of(name, original_shape(config, name))


def original_shape(config, name):
    """The original shape of a checkpoint name, from the config alone (no model built)."""
    d, inner = config.hidden_size, config.intermediate_size
    projection = config.num_attention_heads * config.attention_head_size
    if name.endswith(("word_embeddings", "output/kernel")):
        return (config.vocab_size, d) if name.endswith("embeddings") else (d, config.vocab_size)
    if name.endswith("position_embeddings"):
        return (config.max_position_embeddings, d)
    for suffix, shape in (("query/kernel", (d, projection)), ("key/kernel", (d, projection)),
                          ("value/kernel", (d, projection)), ("attention/output/dense/kernel", (projection, d)),
                          ("intermediate/dense/kernel", (d, inner)), ("output/dense/kernel", (inner, d))):
        if name.endswith(suffix):
            return shape
    return (d,)  # LayerNorm parameters and biases: their scale does not depend on it.
