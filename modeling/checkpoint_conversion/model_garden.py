"""Model Garden's TF2 BERT checkpoints (object-based) read under the original names.

Model Garden saves its encoder as an object: `tf.train.Checkpoint(encoder=
BertEncoderV2(...))` (its released TF2 checkpoints and export_tfhub's input),
`tf.train.Checkpoint(model=encoder)` (tf2_bert_encoder_checkpoint_converter's
default), or `tf.train.Checkpoint(**BertPretrainerV2(...).checkpoint_items)`
(`encoder` and `masked_lm`), often with `optimizer` and `save_counter`. A
variable's key is its path in the saved object graph, so the reader:

  1. builds Model Garden's `BertEncoderV2` from bert_config.json;
  2. finds the encoder in the checkpoint's object graph, wherever it was put:
     the one object with `_embedding_layer` and `_transformer_layers` (both
     BertEncoderV2 and the older functional BertEncoder save those), and a
     MaskedLM (`dense`, `layer_norm`, `bias`, `embedding_table`) if there is one;
  3. matches the built objects to the saved ones child by child, by the names
     the object graph records, and reads each matched variable's value;
  4. refuses any saved variable that nothing matched, other than training
     state (`optimizer`, `save_counter`, `global_step` and slot variables);
  5. names the weights the original way: the embeddings and pooler by their
     layers, each TransformerEncoderBlock through `checkpoint_names`, the
     project's mapping of that block.

Model Garden's encoder has no head size: it is hidden_size / num_attention_heads.
Its `norm_first` (pre-LayerNorm) encoders and `embedding_width` projections are
not the original BERT: a config that asks for them is refused.
"""

import collections

import tensorflow as tf
from absl import logging
from official.nlp.modeling import layers as garden_layers
from official.nlp.modeling import networks
from tensorflow.core.protobuf import trackable_object_graph_pb2

from checkpoints.original_names import block_variables
from layers import activations
from layers.initializers import create_initializer
from modeling.checkpoint_conversion import original_format
from modeling.checkpoint_conversion.converted_checkpoint import ConvertedCheckpoint
from modeling.checkpoint_conversion.errors import ConversionError

VARIABLE_VALUE = "VARIABLE_VALUE"
# Top-level objects of a training checkpoint that are not model weights.
TRAINING_STATE = ("optimizer", "save_counter", "global_step")
ENCODER_CHILDREN = {"_embedding_layer", "_transformer_layers"}
MASKED_LM_CHILDREN = {"dense", "layer_norm", "bias", "embedding_table"}


