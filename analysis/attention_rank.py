"""The rank of BERT's attention logits, per example, layer and head.

Bhojanapalli et al. (2020), *Low-Rank Bottleneck in Multi-head Attention
Models*, Theorem 1: a head's logit matrix P = Q K^T / sqrt(d_p) over n tokens
factors through the head size d_p (Q, K: [n, d_p]), so rank(P) <= min(d_p, n).
With d_p = hidden_size / num_attention_heads < n (64 < 128 for BERT-base) a
head cannot express every n x n attention pattern; `head_size` >= n lifts the
bound. This module measures where a checkpoint's heads actually are:

  input lines -> `InputFeatures` (extract_features' tokenization and pairs)
              -> `BertModel` in inference mode: the input of every block
              -> each block's own query/key projections -> logits
                 [layers, heads, n, n] over the n real tokens ([CLS] and
                 [SEP] included, padding removed)
              -> singular values, numerical rank, effective rank, stable rank.

Keras's MultiHeadAttention returns only softmax probabilities, so the logits
are recomputed through the block's `_query_dense` and `_key_dense` sublayers
(Model Garden's `TransformerEncoderBlock` keeps its `tf_keras`
MultiHeadAttention as `_attention_layer`), with Keras's own scaling. The
attention mask only adds to logits before the softmax, so the unmasked logits
sliced to [:n, :n] are exactly the logits over the real tokens.

Definitions, for the singular values s_1 >= ... >= s_n of one n x n matrix:
  rank: NumPy's `np.linalg.matrix_rank` default, #{s_i > s_1 * n * eps}, with
    eps of float32, the dtype the model computes the logits in;
  effective rank (Roy & Vetterli 2007): exp(-sum p_i log p_i), p_i = s_i / sum s;
  stable rank: ||P||_F^2 / ||P||_2^2 = sum s_i^2 / s_1^2.
Stable rank <= effective rank <= n, both 0 for an all-zero matrix; neither
has a tolerance, so singular values of rounding noise add (very little) to them.
"""

import dataclasses
import io
import json
import math
import os

import numpy as np
import tensorflow as tf
import tf_keras
from absl import logging

import outputs
import tokenization
from checkpoints import init_checkpoint as init_checkpoint_lib
from feature_extraction import feature_extractor
from layers.attention import MatmulAttention
from modeling import bert_setup
from options import option

SUMMARY_SUFFIX = ".summary.json"
PLOT_SUFFIX = ".rank_vs_length.png"


def block_attention_logits(block, block_input):
    """The attention logits of one Model Garden `TransformerEncoderBlock`.

    Args:
      block: a built `TransformerEncoderBlock` with a `tf_keras`
        MultiHeadAttention (self-attention, no Linformer projection).
      block_input: float Tensor [batch_size, seq_length, hidden_size], what
        the block is called on (for BERT's layer 0, the embedding output).

    Returns:
      float Tensor [batch_size, num_heads, seq_length, seq_length]: logits
      [b, h, i, j] = q_i . k_j / sqrt(d_p) of head h, before the mask.

    Raises:
      ValueError: for a block whose attention is not recomputed this way.
    """
    # pylint: disable=protected-access,unidiomatic-typecheck
    attention = getattr(block, "_attention_layer", None)
    # Exactly Keras's class or ours (the same projections and logits): Model
    # Garden's multi-query and block-sparse subclasses project keys
    # differently, and Linformer projects the keys' length.
    plain = type(attention) in (tf_keras.layers.MultiHeadAttention, MatmulAttention)
    if not plain or getattr(block, "_linformer_dim", None) is not None:
        raise ValueError("%s: expected a TransformerEncoderBlock with a tf_keras MultiHeadAttention "
                         "as _attention_layer, got %r." % (block.name, attention))
    x = block_input
    if block._norm_first:
        # Pre-norm blocks attend over the normalised input; BERT is post-norm
        # (norm_first=False), where the attention input is the block input.
        x = block._attention_layer_norm(x)
    query = attention._query_dense(x)  # [batch, seq, heads, d_p]
    key = attention._key_dense(x)  # [batch, seq, heads, d_p]
    # Scaled before the product, as MultiHeadAttention._compute_attention does.
    query = tf.multiply(query, 1.0 / math.sqrt(float(attention._key_dim)))
    return tf.einsum("bsnd,btnd->bnts", key, query)


