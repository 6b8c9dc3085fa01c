"""Extracts fixed (pre-computed) BERT activations for a text file.

The pipeline of the original `extract_features.py`:

  input lines -> `InputExample`s (`text_a` or `text_a ||| text_b`)
              -> `InputFeatures` ([CLS] a [SEP] (b [SEP]), padded ids)
              -> `BertModel` in inference mode, batch by batch
              -> one JSON line per example with the chosen encoder layers'
                 activations of every real token.

Everything works on any `tokenizer` with the original `tokenize(text)` and
`convert_tokens_to_ids(tokens)` methods (`tokenization.FullTokenizer`; the
entry point uses `tokenization.CachedFullTokenizer`, the same tokens faster).
"""

import collections
import dataclasses
import json
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

import modeling
import outputs
import tokenization
from checkpoints import init_checkpoint as init_checkpoint_lib
from classifier_data.features import check_vocab_fits_config
from modeling import bert_setup
from options import option
from training import distribution, inference

# The original's pair syntax: the last " ||| " wins because `(.*)` is greedy.
_PAIR_PATTERN = re.compile(r"^(.*) \|\|\| (.*)$")

# Examples whose tokens and ids are logged, as the original does, so that a
# wrong vocab or casing shows up in the log before a long run.
_NUM_LOGGED_EXAMPLES = 5

# Line numbers listed in the warning about lines that are not UTF-8.
_NUM_LISTED_LINES = 10


class InputExample(collections.namedtuple("InputExample", ["unique_id", "text_a", "text_b"])):
    """One input line.

    Fields:
      unique_id: int, the zero-based line number.
      text_a: str, the (first) text.
      text_b: str or None, the second text of a `text_a ||| text_b` pair.
    """


class InputFeatures(
    collections.namedtuple(
        "InputFeatures", ["unique_id", "tokens", "input_ids", "input_mask", "input_type_ids"]
    )
):
    """One example as model inputs.

    Fields:
      unique_id: int, from the `InputExample`.
      tokens: list of str, the real tokens incl. [CLS] and [SEP] (no padding).
      input_ids: list of int [seq_length], zero-padded.
      input_mask: list of int [seq_length], 1 for real tokens, 0 for padding.
      input_type_ids: list of int [seq_length], 0 for [CLS] a [SEP], 1 for
        b [SEP], 0 for padding.
    """


def read_examples(input_file):
    """Reads `input_file` (any `tf.io.gfile` path) into `InputExample`s.

    Every line is one example, blank lines included (as in the original, they
    give [CLS] [SEP] only); line i gets unique_id i. Bytes that are not UTF-8
    are dropped, as the original's `convert_to_unicode` does (under Python 2;
    under Python 3 its text-mode GFile fails instead), with a warning naming
    the lines.

    Raises:
      FileNotFoundError: naming `input_file` when it does not exist.
    """
    if not tf.io.gfile.exists(input_file):
        raise FileNotFoundError("--input_file not found: %s" % input_file)
    with tf.io.gfile.GFile(input_file, "rb") as reader:
        data = reader.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "ignore")
        _warn_invalid_lines(input_file, data)
    # Split on "\n" only, as readline() does; str.splitlines() would also
    # break lines at \x1c, \u2028 etc. and renumber later examples. Dropping
    # bytes never drops a "\n": that byte is never part of a multi-byte character.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # The final newline does not start another example.
    examples, odd = [], []
    for unique_id, line in enumerate(lines):
        line = line.strip()
        match = _PAIR_PATTERN.match(line)
        if match is None:
            examples.append(InputExample(unique_id, line, None))
        else:
            examples.append(InputExample(unique_id, match.group(1), match.group(2)))
        if "|||" in line and (match is None or "|||" in match.group(1) or "|||" in match.group(2)):
            odd.append(unique_id + 1)
    if odd:
        logging.warning("%d line(s) of %s hold '|||' but not as one ' ||| ' (spaces around it) between two texts: "
                        "line(s) %s. They are read as the original reads them: a line without ' ||| ' is one text, "
                        "and the last ' ||| ' of a line splits it.", len(odd), input_file, _listed(odd))
    return examples


def _listed(numbers):
    """The first _NUM_LISTED_LINES line numbers, "and N more"."""
    listed = ", ".join(map(str, numbers[:_NUM_LISTED_LINES]))
    if len(numbers) > _NUM_LISTED_LINES:
        listed += " and %d more" % (len(numbers) - _NUM_LISTED_LINES)
    return listed


