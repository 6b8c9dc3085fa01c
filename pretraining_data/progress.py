"""Progress lines for long runs: documents/s, instances/s and an ETA.

A background thread logs a line every `interval_seconds` while the main
thread only updates counters, so a line comes even while a large shard keeps
the workers busy. The ETA extrapolates from the fraction of the input bytes
whose instances are written, so it holds for documents of any length.
"""

import threading
import time

from absl import logging

from outputs.progress import format_duration


class Progress:
    """Counts documents read and instances written; logs them periodically.

    Use as a context manager: the thread runs inside the `with` block, and a
    last line is logged at its end.

    Attributes:
      documents: int, documents read so far.
      instances: int, instances written so far.
      written_bytes: int, input bytes whose instances are all written.
    """

    def __init__(self, total_bytes, interval_seconds=10.0, clock=time.monotonic):
        """Args: total_bytes: int, the input size; interval_seconds: float;
        clock: function returning seconds (tests pass a fake one)."""
        self._total_bytes = max(total_bytes, 1)
        self._interval = interval_seconds
        self._clock = clock
        self._start = clock()
        self._stop = threading.Event()
        self._thread = None
        self.documents = 0
        self.instances = 0
        self.written_bytes = 0

    def line(self):
        """The progress line for the counters now (str)."""
        elapsed = max(self._clock() - self._start, 1e-9)
        fraction = min(self.written_bytes / self._total_bytes, 1.0)
        eta = format_duration(elapsed * (1 - fraction) / fraction) if fraction else "unknown"
        return ("%d documents read (%.0f documents/s), %d instances written (%.0f instances/s), "
                "%.1f%% of the input done, ETA %s" % (
                    self.documents, self.documents / elapsed, self.instances,
                    self.instances / elapsed, 100 * fraction, eta))

    def _log_periodically(self):
        while not self._stop.wait(self._interval):
            logging.info(self.line())

    def __enter__(self):
        self._thread = threading.Thread(target=self._log_periodically, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()
        logging.info(self.line())
