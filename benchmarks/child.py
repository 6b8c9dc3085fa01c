"""The child side of the turn-taking benchmarks, in the standard library and NumPy only: the protocol, the batches.

The TensorFlow contenders (the scripts run with --bench_child) and the PyTorch peers (torch_peers.py) import it,
so that all answer the parent (harness.take_turns) alike and read the same random batches in the same order: each
starts at batch 0 and cycles the NUM_BATCHES batches. Protocol: a child gets `--bench_child=<JSON of dict(contender,
dtype, spec)>`, builds its contender and prints "@@bench ready <parameters> <build seconds>"; then, per "run" line
on its stdin, one round and "@@bench round <seconds> <value>" (the round's mean loss, or what it reports); on "quit",
"@@bench memory <VmHWM kB>", its own peak memory. A build or round that raises an error its `classify`
knows prints "@@bench failed <OOM|failed> <reason>" instead; no round runs after it, the memory is still reported
on "quit". The parent ignores every other line.
"""

import contextlib
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


def peak_kb():
    """VmHWM of this process in kB, from /proc/self/status (ru_maxrss, also kB on Linux, without /proc)."""
    with contextlib.suppress(OSError), open("/proc/self/status", encoding="utf-8") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def request(argv=None):
    """(contender, dtype, spec) of this process's --bench_child argument (argv: sys.argv by default)."""
    for arg in (sys.argv if argv is None else argv)[1:]:
        if arg.startswith(FLAG):
            found = json.loads(arg[len(FLAG):])
            return found["contender"], found["dtype"], found["spec"]
    raise SystemExit("A benchmark child needs %s<JSON>." % FLAG)


def serve(build, classify=lambda error: None):
    """Builds a contender, build() -> (run_round, parameters), then answers the parent's "run" and "quit" lines on
    stdin (the protocol above). run_round() -> the round's value, a number, computed (fetched) inside: a round is
    timed from its call to its return. classify(error) -> (tag, reason) of an error to report as the contender's
    failure, or None for one to raise (a bug of the benchmark)."""
    def failed(error):
        if classify(error) is None:
            raise error
        tag, reason = classify(error)
        say("failed", tag, " ".join(str(reason).split())[:300] or "(no message)")

    start, run_round = time.perf_counter(), None
    try:
        run_round, parameters = build()
        say("ready", parameters, "%.1f" % (time.perf_counter() - start))
    except Exception as error:  # pylint: disable=broad-except
        failed(error)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        if line.strip() == "run" and run_round is not None:
            start = time.perf_counter()
            try:
                value = run_round()
                say("round", "%.6f" % (time.perf_counter() - start), "%.6g" % value)
            except Exception as error:  # pylint: disable=broad-except
                failed(error)
                run_round = None
    say("memory", peak_kb())


def lm_batches(seed, batch_size, seq_length, vocab_size):
    """dict feature name -> int32 [NUM_BATCHES, batch_size, ...] in run_lm.py's schema.

    Sequences hold 1/2 to all of seq_length real tokens, padding (0) after; target t is token t+1 (0 after the last
    real token); input_mask is 1 on the real tokens; num_chars (used only in evaluation) is 0.
    """
    rng = np.random.default_rng(seed)
    shape = (NUM_BATCHES, batch_size, seq_length)
    mask = (np.arange(seq_length) < rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))).astype(
        np.int32)
    ids = rng.integers(FIRST_PIECE, vocab_size, size=shape, dtype=np.int32) * mask
    return dict(input_ids=ids, target_ids=np.roll(ids, -1, axis=-1) * mask, input_mask=mask,
                num_chars=np.zeros(shape[:2], np.int32))


def pretraining_batches(seed, batch_size, seq_length, max_predictions_per_seq, vocab_size):
    """dict feature name -> array [NUM_BATCHES, batch_size, ...] in the pre-training schema.

    Real lengths from half to all of seq_length, two segments; distinct masked positions inside the real tokens,
    about a tenth of them padding (weight 0).
    """
    rng = np.random.default_rng(seed)
    shape, predictions = (NUM_BATCHES, batch_size, seq_length), (NUM_BATCHES, batch_size, max_predictions_per_seq)
    lengths = rng.integers(seq_length // 2, seq_length + 1, size=shape[:2] + (1,))
    positions = np.arange(seq_length)
    mask = (positions < lengths).astype(np.int32)
    masked_positions = np.sort(np.argsort(rng.random(shape) + (1 - mask), axis=-1)[..., :max_predictions_per_seq], -1)
    weights = (rng.random(predictions) < 0.9).astype(np.float32)
    return dict(input_ids=rng.integers(1, vocab_size, size=shape, dtype=np.int32) * mask, input_mask=mask,
                segment_ids=((positions >= lengths // 2) * mask).astype(np.int32),
                masked_lm_positions=(masked_positions * weights).astype(np.int32),
                masked_lm_ids=(rng.integers(1, vocab_size, predictions, dtype=np.int32) * weights).astype(np.int32),
                masked_lm_weights=weights, next_sentence_labels=rng.integers(0, 2, shape[:2] + (1,), dtype=np.int32))


def translation_batches(seed, vocab_size, batch_size, source_length, target_length):
    """int32 [NUM_BATCHES, batch, length] arrays in run_translation's schema (nmt/dataset.py).

    source_ids and target_ids: each sentence's real length is drawn from half to the full padded length, its last
    real token is eos, then padding (0); target_input_ids is bos + target_ids shifted right (0 under the padding).
    """
    rng = np.random.default_rng(seed)

    def side(length):
        lengths = rng.integers(max(length // 2, 1), length + 1, size=(NUM_BATCHES, batch_size, 1))
        positions = np.arange(length)
        ids = rng.integers(FIRST_PIECE, vocab_size, size=(NUM_BATCHES, batch_size, length), dtype=np.int32)
        mask = (positions < lengths).astype(np.int32)
        return np.where(positions == lengths - 1, EOS_ID, ids).astype(np.int32) * mask, mask

    source_ids, _ = side(source_length)
    target_ids, target_mask = side(target_length)
    target_input_ids = np.concatenate([np.full_like(target_ids[..., :1], BOS_ID), target_ids[..., :-1]], -1)
    return dict(source_ids=source_ids, target_input_ids=target_input_ids * target_mask, target_ids=target_ids)


def decode_sources(seed, vocab_size, batch_size, source_length):
    """The sentences every decoding contender translates: int32 [batch, source_length], as the batches' sources."""
    return translation_batches(seed, vocab_size, batch_size, source_length, 2)["source_ids"][0]
