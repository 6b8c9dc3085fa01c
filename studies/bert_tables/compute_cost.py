"""Compute and storage cost of BERT pre-training, from the config alone.

FLOPs count the matrix products, each multiply-add as two FLOPs, with the
shapes our `BertPretrainingModel` computes them in (B = batch_size,
n = seq_length, m = max_predictions_per_seq, d = hidden_size,
h = num_attention_heads, p = head size, I = intermediate_size,
V = vocab_size, T = type_vocab_size, L = num_hidden_layers):

  embeddings             2*B*n*T*d  (token types are a one-hot product, as in
                         the original; word and position embeddings are gathers)
  per layer, L times:
    attention_projections  8*B*n*d*h*p  (Q, K, V: d -> h*p; output: h*p -> d)
    attention_scores       4*B*h*n^2*p  (logits Q.K^T and the weighted sum of V)
    ffn                    4*B*n*d*I    (d -> I -> d)
  pooler                 2*B*d^2      (first token only)
  masked_lm              2*B*m*d^2 + 2*B*m*d*V  (transform and the tied output
                         layer, on the m masked positions only)
  next_sentence          4*B*d

Ignored: elementwise work (biases, softmax, LayerNorm, GELU, dropout, the
attention mask, the losses, the embedding gradients' scatter-adds) and the
optimizer update: a few operations per value, where every output of a product
costs twice its contracted size (d, I, p or n). Padding positions are
computed like any other, so n is the padded length.

A training step costs three forward passes: the backward pass computes, for
every product, the gradients of both operands, each a product of the same
size. The one exception is the token-type product, whose one-hot operand
needs no gradient (two passes). A step is thus about 6*N*B*n FLOPs, N the
parameters outside the embedding tables, plus the attention scores and the
MLM output layer.

Checkpoint sizes are those of our TF1-layout checkpoints: float32 variables
(4 bytes each), and in training checkpoints also both Adam (or LAMB) slots of
every variable and the int64 `global_step`. Not counted: the `.index` file
(a few bytes per variable) and the input and dropout state written beside a
training checkpoint (`training_state/`). Variables frozen with --freeze have
no slots, so their training checkpoints are smaller than computed here.
"""

import collections
import collections.abc
import math
import numbers

from modeling.bert_config import BertConfig
from modeling.parameter_groups import count_parameters

FLOAT32_BYTES = 4
GLOBAL_STEP_BYTES = 8  # int64
OPTIMIZER_SLOTS = 2  # adam_m and adam_v

Stage = collections.namedtuple("Stage", ["steps", "batch_size", "seq_length", "max_predictions_per_seq"])
Stage.__doc__ = "A phase of pre-training: `steps` steps at one batch size and sequence length."

_SI_PREFIXES = ("", "k", "M", "G", "T", "P", "E", "Z", "Y")


def forward_flops(config, batch_size, seq_length, max_predictions_per_seq):
    """FLOPs of one forward pass of the pre-training model, by component.

    Args:
      config: a `BertConfig`.
      batch_size: int, sequences per step.
      seq_length: int, padded length n of every sequence (at most
        max_position_embeddings).
      max_predictions_per_seq: int, masked positions m per sequence the MLM
        output layer is computed for (at most seq_length).

    Returns:
      dict of ints: embeddings, attention_projections, attention_scores, ffn
      (each summed over layers), pooler, masked_lm, next_sentence, encoder
      (embeddings to pooler), total; and attention_projections_per_layer,
      attention_scores_per_layer, ffn_per_layer.

    Raises:
      ValueError: naming the argument, for a bad config or shape.
    """
    _check_shapes("forward_flops", config, batch_size, seq_length, max_predictions_per_seq)
    # Python ints: schedule totals (~1e20) overflow NumPy's int64.
    b, n, m = int(batch_size), int(seq_length), int(max_predictions_per_seq)
    d = config.hidden_size
    projection = config.num_attention_heads * config.attention_head_size  # h*p
    layers = config.num_hidden_layers

    flops = dict(
        embeddings=2 * b * n * config.type_vocab_size * d,
        attention_projections_per_layer=4 * (2 * b * n * d * projection),
        # Per head n x n logits over p, then n x p outputs over n positions.
        attention_scores_per_layer=2 * (2 * b * n * n * projection),
        ffn_per_layer=2 * (2 * b * n * d * config.intermediate_size),
        pooler=2 * b * d * d,
        masked_lm=2 * b * m * d * d + 2 * b * m * d * config.vocab_size,
        next_sentence=2 * b * d * 2,
    )
    for key in ("attention_projections", "attention_scores", "ffn"):
        flops[key] = layers * flops[key + "_per_layer"]
    flops["encoder"] = (flops["embeddings"] + flops["attention_projections"]
                        + flops["attention_scores"] + flops["ffn"] + flops["pooler"])
    flops["total"] = flops["encoder"] + flops["masked_lm"] + flops["next_sentence"]
    return flops


def pretraining_step_flops(config, batch_size, seq_length, max_predictions_per_seq):
    """FLOPs of one pre-training step: forward and backward pass.

    Three times the forward pass, except the token-type product (two times):
    see the module docstring.

    Args:
      config, batch_size, seq_length, max_predictions_per_seq: as in
        `forward_flops`.

    Returns:
      int.
    """
    _check_shapes("pretraining_step_flops", config, batch_size, seq_length, max_predictions_per_seq)
    forward = forward_flops(config, batch_size, seq_length, max_predictions_per_seq)
    return 3 * (forward["total"] - forward["embeddings"]) + 2 * forward["embeddings"]