def _warn_invalid_lines(input_file, data):
    """Warns about the lines of `data` (bytes) that are not valid UTF-8, by 1-based number."""
    numbers = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            numbers.append(number)
    logging.warning("Dropped the bytes that are not valid UTF-8 from %d line(s) of %s, as the "
                    "original does: line(s) %s.", len(numbers), input_file, _listed(numbers))


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Truncates a pair in place to at most `max_length` tokens in total.

    One token at a time from the end of the longer list (of `tokens_b` on a
    tie, as the original): a short text keeps its share, unlike cutting a
    fixed fraction of each.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def convert_examples_to_features(examples, seq_length, tokenizer):
    """Tokenizes `InputExample`s into `InputFeatures` of length `seq_length`.

    Args:
      examples: iterable of `InputExample`.
      seq_length: int >= 3, the padded length (--max_seq_length).
      tokenizer: has `tokenize(text)` and `convert_tokens_to_ids(tokens)`.

    Returns:
      list of `InputFeatures`, in the order of `examples`.
    """
    features = []
    for example in examples:
        tokens_a = tokenizer.tokenize(example.text_a)
        if example.text_b is not None:
            tokens_b = tokenizer.tokenize(example.text_b)
            # Room for [CLS], [SEP] and [SEP].
            truncate_seq_pair(tokens_a, tokens_b, seq_length - 3)
        else:
            tokens_b = []
            del tokens_a[seq_length - 2 :]  # Room for [CLS] and [SEP].

        tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
        input_type_ids = [0] * len(tokens)
        if tokens_b:
            tokens += tokens_b + ["[SEP]"]
            input_type_ids += [1] * (len(tokens_b) + 1)
        input_ids = tokenizer.convert_tokens_to_ids(tokens)
        input_mask = [1] * len(input_ids)

        padding = [0] * (seq_length - len(input_ids))
        feature = InputFeatures(
            unique_id=example.unique_id,
            tokens=tokens,
            input_ids=input_ids + padding,
            input_mask=input_mask + padding,
            input_type_ids=input_type_ids + padding,
        )
        if len(features) < _NUM_LOGGED_EXAMPLES:
            logging.info(
                "*** Example %d ***\ntokens: %s\ninput_ids: %s\ninput_mask: %s\n"
                "input_type_ids: %s",
                feature.unique_id,
                " ".join(tokens),
                " ".join(map(str, feature.input_ids)),
                " ".join(map(str, feature.input_mask)),
                " ".join(map(str, feature.input_type_ids)),
            )
        features.append(feature)
    return features


def check_layer_indexes(layer_indexes, num_hidden_layers):
    """Raises ValueError unless every index is in [-L, L-1] (L = num_hidden_layers)."""
    if not layer_indexes:
        raise ValueError("--layers is empty; give at least one layer index, e.g. -1.")
    for index in layer_indexes:
        if not -num_hidden_layers <= index <= num_hidden_layers - 1:
            raise ValueError(
                "--layers entry %d is out of range: the model has %d encoder layers, so "
                "an index must be in [%d, %d] (-1 is the last layer)."
                % (index, num_hidden_layers, -num_hidden_layers, num_hidden_layers - 1)
            )


def parse_layers(layers, num_hidden_layers):
    """Parses the --layers flag, e.g. "-1,-2,-3,-4", into a checked list of ints.

    Index i picks `all_encoder_layers[i]`, Python style: -1 is the last layer.

    Raises:
      ValueError: naming --layers, for a non-integer entry or one out of range.
    """
    layer_indexes = []
    for entry in layers.split(","):
        try:
            layer_indexes.append(int(entry))
        except ValueError:
            raise ValueError(
                "--layers must be comma-separated integers such as -1,-2,-3,-4; got %r."
                % layers
            ) from None
    check_layer_indexes(layer_indexes, num_hidden_layers)
    return layer_indexes


def check_max_seq_length(max_seq_length, bert_config):
    """Raises ValueError unless 3 <= max_seq_length <= max_position_embeddings."""
    if max_seq_length > bert_config.max_position_embeddings:
        raise ValueError(
            "--max_seq_length=%d is longer than the model's max_position_embeddings=%d "
            "(bert_config); the model has no position embedding beyond that."
            % (max_seq_length, bert_config.max_position_embeddings)
        )
    if max_seq_length < 3:
        raise ValueError(
            "--max_seq_length=%d is too short: [CLS] and two [SEP] need 3 positions."
            % max_seq_length
        )


