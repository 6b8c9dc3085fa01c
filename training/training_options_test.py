"""The shared training options: cross-flag checks and the fine-tuning schedule."""

import pytest

from training.training_options import FineTuningOptions, Schedule, TrainingOptions


def test_reinit_without_init_checkpoint_is_an_error():
    with pytest.raises(ValueError) as error:
        TrainingOptions(output_dir="out", reinit="ffn").validate()
    assert str(error.value) == (
        "--reinit=ffn re-draws groups loaded from --init_checkpoint, and there is none: without it "
        "every variable starts from its seeded initial value already.")
    TrainingOptions(output_dir="out", reinit="ffn", init_checkpoint="bert/model.ckpt").validate()


def test_log_steps_defaults_to_the_estimators_100_and_must_be_positive():
    assert TrainingOptions(output_dir="out").log_steps == 100
    with pytest.raises(ValueError, match=r"^--log_steps=0 must be"):
        TrainingOptions(output_dir="out", log_steps=0).validate()


def test_fine_tuning_schedule_is_the_originals(tmp_path):
    options = FineTuningOptions(output_dir="out", vocab_file="v", train_batch_size=32,
                                num_train_epochs=3.0, warmup_proportion=0.1)
    # int(3668 / 32 * 3) = 343 steps, int(34.3) = 34 warm-up: MRPC with the README's flags.
    assert options.schedule(3668) == Schedule(343, 34)
    with pytest.raises(ValueError, match="give no training step"):
        options.schedule(10)
    with pytest.raises(ValueError, match=r"--warmup_proportion=1.5 must be in \[0, 1\]"):
        FineTuningOptions(output_dir=str(tmp_path / "out"), vocab_file=__file__, warmup_proportion=1.5).validate()
