"""Early stopping's state read back: which runs an older, patience-only rule stopped too soon."""

import random

from training import early_stopping, stopping


def _state(bleus, stopped=True):
    return dict(stopped=stopped, history=[dict(global_step=250 * (i + 1), bleu=b) for i, b in enumerate(bleus)])


def test_a_steady_rise_stopped_by_patience_alone_was_stopped_too_soon():
    rng = random.Random(0)
    # Rising ~5% of its level per evaluation with noise; one spike, then five evaluations below it.
    rising = [2.0 + 0.1 * i + rng.gauss(0, 0.03) for i in range(12)]
    rising[6] += 0.6
    assert stopping.patience_exhausted(rising, 5)  # patience alone stops it
    assert early_stopping.stopped_too_soon(_state(rising), "bleu", True, 5)
    # Perplexity is lower-is-better: the same curve negated is read the same way.
    falling = [dict(global_step=p["global_step"], perplexity=100 - p["bleu"]) for p in _state(rising)["history"]]
    assert early_stopping.stopped_too_soon(dict(stopped=True, history=falling), "perplexity", False, 5)


def test_a_flat_noisy_run_and_a_run_that_did_not_stop_were_not():
    rng = random.Random(1)
    flat = [20.0 + rng.gauss(0, 0.3) for _ in range(20)]
    flat[8] = 21.5  # its best, then patience runs out
    assert stopping.should_stop(flat, 5)
    assert not early_stopping.stopped_too_soon(_state(flat), "bleu", True, 5)
    assert not early_stopping.stopped_too_soon(_state([1.0, 2.0, 3.0], stopped=False), "bleu", True, 5)
    assert not early_stopping.stopped_too_soon({}, "bleu", True, 5)


def test_patience_without_training_is_named_in_a_warning(tmp_path, caplog):
    options = early_stopping.EarlyStoppingOptions(output_dir=str(tmp_path), do_eval=True, early_stopping_patience=3)
    with caplog.at_level("WARNING"):
        options.validate()
    assert ("--early_stopping_patience=3 has no effect without --do_train: it stops training, and this run only "
            "evaluates or predicts.") in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        early_stopping.EarlyStoppingOptions(output_dir=str(tmp_path), do_eval=True, do_train=True,
                                            early_stopping_patience=3).validate()
    assert "early_stopping_patience" not in caplog.text
