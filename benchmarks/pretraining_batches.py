"""The pre-training step benchmark's random batches, in NumPy only.

Shared by the TensorFlow contenders and the PyTorch one (which runs in an
interpreter that may have neither TensorFlow nor absl), so that all train on
the same batches.
"""

import numpy as np

NUM_BATCHES = 4  # Distinct random batches, cycled.


def make_batches(seed, batch_size, seq_length, max_predictions_per_seq, vocab_size):
    """dict feature name -> array [NUM_BATCHES, batch_size, ...] in the pre-training schema."""
    rng = np.random.default_rng(seed)
    shape = (NUM_BATCHES, batch_size, seq_length)
    predictions = (NUM_BATCHES, batch_size, max_predictions_per_seq)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    positions = np.arange(seq_length)[None, None, :]
    mask = (positions < lengths).astype(np.int32)
    # Distinct masked positions inside the real tokens, some of them padding.
    order = np.argsort(rng.random(shape) + (1 - mask), axis=-1)
    masked_positions = np.sort(order[..., :max_predictions_per_seq], axis=-1).astype(np.int32)
    weights = (rng.random(predictions) < 0.9).astype(np.float32)
    return dict(
        input_ids=rng.integers(1, vocab_size, size=shape, dtype=np.int32) * mask,
        input_mask=mask,
        segment_ids=((positions >= lengths // 2) * mask).astype(np.int32),
        masked_lm_positions=(masked_positions * weights).astype(np.int32),
        masked_lm_ids=(rng.integers(1, vocab_size, size=predictions, dtype=np.int32)
                       * weights).astype(np.int32),
        masked_lm_weights=weights,
        next_sentence_labels=rng.integers(0, 2, size=shape[:2] + (1,), dtype=np.int32),
    )