class AttentionLogits:
    """The attention logits of every layer of a `BertModel`.

    Call with three int arrays [batch_size, seq_length] (input_ids,
    input_mask, input_type_ids); returns a float32 numpy array
    [batch_size, num_hidden_layers, num_attention_heads, seq_length,
    seq_length]. Only [..., :n, :n] of an example with n real tokens is
    meaningful (padding queries and keys are not masked here).
    """

    def __init__(self, model, seq_length):
        blocks = list(model.encoder_layers)
        spec = tf.TensorSpec([None, seq_length], tf.int32)

        # One trace for every batch, the smaller last one included.
        @tf.function(input_signature=[spec, spec, spec], autograph=False)
        def logits(input_ids, input_mask, input_type_ids):
            model_outputs = model(
                dict(input_ids=input_ids, input_mask=input_mask, token_type_ids=input_type_ids),
                training=False,  # No dropout.
            )
            # Block l is called on the output of block l - 1; block 0 on the embeddings.
            block_inputs = [model_outputs["embedding_output"]] + model_outputs["all_encoder_layers"][:-1]
            logits = tf.stack([block_attention_logits(block, x) for block, x in zip(blocks, block_inputs)],
                              axis=1)
            # A mixed-precision policy computes them in (b)float16; NumPy's SVD takes float32.
            return tf.cast(logits, tf.float32)

        self._logits = logits

    def __call__(self, input_ids, input_mask, input_type_ids):
        return self._logits(
            tf.constant(input_ids, tf.int32),
            tf.constant(input_mask, tf.int32),
            tf.constant(input_type_ids, tf.int32),
        ).numpy()


def numerical_rank(singular_values, shape):
    """`np.linalg.matrix_rank`'s default rule, from singular values already computed.

    Args:
      singular_values: float array [..., k], descending, of matrices of `shape`.
      shape: (rows, columns) of the matrices.

    Returns:
      int array [...].
    """
    singular_values = np.asarray(singular_values)
    tolerance = singular_values.max(axis=-1, keepdims=True) * max(shape) * np.finfo(singular_values.dtype).eps
    return np.count_nonzero(singular_values > tolerance, axis=-1)


def effective_rank(singular_values):
    """exp(entropy of p = s / sum(s)) along the last axis; float64 array [...]."""
    s = np.asarray(singular_values, np.float64)
    total = s.sum(axis=-1, keepdims=True)
    p = np.divide(s, total, out=np.zeros_like(s), where=total > 0)
    # 0 log 0 = 0.
    entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
    return np.where(total[..., 0] > 0, np.exp(entropy), 0.0)


def stable_rank(singular_values):
    """sum(s^2) / max(s)^2 along the last axis; float64 array [...]."""
    s = np.asarray(singular_values, np.float64)
    largest = s.max(axis=-1)
    return np.divide(np.sum(s**2, axis=-1), largest**2, out=np.zeros_like(largest), where=largest > 0)


def rank_statistics(logits):
    """Singular values and ranks of a stack of square matrices.

    Args:
      logits: float array [..., n, n].

    Returns:
      dict of singular_values [..., n] (descending, the dtype of `logits`),
      rank int [...], effective_rank float64 [...], stable_rank float64 [...].
    """
    singular_values = np.linalg.svd(logits, compute_uv=False)
    return dict(
        singular_values=singular_values,
        rank=numerical_rank(singular_values, logits.shape[-2:]),
        effective_rank=effective_rank(singular_values),
        stable_rank=stable_rank(singular_values),
    )


