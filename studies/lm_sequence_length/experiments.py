"""`lm_sequence_length`: does the fixed head size's advantage grow with the sequence length n?

Bhojanapalli et al. (2020) argue that a head of size d_p < n caps the rank of
its n x n attention logits at d_p, so the standard rule d_p = d/h should fall
further behind a fixed head size as n grows past d/h. The paper never varies n
alone; this study does. At each n, two rows of the language model:

  fixed     d = 256, h = 8, d_p = 256 (paper-scale sizes; halved at small
            scale: d = 128, d_p = 128, at least the largest n run)
  standard  d_p = d/h, d grown in multiples of h to the smallest model with
            at least as many parameters (as lm_figure1 matches its rows):
            d = 248, d_p = 31 at small scale

Only n changes between the rows of one model: the text is packed (run_lm.py
--pack_lines), so every example holds n predictions, and the batch holds
tokens_per_step / n examples, the same number of tokens per step at every n.

Layout under --output_dir: configs/<model>.json (the fixed and the standard
model, shared by every n), then <row>_seed<s>/ per run, rows named n<n>_fixed
and n<n>_standard. The first run learns the vocabulary unless --vocab_file gives one.
"""

import dataclasses
import os

from reproduction.plan import Step
from studies.lm import experiments as lm_experiments
from tokenization import sentencepiece_vocabulary as vocabulary_lib

FIXED = lm_experiments.LmRow("fixed", 256, 8, 256, family="fixed head size")
STANDARD = dataclasses.replace(lm_experiments.matched_standard(FIXED, "hidden_size"), name="standard",
                               family="standard d_p=d/h")
MODELS = (FIXED, STANDARD)
PAPER_STATEMENT = (
    "The paper does not vary n alone. Its argument: a head of size d_p < n gives attention logits of rank at "
    "most d_p, so the standard rule's handicap should grow as the sequence length n grows past d/h; it proposes "
    "d_p = n.")


@dataclasses.dataclass(frozen=True)
class SequenceLengthScale:
    """The language-model scale every run inherits (layers, sizes, schedule, seeds), and the lengths run."""

    name: str
    base: lm_experiments.LmScale
    lengths: tuple  # n: predictions per example
    tokens_per_step: int  # batch size x n, at every n
    minutes_per_run: float = None  # wall-clock minutes of one run, measured in the campaign (None: not yet)

    @property
    def seeds(self):
        return self.base.seeds

    @property
    def parallel_runs(self):
        """Runs at once by default: the language-model scale's own (2 at small_converged, 1 at tiny and paper)."""
        return self.base.parallel_runs

    def config(self, model):
        """The model's LmConfig at this scale, with room for the longest n."""
        config = self.base.config(model)
        return config.replace(max_position_embeddings=max(config.max_position_embeddings, max(self.lengths)))

    def batch_size(self, length):
        return self.tokens_per_step // length


# Paper scale: the lm1b_paper model's 6 layers, V = 32k and schedule (batch 128 x 256 tokens), each run stopped
# after 10 held-out evaluations (one every 10000 steps) without a lower perplexity, at n = 32 to 256.
PAPER = SequenceLengthScale("paper", dataclasses.replace(lm_experiments.PAPER, early_stopping_patience=10),
                            (32, 64, 128, 256), 128 * 256)
# The small converged scale of lm_figure1 (3 layers, d halved, a 4k vocabulary, warm-up then 1/sqrt(step),
# held-out perplexity every 400 steps with the trend-aware early stop, at most 40000 steps, seeds 1-3) at
# n = 16 to 128 with 2048 tokens per step: lm_figure1's 64 sequences of up to 32 tokens, here all real tokens.
SMALL_CONVERGED = SequenceLengthScale("small_converged", lm_experiments.SMALL_CONVERGED, (16, 32, 64, 128), 2048)
# For tests: the tiny converged scale (2 layers, d divided by 4) at n = 8 and 16, 128 tokens per step.
TINY = SequenceLengthScale("tiny", lm_experiments.TINY_CONVERGED, (8, 16), 128)
SCALES = {s.name: s for s in (PAPER, SMALL_CONVERGED, TINY)}


@dataclasses.dataclass(frozen=True)
class Row:
    """One model at one sequence length."""

    length: int
    model: lm_experiments.LmRow

    @property
    def name(self):
        return "n%d_%s" % (self.length, self.model.name)


def rows(scale):
    """Every (n, model), shortest n first."""
    return tuple(Row(length, model) for length in scale.lengths for model in MODELS)


def config_path(output_dir, model):
    return os.path.join(output_dir, "configs", "%s.json" % model.name)


def run_directory(output_dir, row, seed):
    return os.path.join(output_dir, "%s_seed%d" % (row.name, seed))


def build(scale, paths, output_dir, dtype="float32"):
    """One run_lm.py step per row and seed, every row at the first seed first; returns list of plan.Step."""
    base = scale.base
    vocab_file = paths.vocab_file
    steps = []
    for seed in scale.seeds:
        for row in rows(scale):
            directory = run_directory(output_dir, row, seed)
            flags = dict(paths.flags(), output_dir=directory, lm_config_file=config_path(output_dir, row.model),
                         do_train=True, do_eval=True, do_predict=True, random_seed=seed, dtype=dtype,
                         pack_lines=True, max_seq_length=row.length, train_batch_size=scale.batch_size(row.length),
                         num_train_steps=base.num_train_steps, num_warmup_steps=base.num_warmup_steps,
                         learning_rate=base.learning_rate, learning_rate_schedule=base.learning_rate_schedule,
                         save_checkpoints_steps=base.save_checkpoints_steps, eval_batch_size=32,
                         early_stopping_patience=base.early_stopping_patience)
            if vocab_file:
                flags["vocab_file"] = vocab_file
            else:
                flags["vocab_size"] = base.vocab_size
            kept = lm_experiments.KEPT_FILES + lm_experiments.EARLY_STOPPING_FILES + (
                () if vocab_file else lm_experiments.VOCABULARY_FILES)
            steps.append(Step(os.path.basename(directory), row.name, "lm", "run_lm.py", flags,
                              tuple(os.path.join(directory, name) for name in lm_experiments.RESULT_FILES),
                              seed=seed, distributed=True, kept=tuple(os.path.join(directory, name) for name in kept)))
            if not vocab_file:
                vocab_file = os.path.join(directory, vocabulary_lib.MODEL_FILE)
    return steps
