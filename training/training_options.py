"""The options every training entry point shares, declared once (options/declaration.py).

`TrainingOptions` holds the original training flags and ours that the shared
loop (training/trainer.py) reads; `StepsOptions` and `ScheduleOptions` a run
measured in steps (run_pretraining.py, run_lm.py, run_translation.py);
`ModesOptions` the do_train/do_eval/do_predict trio of the language and
translation models; `Schedule` is what an entry point derives from its own
flags (steps, or epochs over its examples).
"""

import dataclasses
from typing import Optional

from freezing import FreezingOptions
from options import Options, option
from training.distribution import DistributionOptions
from training.inference import InferenceOptions
from training.optimization import LEARNING_RATE_SCHEDULES, OPTIMIZERS

DTYPES = ("float32", "bfloat16", "float16")


@dataclasses.dataclass(kw_only=True)
class InitCheckpointOptions(Options):
    """The checkpoint a run starts from (export_model.py exports it)."""

    init_checkpoint: Optional[str] = option(
        None, "Initial checkpoint (usually from a pre-trained BERT model).")


@dataclasses.dataclass(kw_only=True)
class VocabOptions(Options):
    """The vocabulary of text inputs and how it is cased."""

    vocab_file: str = option(help="The vocabulary file that the BERT model was trained on.", path="file")
    do_lower_case: bool = option(True, "Lower case the input; True for uncased models.")


@dataclasses.dataclass(kw_only=True)
class DtypeOptions(Options):
    """The dtype a model computes in: while it trains, and in the SavedModel exported from it."""

    dtype: str = option(
        "float32", "Compute dtype: bfloat16 or float16 are mixed precision with float32 "
        "variables (float16 with dynamic loss scaling).", choices=DTYPES, new=True)


@dataclasses.dataclass(kw_only=True)
class TrainingOptions(DtypeOptions, DistributionOptions, FreezingOptions, InitCheckpointOptions):
    """The shared training flags: the original's, then ours (with TPU, distribution and freezing)."""

    output_dir: str = option(help="The output directory where checkpoints and results are written.",
                             path="output_dir")
    do_train: bool = option(False, "Whether to run training.")
    train_batch_size: int = option(32, "Total batch size for training.", minimum=1)
    learning_rate: float = option(5e-5, "The initial learning rate for the optimizer.", minimum=0.0)
    save_checkpoints_steps: int = option(1000, "How often to save the model checkpoint.", minimum=1)
    iterations_per_loop: int = option(
        1000, "How many steps to make in each estimator call (steps run in one compiled loop).",
        minimum=1)
    random_seed: int = option(
        12345, "Seed for initialisation, data order and dropout.", new=True)
    optimizer: str = option(
        "adamw", "adamw: the original AdamWeightDecay; lamb: Model Garden's LAMB with the "
        "original's clipping and weight-decay exclusions; adam: Adam (0.9, 0.98, 1e-9) with bias "
        "correction, as the NMT toolkits use it.", choices=OPTIMIZERS, new=True)
    log_steps: int = option(
        100, "Log the losses (and write them to TensorBoard) every this many steps, as the "
        "Estimator did; a compiled loop also ends there.", minimum=1, new=True)
    jit_compile: bool = option(
        False, "Compile each training step with XLA, as TPUs run it: one program instead of hundreds of "
        "small kernels (faster for small models on CPUs; see docs/performance.md). Results may differ from "
        "a run without it in the last bits.", new=True)

    def validate(self):
        super().validate()
        if self.reinit and not self.init_checkpoint:
            raise ValueError(
                "--reinit=%s re-draws groups loaded from --init_checkpoint, and there is none: "
                "without it every variable starts from its seeded initial value already." % self.reinit)


@dataclasses.dataclass(kw_only=True)
class EvaluationOptions(Options):
    """The original's eval flags of run_pretraining.py and run_classifier.py."""

    do_eval: bool = option(False, "Whether to run eval on the dev set.")
    eval_batch_size: int = option(8, "Total batch size for eval.", minimum=1)


@dataclasses.dataclass(kw_only=True)
class PredictOptions(Options):
    """The original's --do_predict: what a prediction writes is said by the flag of its input."""

    do_predict: bool = option(False, "Whether to run the model on the test or predict set.")


@dataclasses.dataclass(kw_only=True)
class ModesOptions(TrainingOptions, EvaluationOptions, PredictOptions):
    """Training, evaluation and prediction, at least one of them (run_lm.py, run_translation.py)."""

    def validate(self):
        if not (self.do_train or self.do_eval or self.do_predict):
            raise ValueError("At least one of `--do_train`, `--do_eval` or `--do_predict` must be True.")
        super().validate()


@dataclasses.dataclass(kw_only=True)
class StepsOptions(Options):
    """A run of a fixed number of steps, with a warm-up (the original run_pretraining.py's flags)."""

    num_train_steps: int = option(100000, "Number of training steps.", minimum=1)
    num_warmup_steps: int = option(10000, "Number of warmup steps.", minimum=0)


@dataclasses.dataclass(kw_only=True)
class ScheduleOptions(Options):
    """The learning-rate schedule of the language and translation models (BERT's tasks keep the original's)."""

    learning_rate_schedule: str = option(
        "linear", "linear: BERT's warm-up then linear decay to 0; rsqrt: tensor2tensor's warm-up then "
        "1/sqrt(step) decay, scaled by 1/sqrt(hidden_size); inverse_sqrt: warm-up to --learning_rate then "
        "sqrt(warm-up/step) decay (the translation presets').", choices=LEARNING_RATE_SCHEDULES, new=True)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The steps of a run, derived by the entry point from its flags.

    learning_rate_schedule: "linear" (the original BERT's), "rsqrt"
    (tensor2tensor's, training/optimization.py), which scales by
    1/sqrt(hidden_size), or "inverse_sqrt" (the NMT toolkits').
    adam_beta_2: beta_2 of --optimizer=adam (the translation presets set it).
    """

    num_train_steps: int
    num_warmup_steps: int
    learning_rate_schedule: str = "linear"
    hidden_size: Optional[int] = None
    adam_beta_2: float = 0.98


@dataclasses.dataclass(kw_only=True)
class FineTuningOptions(TrainingOptions, VocabOptions, InferenceOptions, PredictOptions):
    """The original fine-tuning flags that run_classifier.py and run_squad.py share (and --inference_xla)."""

    predict_batch_size: int = option(8, "Total batch size for predictions.", minimum=1)
    num_train_epochs: float = option(3.0, "Total number of training epochs.")
    warmup_proportion: float = option(
        0.1, "Proportion of training with linear learning rate warm-up, e.g. 0.1 = 10%.")

    def validate(self):
        super().validate()
        if not 0 <= self.warmup_proportion <= 1:
            raise ValueError("--warmup_proportion=%s must be in [0, 1]." % self.warmup_proportion)

    def schedule(self, num_examples):
        """As the original: int(examples / batch * epochs) steps, int(steps * proportion) warm-up.

        Raises:
          ValueError: when that is no step at all.
        """
        steps = int(num_examples / self.train_batch_size * self.num_train_epochs)
        if steps < 1:
            raise ValueError(
                "%d examples, --train_batch_size=%d and --num_train_epochs=%s give no training "
                "step." % (num_examples, self.train_batch_size, self.num_train_epochs))
        return Schedule(steps, int(steps * self.warmup_proportion))