def example_record(feature, logits):
    """One output record.

    Args:
      feature: `feature_extractor.InputFeatures` of the example.
      logits: float array [num_layers, num_heads, seq_length, seq_length], the
        example's slice of `AttentionLogits`' output.

    Returns:
      dict, see `write_records` for the layout.
    """
    n = len(feature.tokens)
    stats = rank_statistics(logits[:, :, :n, :n])
    num_layers, num_heads = stats["rank"].shape
    layers = []
    for layer in range(num_layers):
        heads = []
        for head in range(num_heads):
            heads.append({
                "head": head,
                "rank": int(stats["rank"][layer, head]),
                # 7 significant digits: all that float32 holds.
                "singular_values": [float("%.7g" % s) for s in stats["singular_values"][layer, head]],
                "effective_rank": round(float(stats["effective_rank"][layer, head]), 6),
                "stable_rank": round(float(stats["stable_rank"][layer, head]), 6),
            })
        layers.append({"layer": layer, "heads": heads})
    return {"index": feature.unique_id, "tokens": list(feature.tokens), "layers": layers}


def probe_features(logits_fn, features, batch_size=8):
    """Yields `example_record`s of `features`, in order, batch by batch.

    Args:
      logits_fn: an `AttentionLogits` (or any callable of the same signature).
      features: list of `feature_extractor.InputFeatures`.
      batch_size: int, examples per model call. The logits of a batch take
        batch_size * layers * heads * seq_length^2 * 4 bytes (75 MB at
        BERT-base, length 128, batch 8).
    """
    for start in range(0, len(features), batch_size):
        batch = features[start:start + batch_size]
        logits = logits_fn(
            np.array([f.input_ids for f in batch]),
            np.array([f.input_mask for f in batch]),
            np.array([f.input_type_ids for f in batch]),
        )
        for feature, example_logits in zip(batch, logits):
            yield example_record(feature, example_logits)


def examples_from_lines(lines):
    """`InputExample`s of text lines, parsed as `--input_file` lines are (`a ||| b` for a pair)."""
    # The input file's syntax is extract_features': one parser, read_examples's.
    pattern = feature_extractor._PAIR_PATTERN  # pylint: disable=protected-access
    examples = []
    for unique_id, line in enumerate(lines):
        line = line.strip()
        match = pattern.match(line)
        if match is None:
            examples.append(feature_extractor.InputExample(unique_id, line, None))
        else:
            examples.append(feature_extractor.InputExample(unique_id, match.group(1), match.group(2)))
    return examples


def check_batch_size(batch_size):
    if batch_size < 1:
        raise ValueError("--batch_size=%d must be positive." % batch_size)


def load_float32_encoder(config, init_checkpoint):
    """The encoder, built in float32 whatever the global policy.

    The rank's tolerance is float32's; a mixed policy left by a training run
    in the same process would compute the logits in bfloat16 and show noise
    as rank far above min(d_p, n).
    """
    tf_keras.mixed_precision.set_global_policy("float32")
    return feature_extractor.load_encoder(config, init_checkpoint)


def probe(config, init_checkpoint, tokenizer, lines, max_seq_length=128, batch_size=8):
    """The attention logit ranks of a checkpoint on some text, for a driver.

    Args:
      config: `modeling.BertConfig` of the checkpoint (head_size applied).
      init_checkpoint: checkpoint prefix or directory, original BERT layout.
      tokenizer: e.g. `tokenization.FullTokenizer` of the checkpoint's vocab.
      lines: list of str (`text_a` or `text_a ||| text_b`) or of
        `feature_extractor.InputExample`.
      max_seq_length: int, longer inputs are truncated (pairs from the longer side).
      batch_size: int, examples per model call.

    Returns:
      list of records, one per line, as `write_records` writes them.

    Raises:
      ValueError: for a bad max_seq_length or batch_size, or a checkpoint that
        cannot initialise the encoder (named, with the variable when a shape
        does not fit).
    """
    feature_extractor.check_max_seq_length(max_seq_length, config)
    check_batch_size(batch_size)
    if all(isinstance(line, feature_extractor.InputExample) for line in lines):
        examples = list(lines)
    else:
        examples = examples_from_lines(lines)
    features = feature_extractor.convert_examples_to_features(examples, max_seq_length, tokenizer)
    model = load_float32_encoder(config, init_checkpoint)
    return list(probe_features(AttentionLogits(model, max_seq_length), features, batch_size))