def load_encoder(bert_config, init_checkpoint):
    """Builds a `BertModel` and loads every encoder variable from a checkpoint.

    Args:
      bert_config: `modeling.BertConfig`.
      init_checkpoint: checkpoint prefix or directory, original BERT layout.

    Returns:
      The built, loaded `modeling.BertModel`.

    Raises:
      ValueError: when the checkpoint is not found or cannot be read, does not
        fit the config, has a bad seed manifest, or lacks an embedding or
        encoder variable (features of randomly initialised weights are
        useless, so that is never just a warning).
    """
    prefix = init_checkpoint_lib.check(init_checkpoint)
    model = modeling.build_model(modeling.BertModel(bert_config))
    result = init_checkpoint_lib.load(model, prefix)
    # The pooler is not part of any feature, so a checkpoint may lack it.
    missing = [name for name in result.missing if not name.startswith("bert/pooler/")]
    if missing:
        raise ValueError(
            "Checkpoint %s lacks %d of the model's embedding/encoder variables, "
            "e.g. %s. Is it a BERT checkpoint of this bert_config?"
            % (prefix, len(missing), ", ".join(missing[:5]))
        )
    return model


class FeatureExtractor:
    """Runs a `BertModel` and gathers the chosen encoder layers.

    Call with three int arrays [n, seq_length], n <= batch_size (input_ids,
    input_mask, input_type_ids); returns a float32 numpy array
    [n, len(layer_indexes), seq_length, hidden_size] whose [:, j]
    is `all_encoder_layers[layer_indexes[j]]`.
    """

    def __init__(self, model, layer_indexes, seq_length, batch_size=32, jit_compile=False):
        check_layer_indexes(layer_indexes, model.config.num_hidden_layers)
        self.layer_indexes = list(layer_indexes)

        def encode(input_ids, input_mask, input_type_ids):
            model_outputs = model(
                dict(input_ids=input_ids, input_mask=input_mask, token_type_ids=input_type_ids),
                training=False,  # No dropout: features are deterministic.
            )
            chosen = [model_outputs["all_encoder_layers"][i] for i in self.layer_indexes]
            if len(chosen) == 1:  # a reshape; stacking a single layer would copy it
                return tf.expand_dims(chosen[0], 1)
            return tf.stack(chosen, axis=1)

        # One trace (one XLA compilation) for every batch, the smaller last one included.
        self._encode = inference.BatchForward(encode, batch_size, seq_length, jit_compile)

    def __call__(self, input_ids, input_mask, input_type_ids):
        return self._encode(input_ids, input_mask, input_type_ids).numpy()


def feature_to_json(feature, layer_values, layer_indexes):
    """One output record.

    Args:
      feature: `InputFeatures`.
      layer_values: float array [len(layer_indexes), seq_length, hidden_size],
        this example's slice of `FeatureExtractor`'s output.
      layer_indexes: list of int, the --layers indexes, in flag order.

    Returns:
      dict, see `write_features` for the layout.
    """
    num_tokens = len(feature.tokens)
    # tolist() gives Python floats; round() them as the original, so the
    # text is identical to its output (np.round can differ in the last digit).
    values = layer_values[:, :num_tokens].tolist()
    token_features = []
    for position, token in enumerate(feature.tokens):
        token_features.append(
            {
                "token": token,
                "layers": [
                    {
                        "index": layer_index,
                        "values": [round(x, 6) for x in values[j][position]],
                    }
                    for j, layer_index in enumerate(layer_indexes)
                ],
            }
        )
    # "linex_index" is the original's typo, kept on purpose: tools that parse
    # the original output read this key.
    return {"linex_index": feature.unique_id, "features": token_features}


def write_features(output_file, features, extractor, batch_size, log_every_n_batches=10):
    """Runs `extractor` on `features` and writes one JSON line per feature.

    Each line (in the order of `features`) is
      {"linex_index": unique_id,
       "features": [{"token": "[CLS]",
                     "layers": [{"index": -1, "values": [0.123456, ...]},
                                ...]},   # one per --layers entry, flag order
                    ...]}                # one per real token, no padding

    The file appears only when complete (`outputs.writing`).

    Returns:
      int, the number of lines written.
    """
    total = len(features)
    num_batches = (total + batch_size - 1) // batch_size
    # Written beside, renamed when complete: a failed run leaves no output_file
    # that looks complete (nor replaces one from an earlier run).
    with outputs.writing(output_file) as temporary, tf.io.gfile.GFile(temporary, "w") as writer:
        for batch_index in range(num_batches):
            batch = features[batch_index * batch_size : (batch_index + 1) * batch_size]
            values = extractor(
                np.array([f.input_ids for f in batch]),
                np.array([f.input_mask for f in batch]),
                np.array([f.input_type_ids for f in batch]),
            )
            for feature, layer_values in zip(batch, values):
                record = feature_to_json(feature, layer_values, extractor.layer_indexes)
                writer.write(json.dumps(record) + "\n")
            done = batch_index + 1
            if done % log_every_n_batches == 0 or done == num_batches:
                logging.info(
                    "Extracted features for %d / %d examples.",
                    min(done * batch_size, total),
                    total,
                )
    return total


