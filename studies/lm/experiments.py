"""The language-model experiments: Bhojanapalli et al. (2020) Figs. 1, 3a, 3b, 4 and Bogoychev (2021)'s LM study.

Their rows and scales, and their plans: one run_lm.py command per row.

Every row is a 6-layer `TransformerLm` (the lm1b_paper model, FFN 1024)
differing in d, h, d_p (None: the standard d/h), the FFN width, or the
groups kept frozen. The paper publishes these figures only as plots; each
experiment carries what its text states, printed beside our numbers.

"Matching the number of parameters" (paper 1): the fixed-head-size family
grows by adding heads; its standard-rule partner with the same h grows d
(Fig. 1) or the FFN (Fig. 3a) to the smallest value whose model has at least
as many parameters, never below the paper's starting point (d = 256, FFN
1024): with few heads the fixed model is the smaller one. Every scale matches
anew at its own layers and vocabulary (shrinking the paper's matched sizes
would leave the partners a few per cent apart).

Layout under --output_dir:
  configs/<row>.json     the row's lm_config.json at this scale
  <row>/                 run_lm.py: checkpoints, eval_results.txt, test_results.txt
  <row>_seed<s>/         the same, per seed, at a scale with several seeds

The first row learns the vocabulary (unless --vocab_file gives one) and the
others read it from its output_dir, so every row scores the same sub-words.
A row whose model and freezing equal an earlier row's (Fig. 1's and Fig. 3a's
h = 8 pair) is run once and read twice.
"""

import dataclasses
import os
from typing import Optional

from freezing import PARAMETERS_FILE
from lm.config import LmConfig
from lm.parameter_groups import count_parameters
from reproduction.plan import Step
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training.early_stopping import BEST_DIRECTORY, BEST_RESULTS_FILE, STATE_FILE
from training.run_record import RUN_FILE

NUM_LAYERS = 6
PAPER_VOCAB_SIZE = 32000
LM_SEED = 12345
RESULT_FILES = ("eval_results.txt", "test_results.txt")
# What a finished run leaves for the report and for later sessions (reproduction/archive.py): its results,
# its model and the parameter counts the report reads, its run record; the vocabulary where it learned one.
KEPT_FILES = RESULT_FILES + ("lm_config.json", PARAMETERS_FILE, RUN_FILE)
VOCABULARY_FILES = (vocabulary_lib.MODEL_FILE, vocabulary_lib.VOCAB_LIST_FILE)
# A run that stops early also keeps its learning curve (the early-stopping state) and its best evaluation.
EARLY_STOPPING_FILES = (os.path.join(BEST_DIRECTORY, STATE_FILE), os.path.join(BEST_DIRECTORY, BEST_RESULTS_FILE))
FREEZING_PRESETS = ("", "embeddings", "attention", "ffn", "embeddings,attention", "embeddings,ffn",
                    "attention,ffn")


@dataclasses.dataclass(frozen=True)
class LmRow:
    """One model of a figure: its shape (at paper scale), its family and the groups it freezes."""

    name: str
    hidden_size: int
    num_heads: int
    head_size: Optional[int] = None
    intermediate_size: int = 1024
    family: str = ""
    freeze: str = ""
    initializer: str = "bert"  # LmConfig.initializer: "marian" for the freezing study's rows
    num_seeds: Optional[int] = None  # runs with the scale's first this many seeds (None: all of them)
    matched_to: Optional["LmRow"] = None  # The fixed-head-size partner whose parameters this row matches,
    grow: str = ""  # by growing "hidden_size" or "intermediate_size",
    limit: Optional[int] = None  # up to this paper-scale size.

    @property
    def effective_head_size(self):
        return self.head_size or self.hidden_size // self.num_heads

    def label(self):
        return "d=%d h=%d d_p=%d I=%d" % (self.hidden_size, self.num_heads, self.effective_head_size,
                                          self.intermediate_size)


@dataclasses.dataclass(frozen=True)
class LmExperiment:
    """A figure: rows, what varies (x axis), and what the paper says of it."""

    name: str
    title: str
    rows: tuple
    varies: str  # "num_heads", "head_size" or "freeze"
    paper_statement: str


