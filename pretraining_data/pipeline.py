"""create_pretraining_data end to end: text files -> TFRecord files of instances.

  read (streaming) and group into shards (main process)
  -> tokenize, make instances and records per shard (worker processes)
  -> write in shard order (main process)

The main process keeps at most num_workers + 1 shards in flight and writes
results in shard order, so memory is bounded by a few shards and the output
is identical for any --num_workers. Nothing here imports TensorFlow (for
local paths): it would cost each process ~5 s and ~0.5 GB. Workers are
forked (spawned if TensorFlow is loaded), each builds its state once, and
each exits when the main process dies. The output files appear only once complete
(outputs.writing): an interrupted run leaves none, nor a partial one.
"""

import collections
import contextlib
from concurrent import futures
import dataclasses
import functools
import multiprocessing
import os
import sys
import time

from absl import logging

import outputs
from file_system.input_files import expand_input_files
from pretraining_data import documents as documents_lib
from pretraining_data import example_encoder
from pretraining_data import fast_random
from pretraining_data import instances
from pretraining_data import progress as progress_lib
from pretraining_data import shard_tokenizer
from pretraining_data import shard_worker
from pretraining_data import shards
from pretraining_data import writer as writer_lib


@dataclasses.dataclass
class Summary:
    """What a run did."""

    input_files: list
    output_files: list
    num_documents: int
    num_shards: int
    num_instances: int
    skipped_lines: dict
    seconds: float


class WorkerDiedError(RuntimeError):
    """A worker process died (killed for lack of memory, say)."""


def worker_start_method():
    """How workers start: "fork" (~0.3 s sooner each) unless TensorFlow is loaded here.

    Forking copies only the forking thread: safe while this process has no
    other threads, as here unless TensorFlow (gs:// paths, or a caller such as
    a test) started its own; then workers are spawned.
    """
    if "tensorflow" in sys.modules or "fork" not in multiprocessing.get_all_start_methods():
        return "spawn"
    return "fork"


def missing_compiled_modules():
    """The Cython modules (pretraining_data/*.pyx) that the workers cannot use."""
    usable = {"_mersenne_twister.pyx": fast_random.COMPILED,
              "_instance_kernels.pyx": fast_random.COMPILED and instances.COMPILED,
              "_example_encoding.pyx": example_encoder.COMPILED}
    return ["pretraining_data/" + name for name, ok in usable.items() if not ok]


@contextlib.contextmanager
def _shard_processing(processor, processor_args, num_workers):
    """Yields a function: iterable of TextShards -> iterator of ShardRecords, in order.

    With workers, they are started at once (each building its ShardProcessor
    from processor_args), so that they boot while the main process reads the
    first shards. num_workers = 0 processes shards in-process with `processor`.
    """
    if num_workers == 0:
        yield lambda shard_stream: map(processor, shard_stream)
        return
    # ProcessPoolExecutor, not multiprocessing.Pool: when a worker dies (say,
    # killed for lack of memory) it raises BrokenProcessPool where Pool hangs.
    context = multiprocessing.get_context(worker_start_method())
    with futures.ProcessPoolExecutor(num_workers, context, shard_worker.init_worker,
                                     (os.getpid(), *processor_args)) as executor:
        for _ in range(num_workers):
            executor.submit(int)  # A no-op task: each starts a worker now.
        yield functools.partial(_results_in_order, executor, num_workers)


def _results_in_order(executor, num_workers, shard_stream):
    """Yields the ShardRecords of shard_stream in order, computed by executor.

    At most num_workers + 1 shards are submitted and not yet returned: every
    worker is busy and one task waits, while the main process tokenizes the
    next shard and writes finished ones; so memory stays bounded.
    """
    pending = collections.deque()
    try:
        for shard in shard_stream:
            pending.append(executor.submit(shard_worker.process_shard, shard))
            if len(pending) > num_workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except futures.process.BrokenProcessPool:
        raise WorkerDiedError(
            "A worker process died, maybe killed for lack of memory: try a smaller "
            "--documents_per_shard or fewer --num_workers.") from None
    finally:
        for future in pending:
            future.cancel()


def run(options, fast_tokenizer=True, progress_interval_seconds=10.0):
    """Creates the pre-training data described by `options`.

    Args:
      options: instances.CreatePretrainingDataOptions.
      fast_tokenizer: False to tokenize every line with the original
        FullTokenizer (same ids, ~30x slower; see shard_tokenizer).
      progress_interval_seconds: float, how often to log the progress.

    Returns:
      Summary.

    Raises:
      ValueError: with a message for the user (bad flag, missing or
        unreadable file, empty input, ...).
      WorkerDiedError: a worker process died.
    """
    started = time.monotonic()
    options.validate()
    if progress_interval_seconds <= 0:
        raise ValueError("The progress interval must be positive, got %r."
                         % progress_interval_seconds)
    missing = missing_compiled_modules()
    if missing:
        logging.warning("Not built, or not agreeing with the Python code here: %s; run `make "
                        "setup`. The output is the same, made ~2x slower.", ", ".join(missing))
    # Cheap checks first: a bad path fails before anything slow starts.
    input_files = expand_input_files(options.input_file)
    output_files = writer_lib.parse_output_files(options.output_file)
    reader = documents_lib.DocumentReader(input_files)
    vocab = shard_tokenizer.load_vocab(options.vocab_file)
    processor_args = (vocab, options, options.random_seed, fast_tokenizer)
    processor = shard_worker.ShardProcessor(*processor_args)  # Vocab errors here, not in a worker.
    inv_vocab = {token_id: token for token, token_id in vocab.items()}
    max_characters = shards.characters_per_shard(reader.total_bytes)

    with _shard_processing(processor, processor_args, options.num_workers) as process_shards:
        logging.info("*** Reading from %d input files (%d bytes) ***", len(input_files),
                     reader.total_bytes)
        # Every output file is written beside its path and renamed there
        # only after its last record; on any exception it is removed.
        with writer_lib.RoundRobinWriter(output_files, inv_vocab) as writer:
            logging.info("*** Writing to output files ***")
            for path in output_files:
                logging.info("  %s", path)
            logging.info("  (each as <file>%s until complete)", outputs.INCOMPLETE_SUFFIX)
            progress = progress_lib.Progress(reader.total_bytes, progress_interval_seconds)

            def shard_stream():
                groups = shards.group_documents(reader, options.documents_per_shard,
                                                max_characters)
                for index, group in enumerate(groups):
                    progress.documents = reader.num_documents
                    yield shards.TextShard(index, group, reader.bytes_read)

            num_shards = 0
            with progress:
                for result in process_shards(shard_stream()):
                    writer.write_shard(result)
                    num_shards += 1
                    progress.instances = writer.total_written
                    progress.written_bytes = result.input_bytes
            num_skipped = sum(reader.skipped_lines.values())
            for path, count in sorted(reader.skipped_lines.items()):
                logging.warning("Skipped %d lines that are not valid UTF-8 in %s", count, path)
            if not writer.total_written:
                raise ValueError(
                    "The input holds no text: no line of %s tokenizes to anything%s."
                    % (", ".join(input_files),
                       " (lines skipped as not UTF-8: %d)" % num_skipped if num_skipped else ""))

    summary = Summary(input_files, output_files, reader.num_documents, num_shards,
                      writer.total_written, dict(reader.skipped_lines),
                      time.monotonic() - started)
    logging.info("Done: %d documents in %d shards, %d instances in %.1f s (%.0f instances/s)",
                 summary.num_documents, summary.num_shards, summary.num_instances,
                 summary.seconds, summary.num_instances / max(summary.seconds, 1e-9))
    return summary