def run(
    input_file,
    output_file,
    bert_config,
    init_checkpoint,
    tokenizer,
    layer_indexes=(-1, -2, -3, -4),
    max_seq_length=128,
    batch_size=32,
    jit_compile=False,
):
    """Extracts features for every line of `input_file` into `output_file`.

    Args:
      input_file: path, one example per line, `text_a` or `text_a ||| text_b`.
      output_file: path of the JSON-lines output (see `write_features`).
      bert_config: `modeling.BertConfig` of the checkpoint (head_size applied).
      init_checkpoint: checkpoint prefix or directory, original BERT layout.
      tokenizer: e.g. `tokenization.FullTokenizer` or `CachedFullTokenizer` of the checkpoint's vocab.
      layer_indexes: list of int, indexes into `all_encoder_layers`.
      max_seq_length: int, longer inputs are truncated.
      batch_size: int, examples per model call.
      jit_compile: bool, compile the forward pass with XLA (--inference_xla).

    Returns:
      int, the number of examples written.

    Raises:
      ValueError: for a bad layer index, max_seq_length or batch_size, or a
        checkpoint (or its seed manifest) that cannot initialise the encoder.
      FileNotFoundError: when `input_file` does not exist.
    """
    layer_indexes = list(layer_indexes)
    # Flag errors first: they should not wait for the checkpoint to load.
    check_layer_indexes(layer_indexes, bert_config.num_hidden_layers)
    check_max_seq_length(max_seq_length, bert_config)
    if batch_size < 1:
        raise ValueError("--batch_size=%d must be positive." % batch_size)
    checkpoint = init_checkpoint_lib.check(init_checkpoint)
    output_dir = os.path.dirname(output_file) or "."
    if not tf.io.gfile.isdir(output_dir):
        raise ValueError("--output_file=%s: the directory %s does not exist." % (output_file, output_dir))

    examples = read_examples(input_file)
    if not examples:
        logging.warning("--input_file %s is empty; writing an empty %s.", input_file, output_file)
        outputs.write_text(output_file, "")
        return 0
    features = convert_examples_to_features(examples, max_seq_length, tokenizer)

    model = load_encoder(bert_config, checkpoint)
    extractor = FeatureExtractor(model, layer_indexes, max_seq_length, batch_size, jit_compile)
    count = write_features(output_file, features, extractor, batch_size)
    logging.info("Wrote features of %d examples to %s.", count, output_file)
    return count


@dataclasses.dataclass(kw_only=True)
class ExtractFeaturesOptions(bert_setup.BertConfigOptions, distribution.TpuOptions, inference.InferenceOptions):
    """The extract_features.py flags: the original's (the TPU ones accepted, without effect), --head_size and
    --inference_xla (the model runs in float32)."""

    input_file: str = option(help="Text file, one example per line; `a ||| b` for a pair.", path="file")
    output_file: str = option(help="JSON-lines file to write, one line per example.", path="output_file")
    layers: str = option("-1,-2,-3,-4", "Comma-separated encoder layer indexes; -1 is the last layer.")
    max_seq_length: int = option(
        128, "Maximum tokens per example after WordPiece; longer is truncated.")
    init_checkpoint: str = option(help="Pre-trained checkpoint (prefix or directory), original layout.")
    vocab_file: str = option(help="Vocabulary file the model was trained with.", path="file")
    do_lower_case: bool = option(
        True, "Lower-case the input: True for uncased models, False for cased.")
    batch_size: int = option(32, "Batch size for predictions.", minimum=1)
    use_one_hot_embeddings: bool = option(
        False, "No-op (a TPU option of the original); kept for command-line compatibility.")

    def validate(self):
        if self.use_tpu:
            raise ValueError("--use_tpu is not supported by extract_features.py: extraction runs on "
                             "the local device.")
        super().validate()


def run_from_options(options):
    """extract_features.py: checks the flags, then `run`.

    Returns:
      int, the number of examples written.
    """
    options.validate()
    tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
    bert_config = bert_setup.effective_config(options)
    layer_indexes = parse_layers(options.layers, bert_config.num_hidden_layers)
    tokenizer = tokenization.CachedFullTokenizer.from_vocab_file(options.vocab_file, options.do_lower_case)
    check_vocab_fits_config(tokenizer.vocab, bert_config.vocab_size, options.vocab_file)
    return run(options.input_file, options.output_file, bert_config, options.init_checkpoint, tokenizer,
               layer_indexes, options.max_seq_length, options.batch_size, options.compiles_forward("float32"))
