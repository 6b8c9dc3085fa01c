"""Turns a shard of text into its serialized tf.Example records.

This runs in the worker processes (or in-process with --num_workers=0):
tokenization, instance creation, encoding and framing. It does not import
TensorFlow, so a spawned worker starts in a fraction of a second with a small
footprint.
"""

import ctypes
import dataclasses
import gc
import itertools
import os
import signal
import sys
import threading
import time

from pretraining_data import example_encoder
from pretraining_data import fast_random
from pretraining_data import instances
from pretraining_data import shard_tokenizer
from pretraining_data import shards
from pretraining_data import tfrecord_framing


@dataclasses.dataclass
class ShardRecords:
    """A shard's records, shuffled, as TFRecord frames in one buffer.

    One buffer pickles and travels from a worker as a single copy, and the
    main process writes it (or, for several output files, slices of it)
    without touching each record.

    Attributes:
      index: int, the shard's index.
      framed: bytes, the TFRecord frames (tfrecord_framing) of the serialized
        tf.train.Examples, in the order to write them.
      offsets: list[int], num_records + 1: frame i is
        framed[offsets[i]:offsets[i + 1]].
      input_bytes: int, the shard's Shard.input_bytes.
    """

    index: int
    framed: bytes
    offsets: list
    input_bytes: int

    @property
    def num_records(self):
        return len(self.offsets) - 1

    def record(self, i):
        """The serialized tf.train.Example of record i (bytes)."""
        return tfrecord_framing.unframe(self.framed[self.offsets[i]:self.offsets[i + 1]])


class ShardProcessor:
    """Everything a worker needs besides the shard; built once per process.

    Attributes:
      vocab: instances.InstanceVocab, tokens as the varints of their ids.
      options: instances.CreatePretrainingDataOptions.
      random_seed: int, the --random_seed.
    """

    def __init__(self, vocab, options, random_seed, fast_tokenizer=True):
        """Args: vocab: dict token -> id; options; random_seed: int; fast_tokenizer: see
        shard_tokenizer."""
        self._tokenize = shard_tokenizer.ShardTokenizer(vocab, options.do_lower_case,
                                                        fast_tokenizer)
        # Tokens are the varints of their ids; see example_encoder.
        self._varints = example_encoder.VarintTable(max(vocab.values()) + 1)
        self.vocab = instances.InstanceVocab.of_ids(vocab, self._varints.__getitem__)
        self.options = options
        self.random_seed = random_seed
        self._encoder = example_encoder.ExampleEncoder(options.max_seq_length,
                                                       options.max_predictions_per_seq)

    def __call__(self, text_shard):
        """Tokenizes one shard, then creates, serializes, frames and shuffles its instances.

        Each instance is serialized and framed as soon as it is made, and the
        frames are shuffled instead of the instances (the same permutation: a
        shuffle does not look at the items), because a record (~0.8 KB for
        128 tokens) is several times smaller than a TrainingInstance.

        Args:
          text_shard: shards.TextShard.

        Returns:
          ShardRecords.
        """
        shard = self._tokenize(text_shard)
        rng = fast_random.FastRandom(shards.shard_seed(self.random_seed, shard.index))
        encode_framed = self._encoder.encode_framed
        frames = [encode_framed(instance) for instance in instances.generate_instances(
            shard.documents(self._varints), self.vocab, self.options, rng)]
        rng.shuffle(frames)
        offsets = [0, *itertools.accumulate(map(len, frames))]
        return ShardRecords(shard.index, b"".join(frames), offsets, shard.input_bytes)


# The worker process's ShardProcessor, set by `init_worker`.
_processor = None

# From <linux/prctl.h>.
_PR_SET_PDEATHSIG = 1


def init_worker(parent_pid, *processor_args):
    """Worker initializer: exits with the main process; builds the process's ShardProcessor.

    Args:
      parent_pid: int, the main process's pid.
      *processor_args: ShardProcessor's arguments.
    """
    global _processor
    exit_with_parent(parent_pid)
    _processor = ShardProcessor(*processor_args)
    # Everything so far lives as long as the process: keep it out of the
    # cyclic garbage collector's full passes, which a shard's millions of
    # short-lived lists trigger (measured: ~6% of a worker's instructions).
    gc.freeze()


def exit_with_parent(parent_pid):
    """Makes this process exit soon after its parent `parent_pid` dies, even of SIGKILL.

    Otherwise a worker whose main process was killed finishes its shard for
    nobody, then waits for a next task forever: it holds the write end of its
    task queue too, so it never reads an end of file there.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        # The kernel sends SIGKILL when the parent *thread* that spawned us
        # exits: ProcessPoolExecutor spawns workers in submit(), from the
        # thread running the pipeline, which outlives the pool.
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent_pid:  # It died before prctl: no signal will come.
                os._exit(1)
            return
    threading.Thread(target=watch_parent, args=(parent_pid,), daemon=True).start()


def watch_parent(parent_pid, interval_seconds=0.5, exit_process=os._exit):
    """Where prctl is missing: polls the parent pid, which changes when the parent dies."""
    while os.getppid() == parent_pid:
        time.sleep(interval_seconds)
    exit_process(1)


def process_shard(text_shard):
    """Worker task: ShardRecords of `text_shard`, with the process's ShardProcessor."""
    return _processor(text_shard)
