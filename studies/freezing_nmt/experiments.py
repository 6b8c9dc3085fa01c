"""The translation experiment `freezing_nmt`: Bogoychev (2021)'s frozen random components, and its plan.

For each model preset: the baseline, the three one-frozen and the three
two-frozen settings (embeddings, attention, ffn left at their seeded random
initialisation). Then the paper's "smaller frozen component" rows on the
first preset: the frozen FFN at half and a quarter of its width, and frozen
attention at half its head size, while the trainable groups keep their size.

Layout under --output_dir:
  configs/<row>.json   the row's nmt_config.json at this scale
  <row>/               run_translation.py: checkpoints, best/, eval_results.txt,
                       test_results.txt, translations.*.txt
  <row>_seed<s>/       the same, per seed, at a scale with several seeds
The first row learns the joint SentencePiece vocabulary (unless --spm_model
gives one); the others read it from its folder. At a scale with several
seeds, the baseline and the one-frozen rows run with each, the others with
the first; every row at the first seed comes before any second-seed run.
"""

import dataclasses
import os
from typing import Optional

from freezing import PARAMETERS_FILE
from nmt import presets as nmt_presets
from nmt.parameter_groups import count_parameters
from training.early_stopping import BEST_DIRECTORY, STATE_FILE
from reproduction.plan import Step
from tokenization import sentencepiece_vocabulary as vocabulary_lib
from training.run_record import RUN_FILE

FREEZING_PRESETS = ("", "embeddings", "attention", "ffn", "embeddings,attention", "embeddings,ffn",
                    "attention,ffn")
NMT_SEED = 12345
PAPER_VOCAB_SIZE = 32000
RESULT_FILES = ("eval_results.txt", "test_results.txt")
# What a finished run leaves for the report and for later sessions (reproduction/archive.py): its results, the
# test set's translations (its BLEU and chrF can be recomputed from them), its model and the parameter counts
# the report reads, its run record, its dev curve (the early-stopping state); the vocabulary where it learned one.
KEPT_FILES = RESULT_FILES + ("translations.test.txt", "nmt_config.json", PARAMETERS_FILE, RUN_FILE,
                              os.path.join(BEST_DIRECTORY, STATE_FILE))
VOCABULARY_FILES = (vocabulary_lib.MODEL_FILE, vocabulary_lib.VOCAB_LIST_FILE)
PAPER_STATEMENT = (
    "Freezing any one component at its random initialisation costs little: 1.1–2% BLEU (the author's "
    "blog: 4–7%), and convergence takes slightly more epochs; a frozen random FFN (about half of "
    "transformer-big's parameters) is the best of the one-frozen settings. With two frozen, training "
    "attention alone is best, the FFN alone is surprisingly good, and embeddings alone fail to learn; "
    "with 6% of the parameters trainable the model keeps 72% of the baseline's BLEU. Bigger models "
    "cope better. Shrinking a frozen component hurts even when the trainable ones are untouched.")


@dataclasses.dataclass(frozen=True)
class NmtRow:
    """One run: a model preset, the groups frozen, and the frozen component's shrink factors."""

    name: str
    preset: str
    freeze: str = ""
    ffn_divisor: int = 1  # the FFN width is divided by it (the "smaller frozen component" rows)
    head_size_divisor: int = 1  # likewise the head size d_p

    @property
    def family(self):
        return self.preset


