"""What one attention head can represent: fit its W_q, W_k to a target context matrix (Bhojanapalli et al., 2020).

Theorem 1 of the low-rank-bottleneck paper: with head size d_p >= n, for
inputs X of full rank (n tokens of width d >= n) every positive
row-stochastic n x n matrix P is softmax(X W_q (X W_k)^T / sqrt(d_p)) for
some W_q, W_k [d, d_p]; with d_p < n the logits have rank at most d_p, and a
P whose log needs rank n (close to a permutation, say) cannot be reached.
`fit_head` measures this directly: gradient descent (Adam) on W_q, W_k from
seeded starts, the best mean KL(P || P_head) over the rows, and the total
variation beside it. Measured (n = 8, d = 16): the error falls to zero from
d_p = n - 1 on, not n, since softmax ignores a constant added to a row: the
logits need only match log P up to row shifts, which takes rank n - 1.

`measure` (measure_head_capacity.py, the theorem1 experiment) sweeps d_p for
several n (Theorem 1) and sets h heads of the standard size d/h against h
heads of a fixed d_p = n at the same d (Theorem 2: once d/h < n, only the
fixed heads reach their targets). Inputs are random full-rank vectors, or the
embedding output of a real sentence from a BERT checkpoint.
"""

import dataclasses
import json
import time
from typing import Optional

import numpy as np
import tensorflow as tf
import tf_keras
from absl import logging

import modeling
import outputs
import tokenization
from feature_extraction import feature_extractor
from options import Options, option
from outputs.progress import format_duration


@dataclasses.dataclass(frozen=True)
class Fit:
    """The best fit found: mean KL(target || head) per row (nats), mean total variation per row."""

    head_size: int
    kl: float
    total_variation: float


def random_inputs(n, d, seed):
    """n token vectors of width d [n, d], Gaussian: full rank n when d >= n."""
    return np.random.RandomState(seed).standard_normal((n, d)).astype(np.float32)


def dirichlet_target(n, seed, concentration=1.0):
    """A random positive row-stochastic [n, n] matrix (each row a Dirichlet draw)."""
    rows = np.random.RandomState(seed).dirichlet(np.full(n, concentration), size=n)
    return np.maximum(rows, 1e-6) / np.maximum(rows, 1e-6).sum(1, keepdims=True)


def near_permutation_target(n, seed, mass=0.9):
    """(`mass` on a random permutation, the rest uniform): positive, and its log has full rank n."""
    target = np.full((n, n), (1.0 - mass) / (n - 1))
    target[np.arange(n), np.random.RandomState(seed).permutation(n)] = mass
    return target


def fit_head(inputs, target, head_size, steps=1500, learning_rate=0.05, restarts=2, seed=0):
    """The best fit of one head of size `head_size` to `target` from `restarts` seeded starts.

    Args:
      inputs: [n, d] token vectors X.
      target: [n, n] positive row-stochastic P (row i: query i's weights over the keys).

    Returns:
      Fit.
    """
    x = tf.constant(inputs, tf.float32)
    p = tf.constant(target, tf.float32)
    log_p = tf.math.log(p)
    d = inputs.shape[1]
    scale = 1.0 / np.sqrt(head_size)
    best = None
    for restart in range(restarts):
        rng = np.random.RandomState(seed * 1000 + restart)
        w_q = tf.Variable(rng.standard_normal((d, head_size)).astype(np.float32) / np.sqrt(d))
        w_k = tf.Variable(rng.standard_normal((d, head_size)).astype(np.float32) / np.sqrt(d))
        optimizer = tf_keras.optimizers.Adam(learning_rate)

        def log_head():
            logits = tf.matmul(tf.matmul(x, w_q), tf.matmul(x, w_k), transpose_b=True) * scale
            return tf.nn.log_softmax(logits, axis=-1)

        @tf.function
        def train(num_steps):
            for _ in tf.range(num_steps):
                with tf.GradientTape() as tape:
                    kl = tf.reduce_mean(tf.reduce_sum(p * (log_p - log_head()), axis=-1))
                optimizer.apply_gradients(zip(tape.gradient(kl, [w_q, w_k]), [w_q, w_k]))

        train(tf.constant(steps))
        log_q = log_head().numpy()
        # KL >= 0; float32 round-off leaves exact fits at +-1e-8.
        kl = max(0.0, float(np.mean(np.sum(target * (np.log(target) - log_q), axis=-1))))
        variation = float(np.mean(0.5 * np.abs(target - np.exp(log_q)).sum(-1)))
        if best is None or kl < best.kl:
            best = Fit(head_size, kl, variation)
    return best


