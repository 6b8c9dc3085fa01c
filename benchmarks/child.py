"""The child side of the turn-taking benchmarks, in the standard library and NumPy only: the protocol, the batches.

The TensorFlow contenders (the benchmark scripts run with --bench_child) and the PyTorch peers
(torch_peers.py, in an interpreter that may have neither TensorFlow nor absl) import it, so that all
answer the parent (harness.py) alike and all read the same random batches, in the same order: every
contender starts at batch 0 and cycles the NUM_BATCHES batches.

A child gets its request as `--bench_child=<JSON of dict(contender, dtype, spec)>`, builds the
contender and prints "@@bench ready <parameters> <build seconds>"; then it runs one round per "run"
line on its stdin, printing "@@bench round <seconds> <value>" (the round's mean loss, or what the
contender reports), and on "quit" prints "@@bench memory <VmHWM kB> <VmRSS kB>": its own peak memory.
A child that cannot build its contender, or whose round raises an error its `classify` knows, prints
"@@bench failed <OOM|failed> <reason>" instead, runs no more rounds, and still reports its memory on
"quit" (the peak it had reached). The parent ignores every other line.
"""

import json
import resource
import sys
import time

import numpy as np

TAG = "@@bench "
FLAG = "--bench_child="
NUM_BATCHES = 4  # distinct random batches, cycled
FIRST_PIECE = 4  # below: the special pieces (padding 0, unknown, bos, eos), never drawn
PAD_ID, BOS_ID, EOS_ID = 0, 2, 3  # the learned SentencePiece vocabulary's (tokenization/sentencepiece_vocabulary.py)


def say(*fields):
    print(TAG + " ".join(str(field) for field in fields), flush=True)


def memory_kb():
    """(VmHWM, VmRSS) of this process in kB from /proc/self/status (ru_maxrss, in kB on Linux, without /proc)."""
    values = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    values[key] = int(rest.split()[0])
    except OSError:
        pass
    return values.get("VmHWM", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss), values.get("VmRSS", 0)


def request(argv=None):
    """(contender, dtype, spec) of this process's --bench_child argument."""
    for arg in (sys.argv if argv is None else argv)[1:]:
        if arg.startswith(FLAG):
            found = json.loads(arg[len(FLAG):])
            return found["contender"], found["dtype"], found["spec"]
    raise SystemExit("A benchmark child needs %s<JSON>." % FLAG)


def _failed(classify, error):
    found = classify(error)
    if found is None:
        raise error
    say("failed", found[0], " ".join(str(found[1]).split())[:300] or "(no message)")


def serve(build, classify=lambda error: None):
    """Builds a contender, then answers the parent's "run" and "quit" lines on stdin (the protocol above).

    Args:
      build: () -> (run_round, parameters); run_round() -> the round's value, a number. Each round is
        timed from its call to its return: the value must be computed (fetched) inside it.
      classify: error -> (tag, reason) of an error to report as the contender's failure, or None for
        one to raise (a bug of the benchmark).
    """
    start = time.perf_counter()
    run_round = None
    try:
        run_round, parameters = build()
    except Exception as error:  # pylint: disable=broad-except
        _failed(classify, error)
    else:
        say("ready", parameters, "%.1f" % (time.perf_counter() - start))
    for line in sys.stdin:
        command = line.strip()
        if command == "run" and run_round is not None:
            start = time.perf_counter()
            try:
                value = run_round()
            except Exception as error:  # pylint: disable=broad-except
                _failed(classify, error)
                run_round = None
                continue
            say("round", "%.6f" % (time.perf_counter() - start), "%.6g" % value)
        elif command == "quit":
            break
    say("memory", *memory_kb())


def lm_batches(seed, batch_size, seq_length, vocab_size):
    """dict feature name -> int32 [NUM_BATCHES, batch_size, ...] in run_lm.py's schema.

    Sequences hold 1/2 to all of seq_length real tokens, padding (0) after; target t is token t+1 (0
    after the last real token); input_mask is 1 on the real tokens; num_chars (used only in
    evaluation) is 0.
    """
    rng = np.random.default_rng(seed)
    shape = (NUM_BATCHES, batch_size, seq_length)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    mask = (np.arange(seq_length)[None, None, :] < lengths).astype(np.int32)
    ids = rng.integers(FIRST_PIECE, vocab_size, size=shape, dtype=np.int32) * mask
    return dict(input_ids=ids, target_ids=np.roll(ids, -1, axis=-1) * mask, input_mask=mask,
                num_chars=np.zeros(shape[:2], np.int32))


def pretraining_batches(seed, batch_size, seq_length, max_predictions_per_seq, vocab_size):
    """dict feature name -> array [NUM_BATCHES, batch_size, ...] in the pre-training schema.

    Real lengths from half to all of seq_length, two segments; distinct masked positions inside the
    real tokens, about a tenth of them padding (weight 0).
    """
    rng = np.random.default_rng(seed)
    shape = (NUM_BATCHES, batch_size, seq_length)
    predictions = (NUM_BATCHES, batch_size, max_predictions_per_seq)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    positions = np.arange(seq_length)[None, None, :]
    mask = (positions < lengths).astype(np.int32)
    order = np.argsort(rng.random(shape) + (1 - mask), axis=-1)
    masked_positions = np.sort(order[..., :max_predictions_per_seq], axis=-1).astype(np.int32)
    weights = (rng.random(predictions) < 0.9).astype(np.float32)
    return dict(
        input_ids=rng.integers(1, vocab_size, size=shape, dtype=np.int32) * mask,
        input_mask=mask,
        segment_ids=((positions >= lengths // 2) * mask).astype(np.int32),
        masked_lm_positions=(masked_positions * weights).astype(np.int32),
        masked_lm_ids=(rng.integers(1, vocab_size, size=predictions, dtype=np.int32) * weights).astype(np.int32),
        masked_lm_weights=weights,
        next_sentence_labels=rng.integers(0, 2, size=shape[:2] + (1,), dtype=np.int32),
    )


def translation_batches(seed, vocab_size, batch_size, source_length, target_length):
    """int32 [NUM_BATCHES, batch, length] arrays in run_translation's schema (nmt/dataset.py).

    source_ids and target_ids: each sentence's real length is drawn from half to the full padded
    length, its last real token is eos, then padding (0); target_input_ids is bos + target_ids
    shifted right (0 under the padding).
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
    return translation_batches(seed, vocab_size, batch_size, source_length, 2)["source_ids"][0]
