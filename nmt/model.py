"""`TransformerNmt`: the encoder-decoder Transformer of Bogoychev's translation study, any head size.

Source and target share one sub-word vocabulary and one embedding table,
which is also the output layer (transposed, plus an output bias), as in the
presets of the study's toolkit. Embeddings are scaled by sqrt(d) and given
sinusoidal positions. The encoder is `num_encoder_layers` of Model Garden's
`TransformerEncoderBlock`; the decoder `num_decoder_layers` of our
`DecoderBlock` (nmt/decoder_block.py); both with `key_dim` = d_p, so
Q, K, V project d -> h*d_p and the output projection h*d_p -> d in
self-attention, cross-attention and the decode cache alike.

Checkpoint names (`checkpoint_variables`), in BERT's style:
  nmt/embeddings/word_embeddings            [vocab_size, d], shared
  nmt/encoder/layer_<i>/...                 BERT's per-layer names
                                            (checkpoints/original_names.py)
  nmt/decoder/layer_<i>/attention/self/{query,key,value}/{kernel,bias}
  nmt/decoder/layer_<i>/attention/output/{dense/*,LayerNorm/*}
  nmt/decoder/layer_<i>/attention/cross/{query,key,value}/{kernel,bias}
  nmt/decoder/layer_<i>/attention/cross_output/{dense/*,LayerNorm/*}
  nmt/decoder/layer_<i>/{intermediate,output}/...   as BERT's
  nmt/{encoder,decoder}/LayerNorm/{gamma,beta}      only with norm_first
  nmt/output/bias                           [vocab_size]
Attention kernels are stored as BERT stores them ([d, h*d_p], [h*d_p, d]).
Initial values follow the config's `initializer` (the toolkit's scheme by default, nmt/config.py).
"""

import collections
import math

import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.modeling import layers
from official.nlp.modeling.ops import beam_search

from checkpoints.original_names import OriginalVariable, block_variables, original_attention_shape
from layers import activations
from layers.encoder_block import transformer_block
from layers.initializers import TOOLKIT, toolkit_initializer_of, toolkit_keras_initializers
from nmt.config import NmtConfig
from nmt.decoder_block import DecoderBlock

LAYER_NORM_EPSILON = 1e-6
PAD_ID = 0


def padding_mask(ids):
    """[batch, length] int32, 1 for real tokens (id != 0)."""
    return tf.cast(tf.not_equal(ids, PAD_ID), tf.int32)


def cross_attention_mask(source_mask, target_length):
    """[batch, target_length, S]: every target position sees the real source tokens."""
    return tf.repeat(source_mask[:, tf.newaxis, :], target_length, axis=1)


def causal_mask(batch_size, length):
    """[batch, length, length]: position i sees positions j <= i."""
    causal = tf.linalg.band_part(tf.ones([length, length], tf.int32), -1, 0)
    return tf.tile(causal[tf.newaxis], [batch_size, 1, 1])