def _mean(values):
    return round(float(np.mean(values)), 6)


def summarize(records, head_size):
    """Means over the examples, per layer and head, with the Theorem 1 bound.

    Args:
      records: iterable of records (`probe`, `example_record`, or the output
        file's lines); "singular_values" may be left out.
      head_size: int, d_p of the model (`config.attention_head_size`).

    Returns:
      dict (n is an example's number of real tokens, the bound min(d_p, n)):
        num_examples, head_size, num_layers, num_heads;
        num_tokens: list of n, one per example, in order; mean_num_tokens;
        mean_rank, mean_bound (over examples, layers and heads);
        layers: [{layer, mean_rank, heads: [{head, head_size, mean_num_tokens,
          mean_bound, mean_rank, min_rank, max_rank, fraction_at_bound,
          mean_effective_rank, mean_stable_rank}]}];
        by_length: [{num_tokens, num_examples, bound, mean_rank, min_rank,
          max_rank}] for every n present, ascending, over layers and heads.

    Raises:
      ValueError: when there is no record.
    """
    records = list(records)
    if not records:
        raise ValueError("No examples to summarize.")

    def table(key):  # [examples, layers, heads]
        return np.array([[[head[key] for head in layer["heads"]] for layer in record["layers"]]
                         for record in records])

    ranks, effective, stable = table("rank"), table("effective_rank"), table("stable_rank")
    num_tokens = np.array([len(record["tokens"]) for record in records])
    bounds = np.minimum(head_size, num_tokens)
    _, num_layers, num_heads = ranks.shape
    layers = []
    for layer in range(num_layers):
        heads = []
        for head in range(num_heads):
            rank = ranks[:, layer, head]
            heads.append({
                "head": head,
                "head_size": head_size,
                "mean_num_tokens": _mean(num_tokens),
                "mean_bound": _mean(bounds),
                "mean_rank": _mean(rank),
                "min_rank": int(rank.min()),
                "max_rank": int(rank.max()),
                "fraction_at_bound": _mean(rank == bounds),
                "mean_effective_rank": _mean(effective[:, layer, head]),
                "mean_stable_rank": _mean(stable[:, layer, head]),
            })
        layers.append({"layer": layer, "mean_rank": _mean(ranks[:, layer]), "heads": heads})
    by_length = []
    for n in sorted(set(num_tokens.tolist())):
        rank = ranks[num_tokens == n]
        by_length.append({
            "num_tokens": n,
            "num_examples": int(np.sum(num_tokens == n)),
            "bound": min(head_size, n),
            "mean_rank": _mean(rank),
            "min_rank": int(rank.min()),
            "max_rank": int(rank.max()),
        })
    return {
        "num_examples": len(records),
        "head_size": head_size,
        "num_layers": num_layers,
        "num_heads": num_heads,
        "num_tokens": num_tokens.tolist(),
        "mean_num_tokens": _mean(num_tokens),
        "mean_rank": _mean(ranks),
        "mean_bound": _mean(bounds),
        "layers": layers,
        "by_length": by_length,
    }