def read_model_garden(path, config_file=None, vocab_file=None):
    """Reads a Model Garden BERT encoder checkpoint as a `ConvertedCheckpoint`.

    Args:
      path: a checkpoint prefix (`.../ckpt-1`, `.../bert_model.ckpt`) or a
        directory holding one.
      config_file, vocab_file: default bert_config.json and vocab.txt beside it.

    Raises:
      ConversionError: naming the checkpoint and the variable's key, for a
        name-based checkpoint, no (or more than one) encoder, a variable
        missing, of another shape, or left over.
    """
    config, config_file = original_format.read_config(path, config_file)
    _check_config(config, config_file)
    vocab_file = original_format.beside(path, original_format.VOCAB, "--vocab_file", vocab_file)
    prefix = original_format.checkpoint_prefix(path)
    reader = tf.train.load_checkpoint(prefix)
    if not reader.has_tensor(original_format.OBJECT_GRAPH):
        raise ConversionError("%s is a name-based (TF1) checkpoint, not Model Garden's object-based one; "
                              "read it with --input_format=original." % prefix)
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(original_format.OBJECT_GRAPH))
    paths = _paths(graph)

    encoder = _garden_encoder(config)
    matched = {}
    _match(graph, _find(graph, paths, prefix, ENCODER_CHILDREN, "BertEncoder (an object with _embedding_layer and "
                                                                 "_transformer_layers)"), encoder, matched)
    masked_lm = None
    if _nodes_with(graph, paths, MASKED_LM_CHILDREN):
        masked_lm = _garden_masked_lm(config, encoder)
        _match(graph, _find(graph, paths, prefix, MASKED_LM_CHILDREN, "MaskedLM"), masked_lm, matched)

    keys = _variable_keys(graph)
    training = _training_state(graph)
    leftover = sorted(keys[n] for n in keys if n not in matched and n not in training)
    if leftover:
        raise ConversionError(
            "%s: %d variable(s) are not part of a BERT encoder or its masked-LM head: %s (expected the checkpoint of "
            "a BertEncoder / BertEncoderV2 with bert_config %s, optionally with BertPretrainerV2's masked_lm)."
            % (prefix, len(leftover), ", ".join(leftover), config_file))
    ignored = [keys[n] for n in keys if n in training and n not in matched]
    if ignored:
        logging.info("%s: %d training-state variables (optimizer, step counters) are not converted.",
                     prefix, len(ignored))

    key_of = {}
    for node_id, obj in matched.items():
        if isinstance(obj, tf.Variable):
            if node_id not in keys:
                raise ConversionError("%s: %s has no saved value." % (prefix, paths[node_id]))
            key_of[id(obj)] = keys[node_id]
    named = _original_names(encoder, masked_lm)
    missing = sorted(name for name, (variable, _) in named.items() if id(variable) not in key_of)
    if missing:
        raise ConversionError("%s lacks %d variable(s) of the encoder for bert_config %s (original names): %s."
                              % (prefix, len(missing), config_file, ", ".join(missing)))
    tensors, sources = {}, {}
    for name, (variable, to_original) in named.items():
        key = key_of[id(variable)]
        value = reader.get_tensor(key)
        if tuple(value.shape) != tuple(variable.shape):
            raise ConversionError("%s: %s has shape %s; bert_config %s gives Model Garden's encoder %s there (%s)."
                                  % (prefix, key, list(value.shape), config_file, list(variable.shape), name))
        tensors[name] = to_original(value)
        sources[name] = "%s: %s" % (prefix, key)
    return ConvertedCheckpoint(config, tensors, sources, vocab_file, config_file, prefix)


def _check_config(config, config_file):
    natural = config.hidden_size // config.num_attention_heads
    if config.head_size is not None and config.head_size != natural:
        raise ConversionError("%s: `head_size` = %d, but Model Garden's BERT encoder has heads of hidden_size / "
                              "num_attention_heads = %d." % (config_file, config.head_size, natural))
    embedding_size = getattr(config, "embedding_size", None)
    if embedding_size not in (None, config.hidden_size):
        raise ConversionError("%s: `embedding_size` = %r is not supported; expected hidden_size (%d): the original "
                              "BERT has no embedding projection." % (config_file, embedding_size, config.hidden_size))
    if getattr(config, "norm_first", False):
        raise ConversionError("%s: `norm_first` = true is not supported; expected false: the original BERT is "
                              "post-LayerNorm." % config_file)


def _garden_encoder(config):
    """Model Garden's BertEncoderV2 for `config`, built (its variables exist)."""
    encoder = networks.BertEncoderV2(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        inner_dim=config.intermediate_size,
        inner_activation=activations.get_activation(config.hidden_act),
    )
    ids = tf.zeros([1, 2], tf.int32)
    encoder(dict(input_word_ids=ids, input_mask=tf.ones_like(ids), input_type_ids=ids))
    return encoder


def _garden_masked_lm(config, encoder):
    """Model Garden's MaskedLM tied to `encoder`, built."""
    masked_lm = garden_layers.MaskedLM(
        embedding_table=encoder.get_embedding_table(),
        activation=activations.get_activation(config.hidden_act),
        initializer=create_initializer(config.initializer_range),
    )
    masked_lm(tf.zeros([1, 2, config.hidden_size]), masked_positions=tf.zeros([1, 1], tf.int32))
    return masked_lm


