"""The language-model benchmark's random batches, in NumPy only.

Shared by the TensorFlow contenders of lm_benchmark.py and the PyTorch one
(torch_lm_step.py, which runs in an interpreter that may have neither
TensorFlow nor absl), so that all train on the same batches, in the same
order: every contender starts at batch 0 and takes one per step.
"""

import numpy as np

NUM_BATCHES = 4  # Distinct random batches, cycled.
FIRST_ID = 4  # Below: the special pieces (padding 0, unknown, bos, eos), never drawn.


def make_batches(seed, batch_size, seq_length, vocab_size):
    """dict feature name -> array [NUM_BATCHES, batch_size, ...] in run_lm.py's schema.

    Sequences hold 1/2 to all of seq_length real tokens, padding (0) after;
    target t is token t+1 (0 after the last real token); input_mask is 1 on
    the real tokens; num_chars (used only in evaluation) is 0.
    """
    rng = np.random.default_rng(seed)
    shape = (NUM_BATCHES, batch_size, seq_length)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    mask = (np.arange(seq_length)[None, None, :] < lengths).astype(np.int32)
    ids = rng.integers(FIRST_ID, vocab_size, size=shape, dtype=np.int32) * mask
    return dict(input_ids=ids, target_ids=np.roll(ids, -1, axis=-1) * mask, input_mask=mask,
                num_chars=np.zeros(shape[:2], np.int32))


def real_tokens_per_step(batches):
    """The mean number of real (not padding) tokens per batch."""
    return float(batches["input_mask"].sum()) / NUM_BATCHES