@dataclasses.dataclass(frozen=True)
class LmScale:
    """How big every row is and how long it trains (run_lm.py flags)."""

    name: str
    num_layers: int
    shrink: int  # d, d_p and the FFN are divided by it; h is kept.
    vocab_size: int
    max_seq_length: int
    train_batch_size: int
    num_train_steps: int
    num_warmup_steps: int
    learning_rate: float
    learning_rate_schedule: str
    save_checkpoints_steps: int
    preset: Optional[str] = None  # run_lm.py --preset, when the scale is one.
    seeds: tuple = (LM_SEED,)  # run_lm.py --random_seed of each row's runs: initialisation and data order.
    heads: Optional[tuple] = None  # Head counts kept by the figures that vary them (None: the paper's).
    minutes_per_run: Optional[float] = None  # Wall-clock minutes of one row and seed, measured on 2 CPU cores.
    minutes_measured_on: str = "lm_figure1; runs with more heads take longer"  # what minutes_per_run is the mean of
    minutes_side_by_side: int = 1  # runs going at once (one per core) while minutes_per_run was measured
    early_stopping_patience: int = 0  # run_lm.py --early_stopping_patience: 0 trains num_train_steps, scores the last
    parallel_runs: int = 1  # runs at once by default (--parallel_runs), at most one per core: measured
    # per family on 2 cores, docs/performance.md#runs-side-by-side

    def row_seeds(self, row):
        """The seeds a row runs with at this scale."""
        return self.seeds[:row.num_seeds] if row.num_seeds else self.seeds

    def rows(self, experiment):
        """The experiment's rows run at this scale."""
        if self.heads is None or experiment.varies != "num_heads":
            return experiment.rows
        return tuple(row for row in experiment.rows if row.num_heads in self.heads)

    def config(self, row):
        """The row's LmConfig at this scale (vocab_size from the vocabulary).

        A standard-rule row keeps d a multiple of h: d becomes the multiple of
        h nearest to d / shrink (at least h). A matched row below paper scale
        is matched again here, at this scale's layers and vocabulary.
        """
        if row.matched_to is not None and self.shrink != 1:
            def count(candidate):
                return count_parameters(self._shrunk(candidate).replace(vocab_size=self.vocab_size))["total"]

            row = matched_standard(row.matched_to, row.grow, row.limit, count)
        return self._shrunk(row)

    def _shrunk(self, row):
        hidden = row.hidden_size // self.shrink
        if row.head_size is None:
            hidden = row.num_heads * max(1, round(row.hidden_size / self.shrink / row.num_heads))
        return LmConfig(hidden_size=hidden, num_hidden_layers=self.num_layers,
                        num_attention_heads=row.num_heads,
                        head_size=row.head_size // self.shrink if row.head_size else None,
                        intermediate_size=row.intermediate_size // self.shrink, initializer=row.initializer,
                        max_position_embeddings=max(self.max_seq_length, 256 // self.shrink))


PAPER = LmScale(name="paper", num_layers=NUM_LAYERS, shrink=1, vocab_size=PAPER_VOCAB_SIZE, max_seq_length=256,
                train_batch_size=128, num_train_steps=250000, num_warmup_steps=10000, learning_rate=0.1,
                learning_rate_schedule="rsqrt", save_checkpoints_steps=10000, preset="lm1b_paper")
# 2 layers, d, d_p and the FFN divided by 4, a 2k vocabulary; a few minutes per figure on 2 cores.
TINY = LmScale(name="tiny", num_layers=2, shrink=4, vocab_size=2000, max_seq_length=64, train_batch_size=32,
               num_train_steps=120, num_warmup_steps=12, learning_rate=2e-3, learning_rate_schedule="linear",
               save_checkpoints_steps=1000)
# Real English text on 2 CPU cores, about an hour per figure: 3 layers; d, d_p and the FFN halved (d = 128,
# d_p = 16, about a book line's length in sub-words); sequences of up to 32 sub-words (a line of a book
# is ~20); a 4k vocabulary; three seeds per row. Fig. 1 and 3a keep 4, 16 and 32 heads: at 32 the standard
# rule's d/h is 4, well below n.
SMALL = LmScale(name="small", num_layers=3, shrink=2, vocab_size=4000, max_seq_length=32, train_batch_size=64,
                num_train_steps=1200, num_warmup_steps=120, learning_rate=2e-3, learning_rate_schedule="linear",
                save_checkpoints_steps=400, seeds=(1, 2, 3), heads=(4, 16, 32), minutes_per_run=5.25,
                parallel_runs=2)
# The small scale trained until held-out perplexity stops improving: the same text, models, parameter matching,
# batches, peak learning rate and warm-up, with a schedule that does not depend on a step count (warm-up, then
# 1/sqrt(step) decay: the translation study's); the --eval_file text scored every 400 steps (a little over a
# quarter of an epoch), stopping after 5 evaluations without a lower perplexity once the last 10 show no
# fall beyond their noise; at most 40000 steps (about 28 epochs), a cap meant to stay well past the stop.
SMALL_CONVERGED = dataclasses.replace(SMALL, name="small_converged", num_train_steps=40000,
                                      learning_rate_schedule="inverse_sqrt", early_stopping_patience=5,
                                      minutes_per_run=65.9, minutes_side_by_side=2, minutes_measured_on=(
                                          "lm_figure1's campaign (mean of 15 runs, bfloat16, AMD EPYC Zen 4); early "
                                          "stopping made single runs take 15 to 181 min"))
# The tiny scale's converged twin, for tests: held-out perplexity every 20 steps, patience 2, at most 200 steps.
TINY_CONVERGED = dataclasses.replace(TINY, name="tiny_converged", num_train_steps=200, save_checkpoints_steps=20,
                                     learning_rate_schedule="inverse_sqrt", early_stopping_patience=2)
SCALES = {s.name: s for s in (PAPER, TINY, SMALL, SMALL_CONVERGED, TINY_CONVERGED)}


def parameters(row, vocab_size=PAPER_VOCAB_SIZE):
    """The row's parameter count at paper scale."""
    return count_parameters(PAPER.config(row).replace(vocab_size=vocab_size))["total"]


def matched_standard(fixed, grow, limit=None, count=parameters):
    """The standard-rule row (d_p = d/h, same h) with at least `fixed`'s parameters.

    Args:
      grow: "hidden_size" (d in multiples of h from 256, up to `limit`) or
        "intermediate_size" (the FFN in multiples of 64 from 1024).
      count: row -> its parameters (default: at paper scale).

    Returns:
      The row (paper-scale sizes), remembering `fixed`, `grow` and `limit`.
    """
    target = count(fixed)
    h = fixed.num_heads
    if grow == "hidden_size":
        first = -(-256 // h) * h
        candidates = [LmRow("", d, h) for d in range(first, (limit or 4096) + 1, h)]
    else:
        candidates = [LmRow("", 256, h, intermediate_size=i) for i in range(1024, 1024 * 64, 64)]
    chosen = next((c for c in candidates if count(c) >= target), candidates[-1])
    return dataclasses.replace(chosen, matched_to=fixed, grow=grow, limit=limit)


def _figure1():
    rows = []
    for h in (4, 8, 16, 32, 70):
        fixed = LmRow("fixed_h%d" % h, 256, h, 32, family="fixed head size d_p=32")
        standard = matched_standard(fixed, "hidden_size", limit=512)
        rows += [fixed, dataclasses.replace(standard, name="standard_h%d" % h, family="standard d_p=d/h")]
    return LmExperiment(
        "lm_figure1", "Fig. 1: LM1B, fixed head size (d=256, d_p=32, more heads) vs standard d_p=d/h "
        "(d grown to match parameters)", tuple(rows), "num_heads",
        "Fixed-head-size models at d = 256 reach lower test perplexity than standard models up to "
        "d = 512 with as many parameters, and improve monotonically with more heads.")


def _figure3a():
    rows = []
    for h in (8, 16, 32, 64):
        fixed = LmRow("fixed_h%d" % h, 256, h, 32, family="fixed head size d_p=32")
        standard = matched_standard(fixed, "intermediate_size")
        rows += [fixed, dataclasses.replace(standard, name="standard_h%d" % h, family="standard d_p=d/h, wider FFN")]
    return LmExperiment(
        "lm_figure3a", "Fig. 3a: LM1B at d=256, standard heads with a wider FFN vs fixed head size d_p=32",
        tuple(rows), "num_heads",
        "At h = 8 both models coincide; beyond 16 heads the standard model gets worse while the "
        "fixed-head-size model keeps improving.")


def _figure3b():
    rows = tuple(LmRow("h%d_dp%d" % (h, dp), 256, h, dp, family="h=%d" % h) for h in (8, 16) for dp in (16, 32, 64))
    return LmExperiment(
        "lm_figure3b", "Fig. 3b: LM1B at d=256, head size varied at several head counts", rows, "head_size",
        "A larger head size lowers perplexity at every head count.")


def _figure4():
    rows = []
    for h in (4, 8, 16):
        rows.append(LmRow("standard_h%d" % h, 32 * h, h, family="standard d=32h (d_p=32)"))
        rows.append(LmRow("fixed_h%d" % h, 256, h, 32, family="fixed d=256, d_p=32"))
    return LmExperiment(
        "lm_figure4", "Fig. 4: LM1B, standard heads of size 32 by growing d=32h vs fixed d=256, d_p=32",
        tuple(rows), "num_heads",
        "Holding the head size at 32 by growing d also improves the standard model, at a larger "
        "embedding size; the fixed model gets there at d = 256.")


def _freezing_lm():
    # Initialised as the study's toolkit does; with several seeds, the unfrozen and the embeddings-frozen
    # rows (the paper's LM finding) run with each, the others with the first.
    rows = tuple(LmRow(preset.replace(",", "+") or "none", 256, 8, 32, family="lm1b_paper model", freeze=preset,
                       initializer="marian", num_seeds=None if preset in ("", "embeddings") else 1)
                 for preset in FREEZING_PRESETS)
    return LmExperiment(
        "freezing_lm", "Bogoychev (2021), language model: parameter groups frozen at their random "
        "initialisation (the lm1b_paper model)", rows, "freeze",
        "In language modelling trainable embeddings matter most for perplexity (unlike translation, "
        "where a frozen random FFN costs least).")


EXPERIMENTS = {e.name: e for e in (_figure1(), _figure3a(), _figure3b(), _figure4(), _freezing_lm())}


@dataclasses.dataclass(frozen=True)
class LmDataPaths:
    """run_lm.py's data flags: text files (or a TFDS directory) and an optional SentencePiece model."""

    train_file: str = None
    eval_file: str = None
    test_file: str = None
    tfds_data_dir: str = None
    vocab_file: str = None

    def flags(self):
        return {k: v for k, v in dataclasses.asdict(self).items() if v}


def config_path(output_dir, row):
    return os.path.join(output_dir, "configs", "%s.json" % row.name)


def _directory(output_dir, row_name, scale, seed):
    if len(scale.seeds) == 1:
        return os.path.join(output_dir, row_name)
    return os.path.join(output_dir, "%s_seed%d" % (row_name, seed))


def run_directories(experiment, scale, output_dir):
    """{row name: (the output_dir of its run per seed, ...)}; identical rows share the first one's."""
    seen, directories = {}, {}
    for row in scale.rows(experiment):
        config = scale.config(row)
        key = (config.replace(head_size=config.attention_head_size).to_json_string(), row.freeze)
        first = seen.setdefault(key, row.name)
        directories[row.name] = tuple(_directory(output_dir, first, scale, seed) for seed in scale.row_seeds(row))
    return directories


def build(experiment, scale, paths, output_dir, dtype="float32"):
    """One run_lm.py step per distinct row and seed; returns list of plan.Step.

    Every row at the first seed, then every row at the next: a run cut short
    has whole figures at its first seeds.
    """
    directories = run_directories(experiment, scale, output_dir)
    vocab_file = paths.vocab_file
    steps = []
    for seed, row in ((seed, row) for seed in scale.seeds for row in scale.rows(experiment)):
        if seed not in scale.row_seeds(row):
            continue
        directory = _directory(output_dir, row.name, scale, seed)
        if directory not in directories[row.name]:
            continue  # Read from the identical row's run.
        flags = dict(paths.flags(), output_dir=directory, lm_config_file=config_path(output_dir, row),
                     do_train=True, do_eval=True, do_predict=True, random_seed=seed, dtype=dtype)
        if vocab_file:
            flags["vocab_file"] = vocab_file
        else:
            flags["vocab_size"] = scale.vocab_size
        if scale.preset:
            flags["preset"] = scale.preset
        else:
            flags.update(max_seq_length=scale.max_seq_length, train_batch_size=scale.train_batch_size,
                         num_train_steps=scale.num_train_steps, num_warmup_steps=scale.num_warmup_steps,
                         learning_rate=scale.learning_rate, learning_rate_schedule=scale.learning_rate_schedule)
        flags.update(save_checkpoints_steps=scale.save_checkpoints_steps, eval_batch_size=32)
        if scale.early_stopping_patience:
            flags["early_stopping_patience"] = scale.early_stopping_patience
        if row.freeze:
            flags["freeze"] = row.freeze
        kept = (KEPT_FILES + (EARLY_STOPPING_FILES if scale.early_stopping_patience else ())
                + (() if vocab_file else VOCABULARY_FILES))
        steps.append(Step(os.path.basename(directory), row.name, "lm", "run_lm.py", flags,
                          tuple(os.path.join(directory, name) for name in RESULT_FILES),
                          seed=seed if len(scale.seeds) > 1 else None, distributed=True,
                          kept=tuple(os.path.join(directory, name) for name in kept)))
        if not vocab_file:
            vocab_file = os.path.join(directory, vocabulary_lib.MODEL_FILE)
    return steps
