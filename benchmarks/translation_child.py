"""What the translation benchmark's children share, in the standard library and NumPy only.

The TensorFlow contenders (nmt_benchmark.py) and the PyTorch peer
(torch_translation_step.py, which runs in an interpreter that may have neither
TensorFlow nor absl) import this module, so that all train on the same random
batches and decode the same sentences, and all answer the parent alike.

The protocol is child_protocol.py's, with one more line: a child that cannot
build its contender, or whose round raises an error its `classify` knows,
prints "@@bench failed <OOM|failed> <reason>" instead of "ready" or "round",
runs no more rounds, and still reports its memory on "quit" (the peak it had
reached when it failed).
"""

import sys
import time

import numpy as np

from benchmarks import child_protocol

# The learned SentencePiece vocabulary's ids (tokenization/sentencepiece_vocabulary.py); 0 is padding.
PAD_ID, BOS_ID, EOS_ID = 0, 2, 3
FIRST_PIECE = 4  # random pieces are drawn from [4, vocab_size): no special id inside a sentence
NUM_BATCHES = 4  # distinct training batches, cycled


def make_batches(seed, vocab_size, batch_size, source_length, target_length):
    """NUM_BATCHES random batches in run_translation's schema (nmt/dataset.py): int32 [NUM_BATCHES, batch, length].

    source_ids and target_ids: each sentence's real length is drawn from half
    to the full padded length, its last real token is eos, then padding (0);
    target_input_ids is bos + target_ids shifted right (0 under the padding).
    """
    rng = np.random.default_rng(seed)

    def side(length):
        lengths = rng.integers(max(length // 2, 1), length + 1, size=(NUM_BATCHES, batch_size, 1))
        positions = np.arange(length)[None, None, :]
        ids = rng.integers(FIRST_PIECE, vocab_size, size=(NUM_BATCHES, batch_size, length), dtype=np.int32)
        ids = np.where(positions == lengths - 1, EOS_ID, ids).astype(np.int32)
        mask = (positions < lengths).astype(np.int32)
        return ids * mask, mask

    source_ids, _ = side(source_length)
    target_ids, target_mask = side(target_length)
    target_input_ids = np.concatenate([np.full_like(target_ids[..., :1], BOS_ID), target_ids[..., :-1]], -1)
    return dict(source_ids=source_ids, target_input_ids=target_input_ids * target_mask, target_ids=target_ids)


def decode_sources(seed, vocab_size, batch_size, source_length):
    """The sentences every decoding contender translates: int32 [batch, source_length], as the batches' sources."""
    return make_batches(seed, vocab_size, batch_size, source_length, 2)["source_ids"][0]


def target_tokens_per_batch(batches):
    """Real target tokens (padding excluded) of a batch, on average over the NUM_BATCHES."""
    return float((batches["target_ids"] != PAD_ID).sum()) / NUM_BATCHES


def _one_line(reason):
    return " ".join(str(reason).split())[:300] or "(no message)"


def serve(build, classify):
    """Builds a contender, then answers the parent's "run" and "quit" lines on stdin.

    Args:
      build: () -> (run_round, parameters); run_round() -> a number to report
        (the round's mean loss, or the decoded length).
      classify: error -> (tag, reason) for an error to report as a failure,
        or None for one to raise (a bug of the benchmark).
    """
    start = time.perf_counter()
    run_round = None
    try:
        run_round, parameters = build()
    except Exception as error:  # pylint: disable=broad-except
        found = classify(error)
        if found is None:
            raise
        child_protocol.say("failed", found[0], _one_line(found[1]))
    else:
        child_protocol.say("ready", parameters, "%.1f" % (time.perf_counter() - start), child_protocol.memory_kb()[1])
    for line in sys.stdin:
        command = line.strip()
        if command == "run" and run_round is not None:
            try:
                seconds, value = child_protocol.timed(run_round)
            except Exception as error:  # pylint: disable=broad-except
                found = classify(error)
                if found is None:
                    raise
                child_protocol.say("failed", found[0], _one_line(found[1]))
                run_round = None
                continue
            child_protocol.say("round", "%.6f" % seconds, "%.6g" % value)
        elif command == "quit":
            break
    child_protocol.say("memory", *child_protocol.memory_kb())