TARGETS = {"near_permutation": near_permutation_target, "dirichlet": dirichlet_target}
# Head sizes of the Theorem 1 sweep, as fractions of n; n - 1, n and 2n are added.
FRACTIONS = (1 / 8, 1 / 4, 1 / 2, 3 / 4)


def head_sizes(n):
    """The d_p of the sweep at length n: fractions of n, then n - 1 (where softmax needs no more), n, 2n."""
    return sorted({max(1, round(f * n)) for f in FRACTIONS} | {max(1, n - 1), n, 2 * n})


def parse_ints(flag, text, minimum=1):
    """A comma-separated list of ints >= minimum; ValueError naming the flag."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < minimum:
        raise ValueError("%s=%s: expected comma-separated integers of at least %d, e.g. 8,16,32." % (
            flag, text, minimum))
    return values


class CheckpointInputs:
    """Token vectors of a real sentence: a BERT checkpoint's embedding output (word + position + segment,
    layer-normalised), the input of its first attention layer."""

    def __init__(self, config, init_checkpoint, tokenizer, lines, source):
        self._model = feature_extractor.load_encoder(config, init_checkpoint)
        self._tokens = [["[CLS]"] + tokenizer.tokenize(line) + ["[SEP]"] for line in lines]
        self._tokenizer = tokenizer
        self._source = source

    def __call__(self, n):
        """[n, d] for the first line with at least n tokens ([CLS] and [SEP] included), cut to n."""
        tokens = next((t for t in self._tokens if len(t) >= n), None)
        if tokens is None:
            raise ValueError("--input_file %s has no line of %d WordPiece tokens or more ([CLS] and [SEP] "
                             "included); the longest has %d. Give longer sentences or smaller --lengths." % (
                                 self._source, n, max(len(t) for t in self._tokens)))
        tokens = tokens[:n - 1] + ["[SEP]"]
        ids = tf.constant([self._tokenizer.convert_tokens_to_ids(tokens)], tf.int32)
        outputs_ = self._model(dict(input_ids=ids, input_mask=tf.ones_like(ids), token_type_ids=tf.zeros_like(ids)),
                               training=False)
        return outputs_["embedding_output"][0].numpy().astype(np.float32), " ".join(tokens)


def random_full_rank(n, width, seed):
    return random_inputs(n, width, seed), "Gaussian [%d, %d]" % (n, width)


def measure(lengths, targets, num_targets, steps, restarts, learning_rate, seed, theorem2_length,
            theorem2_hidden_size, theorem2_num_heads, inputs_of=None):
    """Theorem 1's sweep and Theorem 2's comparison; returns the results dict measure_head_capacity.py writes.

    Args:
      lengths: the n of Theorem 1; each n sweeps `head_sizes(n)`.
      targets: names in TARGETS; `num_targets` seeded targets of each kind per n.
      inputs_of: n -> ([n, width] inputs, description); default random, width max(2n, 64).
      theorem2_*: n, d and the head counts h of Theorem 2; each of the h heads fits its own
        near-permutation target, at size d / h (standard) or n (fixed).
    """
    inputs_of = inputs_of or (lambda n: random_full_rank(n, max(2 * n, 64), seed + n))
    fits = [(n, d_p, kind, t) for n in lengths for d_p in head_sizes(n) for kind in targets for t in range(num_targets)]
    fits2 = [(h, family, head) for h in theorem2_num_heads for family in ("standard", "fixed") for head in range(h)]
    total, done, started = len(fits) + len(fits2), 0, time.time()

    def progress():
        elapsed = time.time() - started
        if done % 10 == 0 or done == total:
            logging.info("%d/%d fits, elapsed %s, ETA %s", done, total, format_duration(elapsed),
                         format_duration(elapsed / done * (total - done)))

    inputs = {}
    theorem1 = []
    for n, d_p, kind, t in fits:
        if n not in inputs:
            inputs[n] = inputs_of(n)
        target_seed = seed + 100 * n + t
        fit = fit_head(inputs[n][0], TARGETS[kind](n, target_seed), d_p, steps, learning_rate, restarts, seed)
        theorem1.append(dict(n=n, head_size=d_p, target=kind, target_seed=target_seed, kl=fit.kl,
                             total_variation=fit.total_variation))
        done += 1
        progress()
    n2, d2 = theorem2_length, theorem2_hidden_size
    x2, description2 = inputs_of(n2)
    theorem2 = []
    for h, family, head in fits2:
        d_p = max(1, d2 // h) if family == "standard" else n2
        fit = fit_head(x2, near_permutation_target(n2, seed + 7919 * h + head), d_p, steps, learning_rate,
                       restarts, seed)
        theorem2.append(dict(num_heads=h, family=family, head=head, head_size=d_p, kl=fit.kl,
                             total_variation=fit.total_variation))
        done += 1
        progress()
    return dict(
        settings=dict(lengths=list(lengths), targets=list(targets), num_targets=num_targets, steps=steps,
                      restarts=restarts, learning_rate=learning_rate, seed=seed, theorem2_length=n2,
                      theorem2_hidden_size=d2, theorem2_num_heads=list(theorem2_num_heads)),
        inputs={str(n): description for n, (_, description) in sorted(inputs.items())},
        theorem2_inputs=description2, theorem1=theorem1, theorem2=theorem2)


@dataclasses.dataclass(kw_only=True)
class HeadCapacityOptions(Options):
    """The measure_head_capacity.py flags: the sweep, Theorem 2's shape, and optional real inputs."""

    output_file: str = option(help="JSON file to write: every fit's KL and total variation.", path="output_file")
    lengths: str = option("8,16,32", "Theorem 1: the sequence lengths n, comma-separated; each sweeps "
                          "d_p = n/8, n/4, n/2, 3n/4, n-1, n, 2n.", new=True)
    targets: str = option("near_permutation,dirichlet", "Target context matrices: near_permutation (0.9 on a "
                          "random permutation: its log has full rank) and/or dirichlet (random rows).", new=True)
    num_targets: int = option(2, "Seeded targets of each kind per n.", minimum=1, new=True)
    fit_steps: int = option(1500, "Adam steps per fit.", minimum=1, new=True)
    restarts: int = option(2, "Seeded starts per fit; the best is kept.", minimum=1, new=True)
    learning_rate: float = option(0.05, "Adam's learning rate.", new=True)
    random_seed: int = option(12345, "Seed of inputs, targets and starts.")
    theorem2_length: int = option(16, "Theorem 2: n; the fixed heads have d_p = n.", minimum=2, new=True)
    theorem2_hidden_size: int = option(64, "Theorem 2: d; standard heads have d_p = d / h.", minimum=1, new=True)
    theorem2_num_heads: str = option("1,2,4,8,16", "Theorem 2: the head counts h, comma-separated.", new=True)
    bert_config_file: Optional[str] = option(
        None, "With --init_checkpoint, --vocab_file and --input_file: inputs are the checkpoint's embedding "
        "output of a real sentence (the first line with n tokens or more) instead of random vectors.", path="file")
    init_checkpoint: Optional[str] = option(None, "The BERT checkpoint of those inputs (prefix or directory).")
    vocab_file: Optional[str] = option(None, "Its WordPiece vocabulary.", path="file")
    input_file: Optional[str] = option(None, "Sentences, one per line.", path="file")
    do_lower_case: bool = option(True, "Lower-case the sentences: True for uncased models.")

    def validate(self):
        super().validate()
        real = dict(bert_config_file=self.bert_config_file, init_checkpoint=self.init_checkpoint,
                    vocab_file=self.vocab_file, input_file=self.input_file)
        if any(real.values()) and not all(real.values()):
            raise ValueError("Real inputs need %s too (or none of %s)." % (
                ", ".join("--" + k for k, v in real.items() if not v), ", ".join("--" + k for k in real)))
        parse_names(self.targets)
        parse_ints("--lengths", self.lengths, minimum=2)
        parse_ints("--theorem2_num_heads", self.theorem2_num_heads)