def plot_rank_vs_length(summaries, plot_file, labels=None, title=None):
    """Draws mean logit rank against n, one series per summary, with each bound min(d_p, n).

    Args:
      summaries: list of `summarize` results, e.g. one per model (head size).
      plot_file: path of the PNG to write (appears only when complete).
      labels: optional list of str, one per summary; default "d_p = <head_size>".
      title: optional str.

    Returns:
      plot_file.
    """
    # Imported here: only plotting needs matplotlib. Figure without pyplot
    # renders with Agg and leaves the process's backend alone.
    from matplotlib.figure import Figure  # pylint: disable=import-outside-toplevel
    from matplotlib.ticker import MaxNLocator  # pylint: disable=import-outside-toplevel

    labels = labels or ["d_p = %d" % s["head_size"] for s in summaries]
    # Constrained layout makes room for the legend below the axes, off the data.
    figure = Figure(figsize=(7, 5), dpi=120, layout="constrained")
    axes = figure.add_subplot()
    longest = max(row["num_tokens"] for s in summaries for row in s["by_length"])
    bound_x = np.arange(1, longest + 1)
    means, bounds, top = [], [], 1
    for index, (summary, label) in enumerate(zip(summaries, labels)):
        color = "C%d" % (index % 10)
        rows = summary["by_length"]
        n = [row["num_tokens"] for row in rows]
        heads = summary["num_layers"] * summary["num_heads"]
        axes.fill_between(n, [row["min_rank"] for row in rows], [row["max_rank"] for row in rows],
                          color=color, alpha=0.2, linewidth=0)
        means += axes.plot(n, [row["mean_rank"] for row in rows], "o-", color=color, markersize=4,
                           linewidth=2.5, alpha=0.7,
                           label="%s: mean rank (band: min-max over %d heads)" % (label, heads))
        bound_y = np.minimum(summary["head_size"], bound_x)
        # Thin and on top: a rank that reaches its bound leaves the dashes visible.
        bounds += axes.plot(bound_x, bound_y, "--", color="black", linewidth=1, dashes=(4, 3), zorder=3,
                            gapcolor=color, label="%s: bound min(d_p, n)" % label)
        top = max(top, bound_y.max(), max(row["max_rank"] for row in rows))
    axes.set_xlabel("sequence length n (real tokens)")
    axes.set_ylabel("numerical rank of QK$^T$/$\\sqrt{d_p}$")
    axes.set_xlim(0, longest + 1)
    axes.set_ylim(0, top * 1.08)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # Ranks and lengths are counts.
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    axes.set_title(title or "Attention logit rank vs sequence length")
    # Column-major fill: means in the first column, their bounds beside them.
    figure.legend(handles=means + bounds, loc="outside lower center", ncols=2, fontsize="small")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    with outputs.writing(plot_file) as temporary, tf.io.gfile.GFile(temporary, "wb") as writer:
        writer.write(buffer.getvalue())
    return plot_file


def write_records(output_file, records):
    """Writes one JSON line per record; returns the records without their singular values.

    Each line (in input order) is
      {"index": i, "tokens": ["[CLS]", ..., "[SEP]"],
       "layers": [{"layer": l,
                   "heads": [{"head": h, "rank": r, "singular_values": [s_1, ..., s_n],
                              "effective_rank": e, "stable_rank": s}, ...]}, ...]}
    The file appears only when complete (`outputs.writing`).
    """
    kept = []
    with outputs.writing(output_file) as temporary, tf.io.gfile.GFile(temporary, "w") as writer:
        for record in records:
            writer.write(json.dumps(record) + "\n")
            # What the summary needs: a run keeps O(examples * heads) in memory, not the spectra.
            kept.append(dict(record, layers=[
                dict(layer, heads=[{k: v for k, v in head.items() if k != "singular_values"}
                                   for head in layer["heads"]])
                for layer in record["layers"]]))
            if len(kept) % 100 == 0:
                logging.info("Probed %d examples.", len(kept))
    return kept


def _check_directory(flag, path):
    directory = os.path.dirname(path) or "."
    if not tf.io.gfile.isdir(directory):
        raise ValueError("%s=%s: the directory %s does not exist." % (flag, path, directory))


def _log_summary(summary):
    logging.info("Mean attention logit rank over %d examples (mean n = %.1f, d_p = %d, mean bound "
                 "min(d_p, n) = %.1f): %.2f", summary["num_examples"], summary["mean_num_tokens"],
                 summary["head_size"], summary["mean_bound"], summary["mean_rank"])
    for layer in summary["layers"]:
        logging.info("  layer %d: mean rank %.2f; per head %s", layer["layer"], layer["mean_rank"],
                     " ".join("%.2f" % head["mean_rank"] for head in layer["heads"]))