def _original_names(encoder, masked_lm):
    """{original name: (variable, value -> original layout)} of the Model Garden objects."""
    # pylint: disable=protected-access
    same = lambda value: value  # noqa: E731
    names = collections.OrderedDict()
    names["bert/embeddings/word_embeddings"] = (encoder.get_embedding_table(), same)
    names["bert/embeddings/token_type_embeddings"] = (encoder._type_embedding_layer.embeddings, same)
    names["bert/embeddings/position_embeddings"] = (encoder._position_embedding_layer.weights[0], same)
    names["bert/embeddings/LayerNorm/gamma"] = (encoder._embedding_norm_layer.gamma, same)
    names["bert/embeddings/LayerNorm/beta"] = (encoder._embedding_norm_layer.beta, same)
    for i, block in enumerate(encoder.transformer_layers):
        for name, entry in block_variables(block, "bert/encoder/layer_%d" % i).items():
            names[name] = (entry.variable, entry.to_original)
    names["bert/pooler/dense/kernel"] = (encoder.pooler_layer.kernel, same)
    names["bert/pooler/dense/bias"] = (encoder.pooler_layer.bias, same)
    if masked_lm is not None:
        names["cls/predictions/transform/dense/kernel"] = (masked_lm.dense.kernel, same)
        names["cls/predictions/transform/dense/bias"] = (masked_lm.dense.bias, same)
        names["cls/predictions/transform/LayerNorm/gamma"] = (masked_lm.layer_norm.gamma, same)
        names["cls/predictions/transform/LayerNorm/beta"] = (masked_lm.layer_norm.beta, same)
        names["cls/predictions/output_bias"] = (masked_lm.bias, same)
    return names


def _paths(graph):
    """{node id: its first path from the root}, breadth first, as the checkpoint keys are made."""
    paths, queue = {0: ""}, collections.deque([0])
    while queue:
        node_id = queue.popleft()
        for child in graph.nodes[node_id].children:
            if child.node_id not in paths:
                paths[child.node_id] = (paths[node_id] + "/" if paths[node_id] else "") + child.local_name
                queue.append(child.node_id)
    return paths


def _nodes_with(graph, paths, children):
    return sorted(n for n in paths if children <= {c.local_name for c in graph.nodes[n].children})


def _find(graph, paths, prefix, children, what):
    """The one node with all of `children`, reachable from the root."""
    found = _nodes_with(graph, paths, children)
    if len(found) != 1:
        top = ", ".join(c.local_name for c in graph.nodes[0].children)
        raise ConversionError("%s: expected one %s in the checkpoint's object graph, found %s (top-level objects: %s)."
                              % (prefix, what, ", ".join(paths[n] for n in found) or "none", top))
    return found[0]


def _match(graph, node_id, obj, matched):
    """Pairs saved node `node_id` with Python object `obj`, and their children of the same names."""
    if node_id in matched:
        return
    matched[node_id] = obj
    children = tf.train.TrackableView(obj).children(obj)
    for child in graph.nodes[node_id].children:
        if child.local_name in children:
            _match(graph, child.node_id, children[child.local_name], matched)


def _variable_keys(graph):
    """{node id: checkpoint key} of every saved variable."""
    return {node_id: attribute.checkpoint_key
            for node_id, node in enumerate(graph.nodes)
            for attribute in node.attributes if attribute.name == VARIABLE_VALUE}


def _training_state(graph):
    """Node ids under the root's training-state objects, and optimizer slot variables."""
    queue = collections.deque(c.node_id for c in graph.nodes[0].children if c.local_name in TRAINING_STATE)
    queue.extend(slot.slot_variable_node_id for node in graph.nodes for slot in node.slot_variables)
    seen = set()
    while queue:
        node_id = queue.popleft()
        if node_id not in seen:
            seen.add(node_id)
            queue.extend(c.node_id for c in graph.nodes[node_id].children)
    return seen