@tf_keras.utils.register_keras_serializable(package="BertTf2")
class TransformerNmt(tf_keras.Model):
    """The translation model.

    Call with a dict:
      source_ids:       int [batch, S], sub-word ids + eos, 0 = padding.
      target_input_ids: int [batch, T], bos + sub-word ids (teacher forcing).
    Returns {"logits": float32 [batch, T, vocab_size], "sequence_output":
    [batch, T, d]}: position t predicts target token t (the sentence's ids +
    eos); `output_logits(sequence_output)` gives the logits, at any positions.

    `translate(source_ids, ...)` decodes with beam search (see there).
    """

    def __init__(self, config, name="nmt", **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(config, dict):
            config = NmtConfig.from_dict(config)
        if config.vocab_size is None:
            raise ValueError("NmtConfig: `vocab_size` is needed to build the model.")
        self.config = config
        d = config.hidden_size
        if config.initializer == TOOLKIT:
            embedding_init, kernel_init = toolkit_keras_initializers(d)
        elif config.initializer == "glorot":
            embedding_init = tf_keras.initializers.RandomNormal(stddev=d ** -0.5)
            kernel_init = tf_keras.initializers.GlorotNormal()
        else:
            embedding_init = kernel_init = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        self.word_embeddings = layers.OnDeviceEmbedding(
            vocab_size=config.vocab_size, embedding_width=d, initializer=embedding_init,
            scale_factor=d ** 0.5, name="word_embeddings")
        self.positions = layers.RelativePositionEmbedding(hidden_size=d, name="positions")
        self.encoder_dropout = tf_keras.layers.Dropout(config.hidden_dropout_prob)
        self.decoder_dropout = tf_keras.layers.Dropout(config.hidden_dropout_prob)
        self.encoder_layers = [
            transformer_block(config, kernel_init, norm_first=config.norm_first,
                              norm_epsilon=LAYER_NORM_EPSILON, name="encoder_layer_%d" % i)
            for i in range(config.num_encoder_layers)
        ]
        self.decoder_layers = [
            DecoderBlock(config.num_attention_heads, config.attention_head_size, config.intermediate_size,
                         activation=activations.get_activation(config.hidden_act),
                         dropout=config.hidden_dropout_prob, attention_dropout=config.attention_probs_dropout_prob,
                         norm_first=config.norm_first, norm_epsilon=LAYER_NORM_EPSILON,
                         kernel_initializer=tf_utils.clone_initializer(kernel_init), name="decoder_layer_%d" % i)
            for i in range(config.num_decoder_layers)
        ]
        if config.norm_first:
            # Pre-norm leaves each stack's output unnormalised: one LayerNorm at the end of each.
            self.encoder_norm = tf_keras.layers.LayerNormalization(
                epsilon=LAYER_NORM_EPSILON, dtype=tf.float32, name="encoder_norm")
            self.decoder_norm = tf_keras.layers.LayerNormalization(
                epsilon=LAYER_NORM_EPSILON, dtype=tf.float32, name="decoder_norm")
        self.output_bias = self.add_weight("output_bias", shape=[config.vocab_size], initializer="zeros")

    def _embed(self, ids, positions):
        """Scaled embeddings of ids [batch, L] plus the sinusoids of `positions` [L, d]."""
        x = self.word_embeddings(ids)
        return x + tf.cast(positions, x.dtype)

    def encode(self, source_ids, training=None):
        """(memory [batch, S, d], source mask [batch, S])."""
        source_mask = padding_mask(source_ids)
        x = self._embed(source_ids, self.positions(None, length=tf.shape(source_ids)[1]))
        x = self.encoder_dropout(x * tf.cast(source_mask, x.dtype)[..., tf.newaxis], training=training)
        self_mask = cross_attention_mask(source_mask, tf.shape(source_ids)[1])
        for block in self.encoder_layers:
            x = block([x, self_mask], training=training)
        if self.config.norm_first:
            x = self.encoder_norm(x)
        return x, source_mask

    def output_logits(self, x):
        """float32 [..., vocab_size] from decoder outputs [..., d] (the tied output layer)."""
        kernel = tf.cast(self.word_embeddings.embeddings, self.compute_dtype)
        x = tf.cast(x, self.compute_dtype)
        # One 2-D product: an einsum "...d,vd->...v" ran per position and its gradient
        # materialised [batch, T, vocab, d] (out of memory at transformer-base's size).
        logits = tf.matmul(tf.reshape(x, [-1, self.config.hidden_size]), kernel, transpose_b=True)
        logits = tf.reshape(logits + tf.cast(self.output_bias, self.compute_dtype),
                            tf.concat([tf.shape(x)[:-1], [self.config.vocab_size]], 0))
        # The loss is computed in float32, as Model Garden's heads do under mixed precision.
        return tf.cast(logits, tf.float32)

    def decode(self, target_input_ids, memory, source_mask, training=None):
        """Teacher-forced decoder: its output [batch, T, d], before the output layer."""
        batch, length = tf.shape(target_input_ids)[0], tf.shape(target_input_ids)[1]
        x = self._embed(target_input_ids, self.positions(None, length=length))
        x = self.decoder_dropout(x, training=training)
        cross_mask = cross_attention_mask(source_mask, length)
        self_mask = causal_mask(batch, length)
        for block in self.decoder_layers:
            x, _ = block([x, memory, cross_mask, self_mask], training=training)
        if self.config.norm_first:
            x = self.decoder_norm(x)
        return x

    def call(self, inputs, training=None):
        memory, source_mask = self.encode(inputs["source_ids"], training=training)
        x = self.decode(inputs["target_input_ids"], memory, source_mask, training=training)
        # A loss that reads only sequence_output leaves the full logits out of its graph (pruned).
        return dict(logits=self.output_logits(x), sequence_output=x)

    def initial_cache(self, memory, source_mask):
        """The decode state: the encoder output and, per layer, empty [batch, 0, h, d_p] keys and values."""
        batch = tf.shape(memory)[0]
        empty = tf.zeros([batch, 0, self.config.num_attention_heads, self.config.attention_head_size],
                         self.compute_dtype)
        cache = {"layer_%d" % i: {"key": empty, "value": empty} for i in range(len(self.decoder_layers))}
        # Beam search wants every float in the cache in one dtype (it tiles them per beam).
        cache.update(memory=tf.cast(memory, self.compute_dtype), source_mask=tf.cast(source_mask, self.compute_dtype))
        return cache

    def decode_step(self, last_ids, step, cache):
        """One incremental step: logits float32 [batch, vocab] of position `step`, and the cache.

        Args:
          last_ids: int [batch], the tokens at position `step` (bos at step 0).
          step: int scalar, the position being read.
          cache: from `initial_cache` or the previous step (updated in place).
        """
        positions = self.positions(None, length=step + 1)[step:step + 1]
        x = self._embed(last_ids[:, tf.newaxis], positions)
        batch = tf.shape(x)[0]
        cross_mask = tf.cast(cache["source_mask"][:, tf.newaxis, :], tf.int32)
        self_mask = tf.ones([batch, 1, step + 1], tf.int32)
        for i, block in enumerate(self.decoder_layers):
            x, cache["layer_%d" % i] = block([x, cache["memory"], cross_mask, self_mask],
                                             cache=cache["layer_%d" % i], training=False)
        if self.config.norm_first:
            x = self.decoder_norm(x)
        return self.output_logits(x[:, 0]), cache

    def translate(self, source_ids, bos_id, eos_id, beam_size=4, alpha=0.6, max_decode_length=256):
        """Beam search (Model Garden's `sequence_beam_search`) over the incremental decoder.

        Args:
          source_ids: int [batch, S].
          alpha: the length penalty's exponent (GNMT's ((5 + length) / 6) ** alpha).
          max_decode_length: most tokens generated per sentence (eos included).

        Returns:
          (ids int32 [batch, max_decode_length + 1] of the best beam, bos first,
          then the tokens up to eos and padding; scores float32 [batch]).
        """
        memory, source_mask = self.encode(source_ids, training=False)
        batch = tf.shape(source_ids)[0]

        def symbols_to_logits(ids, step, cache):
            logits, cache = self.decode_step(ids[:, -1], step, cache)
            return tf.cast(logits, self.compute_dtype), cache  # the dtype the search runs in

        ids, scores = beam_search.sequence_beam_search(
            symbols_to_logits_fn=symbols_to_logits,
            initial_ids=tf.fill([batch], tf.constant(bos_id, tf.int32)),
            initial_cache=self.initial_cache(memory, source_mask),
            vocab_size=self.config.vocab_size, beam_size=beam_size, alpha=alpha,
            max_decode_length=max_decode_length, eos_id=eos_id, padded_decode=False,
            dtype=self.compute_dtype)
        # The search stops early once every beam has ended (ids then have fewer columns);
        # pad with 0, the search's own padding after eos, to the documented width.
        ids = ids[:, 0]
        ids = tf.pad(ids, [[0, 0], [0, max_decode_length + 1 - tf.shape(ids)[1]]])
        return ids, scores[:, 0]

    def checkpoint_variables(self):
        """{checkpoint name: OriginalVariable}, in model order (see the module docstring)."""
        if not self.built:
            raise ValueError("Build the model first (transformer_nmt.build_nmt) to list its variables.")
        names = collections.OrderedDict()

        def add(name, variable, shape=None):
            names[name] = OriginalVariable(variable, shape or tuple(variable.shape))

        add("nmt/embeddings/word_embeddings", self.word_embeddings.embeddings)
        for i, block in enumerate(self.encoder_layers):
            names.update(block_variables(block, "nmt/encoder/layer_%d" % i))
        if self.config.norm_first:
            add("nmt/encoder/LayerNorm/gamma", self.encoder_norm.gamma)
            add("nmt/encoder/LayerNorm/beta", self.encoder_norm.beta)
        for i, block in enumerate(self.decoder_layers):
            prefix = "nmt/decoder/layer_%d/" % i
            for attention, norm, projection, output in (
                    (block.self_attention, block.self_attention_layer_norm, "attention/self", "attention/output"),
                    (block.cross_attention, block.cross_attention_layer_norm, "attention/cross",
                     "attention/cross_output")):
                for part, dense in (("query", attention._query_dense), ("key", attention._key_dense),  # pylint: disable=protected-access
                                    ("value", attention._value_dense)):  # pylint: disable=protected-access
                    add(prefix + "%s/%s/kernel" % (projection, part), dense.kernel,
                        original_attention_shape("query/kernel", dense.kernel.shape))
                    add(prefix + "%s/%s/bias" % (projection, part), dense.bias,
                        original_attention_shape("query/bias", dense.bias.shape))
                dense = attention._output_dense  # pylint: disable=protected-access
                add(prefix + output + "/dense/kernel", dense.kernel,
                    original_attention_shape("attention_output/kernel", dense.kernel.shape))
                add(prefix + output + "/dense/bias", dense.bias)
                add(prefix + output + "/LayerNorm/gamma", norm.gamma)
                add(prefix + output + "/LayerNorm/beta", norm.beta)
            add(prefix + "intermediate/dense/kernel", block.intermediate.kernel)
            add(prefix + "intermediate/dense/bias", block.intermediate.bias)
            add(prefix + "output/dense/kernel", block.output_dense.kernel)
            add(prefix + "output/dense/bias", block.output_dense.bias)
            add(prefix + "output/LayerNorm/gamma", block.output_layer_norm.gamma)
            add(prefix + "output/LayerNorm/beta", block.output_layer_norm.beta)
        if self.config.norm_first:
            add("nmt/decoder/LayerNorm/gamma", self.decoder_norm.gamma)
            add("nmt/decoder/LayerNorm/beta", self.decoder_norm.beta)
        add("nmt/output/bias", self.output_bias)
        return names

    def initializer_of(self, name):
        """(kind, stddev) of a checkpoint name, for seeded initialisation and frozen regeneration."""
        return initializers(self.config, {n: v.shape for n, v in self.checkpoint_variables().items()})(name)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(NmtConfig.from_dict(config["config"]), name=config.get("name", "nmt"))


def build_nmt(model, length=2):
    """Creates every variable of a TransformerNmt by calling it once; returns it."""
    ids = tf.ones([1, length], tf.int32)
    model(dict(source_ids=ids, target_input_ids=ids))
    return model


def initializers(config, shapes=None):
    """name -> (kind, scale) for an NmtConfig (the freezer's `initializer_of`).

    LayerNorm gammas ones, betas and biases zeros. initializer "marian": the
    toolkit's uniform scheme (layers/initializers.py), fans from the original
    [in, out] shapes. "bert": truncated normal of initializer_range. "glorot": the embedding table normal(0, d^-1/2)
    (drawn truncated at two stddevs, as every seeded value is), weight matrices
    Glorot normal, stddev sqrt(2 / (fan_in + fan_out)) / 0.8796 as Keras'
    GlorotNormal draws it truncated; fans from the original [in, out] shape,
    which `shapes` ({name: shape}) gives, else the config.
    """
    def initializer_of(name):
        if name.endswith("LayerNorm/gamma"):
            return "ones", None
        if name.endswith("LayerNorm/beta") or name.endswith("bias"):
            return "zeros", None
        if config.initializer == "bert":
            return "truncated_normal", config.initializer_range
        if config.initializer == TOOLKIT:
            if name.endswith("word_embeddings"):
                return toolkit_initializer_of(name, (config.vocab_size, config.hidden_size))
            return toolkit_initializer_of(name, (shapes or kernel_shapes(config))[name])
        if name.endswith("word_embeddings"):
            return "truncated_normal", config.hidden_size ** -0.5 / 0.87962566103423978
        fan_in, fan_out = (shapes or kernel_shapes(config))[name]
        return "truncated_normal", math.sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978

    return initializer_of


def kernel_shapes(config):
    """{checkpoint name: original shape} of every kernel, from the config alone (no model built)."""
    d, projection, inner = config.hidden_size, config.num_attention_heads * config.attention_head_size, \
        config.intermediate_size
    shapes = {}
    for stack, count in config.num_layers.items():
        for i in range(count):
            prefix = "nmt/%s/layer_%d/" % (stack, i)
            sublayers = [("attention/self", "attention/output")]
            if stack == "decoder":
                sublayers.append(("attention/cross", "attention/cross_output"))
            for projection_name, output_name in sublayers:
                for part in ("query", "key", "value"):
                    shapes[prefix + "%s/%s/kernel" % (projection_name, part)] = (d, projection)
                shapes[prefix + output_name + "/dense/kernel"] = (projection, d)
            shapes[prefix + "intermediate/dense/kernel"] = (d, inner)
            shapes[prefix + "output/dense/kernel"] = (inner, d)
    return shapes