def schedule_flops(config, stages):
    """FLOPs of a pre-training schedule: the sum of steps x step FLOPs over its stages.

    E.g. the paper's BERT schedule, 450k steps at seq_length 128 then 50k at
    512, batch 1024, masking about 15% of the positions:
    [Stage(450000, 1024, 128, 20), Stage(50000, 1024, 512, 80)].

    Args:
      config: a `BertConfig`.
      stages: non-empty sequence of `Stage`s, or of (steps, batch_size,
        seq_length, max_predictions_per_seq) tuples.

    Returns:
      int.

    Raises:
      ValueError: naming the stage, for a malformed or invalid one.
    """
    _check_config("schedule_flops", config)
    if isinstance(stages, (str, bytes)) or not isinstance(stages, collections.abc.Sequence) or not stages:
        raise ValueError(
            "schedule_flops: `stages` must be a non-empty sequence of Stage(steps, batch_size, "
            "seq_length, max_predictions_per_seq); got %r." % (stages,))
    total = 0
    for index, stage in enumerate(stages):
        if not isinstance(stage, (tuple, list)) or len(stage) != len(Stage._fields):
            raise ValueError(
                "schedule_flops: `stages[%d]` must be Stage(steps, batch_size, seq_length, "
                "max_predictions_per_seq); got %r." % (index, stage))
        stage = Stage(*stage)
        if not _is_int(stage.steps) or stage.steps < 0:
            raise ValueError(
                "schedule_flops: `stages[%d].steps` must be a non-negative integer, got %r."
                % (index, stage.steps))
        _check_shapes("schedule_flops (stages[%d])" % index, config, stage.batch_size,
                      stage.seq_length, stage.max_predictions_per_seq)
        total += int(stage.steps) * pretraining_step_flops(
            config, stage.batch_size, stage.seq_length, stage.max_predictions_per_seq)
    return total


def checkpoint_bytes(config, with_adam_slots=False, include_pretraining_heads=True):
    """Bytes of variable data in a checkpoint of a model built from `config`.

    Args:
      config: a `BertConfig`.
      with_adam_slots: count what a training checkpoint holds: also the two
        optimizer slots of every variable, `adam_m` and `adam_v` (LAMB's are
        stored under the same names), so three times the model, and the int64
        global_step.
      include_pretraining_heads: count the `cls/` heads, as pre-training
        checkpoints hold them; False for the encoder and pooler alone.

    Returns:
      int, the size of the checkpoint's `.data` file(s).
    """
    _check_config("checkpoint_bytes", config)
    counts = count_parameters(config, include_pretraining_heads=include_pretraining_heads)
    parameters = counts["total_with_pretraining_heads" if include_pretraining_heads else "total"]
    size = FLOAT32_BYTES * parameters
    if with_adam_slots:
        size += OPTIMIZER_SLOTS * FLOAT32_BYTES * parameters + GLOBAL_STEP_BYTES
    return size


def format_flops(flops):
    """Formats a FLOP count with a decimal SI prefix, e.g. "6.1 PFLOP".

    Raises:
      ValueError: for a negative or non-finite count.
    """
    return _format_si("format_flops", "flops", flops, "FLOP")


def format_bytes(num_bytes):
    """Formats a byte count with a decimal SI prefix (1 GB = 1e9 bytes), e.g. "1.3 GB".

    Raises:
      ValueError: for a negative or non-finite count.
    """
    return _format_si("format_bytes", "num_bytes", num_bytes, "B")


def _format_si(caller, name, value, unit):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError("%s: `%s` must be a non-negative number, got %r." % (caller, name, value))
    if value < 1000:
        return ("%d %s" if float(value).is_integer() else "%.1f %s") % (value, unit)
    exponent = min(int(math.log10(value) // 3), len(_SI_PREFIXES) - 1)
    scaled = value / 1000 ** exponent
    # 999.96 G rounds to 1000.0 G: show it as 1.0 T instead.
    if round(scaled, 1) >= 1000 and exponent < len(_SI_PREFIXES) - 1:
        exponent += 1
        scaled = value / 1000 ** exponent
    return "%.1f %s%s" % (scaled, _SI_PREFIXES[exponent], unit)


def _check_config(caller, config):
    if not isinstance(config, BertConfig):
        raise ValueError("%s: `config` must be a BertConfig, got %s." % (caller, type(config).__name__))


def _check_shapes(caller, config, batch_size, seq_length, max_predictions_per_seq):
    _check_config(caller, config)
    for name, value in (("batch_size", batch_size), ("seq_length", seq_length),
                        ("max_predictions_per_seq", max_predictions_per_seq)):
        if not _is_int(value) or value <= 0:
            raise ValueError("%s: `%s` must be a positive integer, got %r." % (caller, name, value))
    if seq_length > config.max_position_embeddings:
        raise ValueError(
            "%s: `seq_length` = %d is longer than the model's max_position_embeddings = %d."
            % (caller, seq_length, config.max_position_embeddings))
    if max_predictions_per_seq > seq_length:
        raise ValueError(
            "%s: `max_predictions_per_seq` = %d must be at most seq_length = %d."
            % (caller, max_predictions_per_seq, seq_length))


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