def run(input_file, output_file, bert_config, init_checkpoint, tokenizer, max_seq_length=128, batch_size=8,
        summary_file=None, plot_file=None):
    """Probes every line of `input_file`; writes the records, the summary and the plot.

    Args:
      input_file: path, one example per line, `text_a` or `text_a ||| text_b`.
      output_file: path of the JSON-lines records (see `write_records`).
      bert_config: `modeling.BertConfig` of the checkpoint (head_size applied).
      init_checkpoint: checkpoint prefix or directory, original BERT layout.
      tokenizer: e.g. `tokenization.FullTokenizer` of the checkpoint's vocab.
      max_seq_length: int, longer inputs are truncated.
      batch_size: int, examples per model call.
      summary_file: path of the `summarize` JSON; default
        `<output_file>.summary.json`.
      plot_file: path of the PNG; default `<output_file>.rank_vs_length.png`.

    Returns:
      The summary dict.

    Raises:
      ValueError: for bad flags, a missing output directory, an input without
        lines, or a checkpoint that cannot initialise the encoder.
      FileNotFoundError: when `input_file` does not exist.
    """
    # Flag errors first: they should not wait for the checkpoint to load.
    feature_extractor.check_max_seq_length(max_seq_length, bert_config)
    check_batch_size(batch_size)
    checkpoint = init_checkpoint_lib.check(init_checkpoint)
    summary_file = summary_file or output_file + SUMMARY_SUFFIX
    plot_file = plot_file or output_file + PLOT_SUFFIX
    for flag, path in (("--output_file", output_file), ("--summary_file", summary_file),
                       ("--plot_file", plot_file)):
        _check_directory(flag, path)

    examples = feature_extractor.read_examples(input_file)
    if not examples:
        raise ValueError("--input_file %s has no lines; expected one example per line." % input_file)
    features = feature_extractor.convert_examples_to_features(examples, max_seq_length, tokenizer)
    model = load_float32_encoder(bert_config, checkpoint)
    logits_fn = AttentionLogits(model, max_seq_length)
    records = write_records(output_file, probe_features(logits_fn, features, batch_size))
    summary = summarize(records, bert_config.attention_head_size)
    outputs.write_text(summary_file, json.dumps(summary, indent=1) + "\n")
    plot_rank_vs_length([summary], plot_file)
    _log_summary(summary)
    logging.info("Wrote %s, %s and %s.", output_file, summary_file, plot_file)
    return summary


@dataclasses.dataclass(kw_only=True)
class ProbeAttentionRankOptions(bert_setup.BertConfigOptions):
    """The probe_attention_rank.py flags: extract_features' model and input flags, and the outputs."""

    input_file: str = option(help="Text file, one example per line; `a ||| b` for a pair.", path="file")
    output_file: str = option(help="JSON-lines file to write, one line per example: every layer's and "
                              "head's logit singular values and ranks.", path="output_file")
    summary_file: str = option("", "JSON summary: mean ranks per layer and head with the bound "
                               "min(head_size, n). Default: <output_file>.summary.json.", path="output_file")
    plot_file: str = option("", "PNG of rank vs sequence length n with the bound. "
                            "Default: <output_file>.rank_vs_length.png.", path="output_file")
    init_checkpoint: str = option(help="Checkpoint to probe (prefix or directory), original layout.")
    vocab_file: str = option(help="Vocabulary file the model was trained with.", path="file")
    do_lower_case: bool = option(True, "Lower-case the input: True for uncased models, False for cased.")
    max_seq_length: int = option(128, "Maximum tokens per example after WordPiece; longer is truncated.")
    batch_size: int = option(8, "Examples per model call.", minimum=1)


def run_from_options(options):
    """probe_attention_rank.py: checks the flags, then `run`.

    Returns:
      The summary dict.
    """
    options.validate()
    tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
    bert_config = bert_setup.effective_config(options)
    tokenizer = tokenization.FullTokenizer(vocab_file=options.vocab_file, do_lower_case=options.do_lower_case)
    return run(options.input_file, options.output_file, bert_config, options.init_checkpoint, tokenizer,
               options.max_seq_length, options.batch_size, options.summary_file, options.plot_file)