@dataclasses.dataclass(frozen=True)
class NmtScale:
    """How big every row is and how long it trains (run_translation.py flags)."""

    name: str
    presets: tuple
    shrink: int  # d, d_p and the FFN are divided by it; heads are kept
    num_encoder_layers: Optional[int]  # None: the preset's
    num_decoder_layers: Optional[int]
    vocab_size: int
    train_batch_size: int
    num_train_steps: int
    num_warmup_steps: int
    learning_rate: Optional[float]  # None: the preset's
    save_checkpoints_steps: int
    early_stopping_patience: int
    beam_size: int
    max_seq_length: int
    max_decode_length: int  # tokens generated per translation: an untrained model may never stop
    seeds: tuple = (NMT_SEED,)  # run_translation.py --random_seed: initialisation, frozen values, data order
    minutes_per_run: Optional[float] = None  # wall-clock minutes of one run, measured on 2 CPU cores
    parallel_runs: int = 1  # runs at once by default (--parallel_runs), at most one per core: measured
    # per family on 2 cores, docs/performance.md#runs-side-by-side
    freezings: tuple = FREEZING_PRESETS  # the settings run on every preset
    shrunk_rows: bool = True  # the "smaller frozen component" rows too

    def row_seeds(self, row):
        """The seeds a row runs with: every seed for the baseline and the one-frozen rows, else the first."""
        if row.ffn_divisor == 1 and row.head_size_divisor == 1 and "," not in row.freeze:
            return self.seeds
        return self.seeds[:1]

    def config(self, row):
        """The row's NmtConfig at this scale (vocab_size from the vocabulary)."""
        base = nmt_presets.MODELS[row.preset]
        head_size = base.attention_head_size // self.shrink // row.head_size_divisor
        changes = dict(hidden_size=base.hidden_size // self.shrink, head_size=head_size,
                       intermediate_size=base.intermediate_size // self.shrink // row.ffn_divisor)
        if self.num_encoder_layers:
            changes.update(num_encoder_layers=self.num_encoder_layers, num_decoder_layers=self.num_decoder_layers)
        return base.replace(**changes)


# Until convergence, as the study trains: at most 300k steps, stopping after 10 dev evaluations
# without a better BLEU (the toolkit's default patience), one every 5k steps.
PAPER = NmtScale(name="paper", presets=("transformer-big", "transformer-base", "transformer-tiny"), shrink=1,
                 num_encoder_layers=None, num_decoder_layers=None, vocab_size=PAPER_VOCAB_SIZE,
                 train_batch_size=128, num_train_steps=300000, num_warmup_steps=16000, learning_rate=None,
                 save_checkpoints_steps=5000, early_stopping_patience=10, beam_size=8, max_seq_length=128,
                 max_decode_length=256)
# transformer-tiny with d, d_p and the FFN divided by 4 and 2 + 2 layers, on the synthetic pair.
TINY = NmtScale(name="tiny", presets=("transformer-tiny",), shrink=4, num_encoder_layers=2, num_decoder_layers=2,
                vocab_size=200, train_batch_size=128, num_train_steps=400, num_warmup_steps=50, learning_rate=5e-3,
                save_checkpoints_steps=200, early_stopping_patience=0, beam_size=2, max_seq_length=64,
                max_decode_length=64)
# German->English Multi30k (29k caption pairs of ~12 words) on 2 CPU cores: transformer-tiny's shape (a deep
# encoder over a shallow decoder, 8 heads) at 3 + 1 layers with d, d_p and the FFN divided by 4 (d = 64,
# d_p = 8, FFN 384); a 4k joint vocabulary; batches of 128 pairs (227 steps an epoch); the preset's schedule
# at a peak of 2e-3 after 150 steps. Trained to convergence as the study trains: a dev BLEU every 250 steps
# (1.1 epochs), stopping after 5 evaluations without a better one and no rise beyond noise in the last 10
# (training/stopping.py; the study's toolkit counts patience in validations, 10 by default; 5 here, about
# 5.5 epochs, to fit the machine), at most 20000 steps (88 epochs, a cap meant to stay well past where early
# stopping ends a run). Three seeds for the baseline and the one-frozen rows.
SMALL = NmtScale(name="small", presets=("transformer-tiny",), shrink=4, num_encoder_layers=3, num_decoder_layers=1,
                 vocab_size=4000, train_batch_size=128, num_train_steps=20000, num_warmup_steps=150,
                 learning_rate=2e-3, save_checkpoints_steps=250, early_stopping_patience=5, beam_size=4,
                 max_seq_length=64, max_decode_length=48, seeds=(1, 2, 3), parallel_runs=2)
# The width ladder around the small scale (d = 64): the same data, 3 + 1 layers, 8 heads (d_p = d/8), FFN 6d,
# vocabulary, schedule, stopping rule and seeds, at d = 32 (d_p 4, FFN 192) and d = 128 (d_p 16, FFN 768): the
# baseline and the one-frozen rows, and at d = 128 also embeddings and FFN frozen (attention alone trainable).
WIDTH_FREEZINGS = ("", "embeddings", "attention", "ffn")
SMALL_D32 = dataclasses.replace(SMALL, name="small_d32", shrink=8, freezings=WIDTH_FREEZINGS, shrunk_rows=False)
SMALL_D128 = dataclasses.replace(SMALL, name="small_d128", shrink=2, freezings=WIDTH_FREEZINGS + ("embeddings,ffn",),
                                 shrunk_rows=False)
SCALES = {s.name: s for s in (PAPER, TINY, SMALL, SMALL_D32, SMALL_D128)}


def rows(scale):
    """The experiment's rows at a scale: per preset its settings (all seven but at the width ladder's scales), then
    the shrunk frozen components (where the scale runs them)."""
    found = [NmtRow("%s/%s" % (preset, freeze.replace(",", "+") or "none"), preset, freeze)
             for preset in scale.presets for freeze in scale.freezings]
    if not scale.shrunk_rows:
        return found
    first = scale.presets[0]
    found += [NmtRow("%s/ffn_width_half" % first, first, "ffn", ffn_divisor=2),
              NmtRow("%s/ffn_width_quarter" % first, first, "ffn", ffn_divisor=4),
              NmtRow("%s/attention_head_size_half" % first, first, "attention", head_size_divisor=2)]
    return found


def trainable_share(config, freeze):
    """The share of parameters left trainable when `freeze`'s whole groups are frozen."""
    counts = count_parameters(config)
    frozen = sum(counts[group] for group in freeze.split(",") if group)
    return 1.0 - frozen / counts["total"]


def directory_of(output_dir, row, scale=None, seed=None):
    """The run's folder: <row>, or <row>_seed<s> at a scale with several seeds."""
    name = row.name.replace("/", "_")
    if scale is not None and len(scale.seeds) > 1:
        name += "_seed%d" % seed
    return os.path.join(output_dir, name)


def runs(scale):
    """(row, seed) of every run, in plan order: every row at the first seed, then the further seeds."""
    found = []
    for index in range(len(scale.seeds)):
        found += [(row, scale.row_seeds(row)[index]) for row in rows(scale) if index < len(scale.row_seeds(row))]
    return found


def config_path(output_dir, row):
    return os.path.join(output_dir, "configs", "%s.json" % row.name.replace("/", "_"))


def build(scale, data_flags, spm_model, output_dir, dtype="float32"):
    """One run_translation.py step per run (`runs`), in order; returns list of plan.Step.

    Args:
      data_flags: {flag: path} of the data (train_tsv/dev_tsv/test_tsv or the
        *_src/*_tgt pairs) and the language codes.
      spm_model: a SentencePiece model, or None: the first row learns one.
    """
    steps = []
    several = len(scale.seeds) > 1
    for row, seed in runs(scale):
        directory = directory_of(output_dir, row, scale, seed)
        flags = dict(data_flags, output_dir=directory, preset=row.preset,
                     model_config_file=config_path(output_dir, row), do_train=True, do_eval=True,
                     do_predict=True, random_seed=seed, dtype=dtype, train_batch_size=scale.train_batch_size,
                     num_train_steps=scale.num_train_steps, save_checkpoints_steps=scale.save_checkpoints_steps,
                     iterations_per_loop=min(1000, scale.save_checkpoints_steps),
                     early_stopping_patience=scale.early_stopping_patience, beam_size=scale.beam_size,
                     max_seq_length=scale.max_seq_length, max_decode_length=scale.max_decode_length,
                     eval_batch_size=64)
        if scale.learning_rate is not None:
            flags.update(learning_rate=scale.learning_rate, num_warmup_steps=scale.num_warmup_steps)
        if spm_model:
            flags["spm_model"] = spm_model
        else:
            flags["vocab_size"] = scale.vocab_size
        if row.freeze:
            flags["freeze"] = row.freeze
        kept = KEPT_FILES + (() if spm_model else VOCABULARY_FILES)
        steps.append(Step("%s_seed%d" % (row.name, seed) if several else row.name, row.name, "nmt",
                          "run_translation.py", flags, tuple(os.path.join(directory, name) for name in RESULT_FILES),
                          seed=seed if several else None, distributed=True,
                          kept=tuple(os.path.join(directory, name) for name in kept)))
        if not spm_model:
            spm_model = os.path.join(directory, vocabulary_lib.MODEL_FILE)
    return steps