def parse_names(text):
    names = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in names if v not in TARGETS]
    if not names or unknown:
        raise ValueError("--targets=%s: expected a comma-separated subset of %s." % (text, ", ".join(TARGETS)))
    return names


def run_from_options(options):
    """measure_head_capacity.py: checks the flags, measures, writes --output_file; returns the results."""
    options.validate()
    lengths = parse_ints("--lengths", options.lengths, minimum=2)
    heads = parse_ints("--theorem2_num_heads", options.theorem2_num_heads)
    inputs_of = None
    if options.init_checkpoint:
        tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
        config = modeling.BertConfig.from_json_file(options.bert_config_file)
        tokenizer = tokenization.FullTokenizer(vocab_file=options.vocab_file, do_lower_case=options.do_lower_case)
        with open(options.input_file, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        if not lines:
            raise ValueError("--input_file %s has no lines; expected sentences, one per line." % options.input_file)
        inputs_of = CheckpointInputs(config, options.init_checkpoint, tokenizer, lines, options.input_file)
    results = measure(lengths, parse_names(options.targets), options.num_targets, options.fit_steps,
                      options.restarts, options.learning_rate, options.random_seed, options.theorem2_length,
                      options.theorem2_hidden_size, heads, inputs_of)
    outputs.write_text(options.output_file, json.dumps(results, indent=1) + "\n")
    logging.info("Wrote %s.", options.output_file)
    return results
