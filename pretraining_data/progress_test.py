"""Progress lines: rates and ETA, periodically and at the end."""

import logging
import time

from pretraining_data import progress


class _FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_rates_and_eta():
    clock = _FakeClock()
    tracker = progress.Progress(total_bytes=1000, clock=clock)
    assert tracker.line().endswith("0.0% of the input done, ETA unknown")
    clock.now += 20
    tracker.documents, tracker.instances, tracker.written_bytes = 200, 2000, 250
    # 25% of the input in 20 s leaves 60 s.
    assert tracker.line() == ("200 documents read (10 documents/s), 2000 instances written "
                              "(100 instances/s), 25.0% of the input done, ETA 0:01:00")


def test_logs_periodically_and_at_the_end(caplog):
    caplog.set_level(logging.INFO)
    with progress.Progress(total_bytes=10, interval_seconds=0.01) as tracker:
        tracker.written_bytes = 5
        time.sleep(0.1)
    lines = [r.getMessage() for r in caplog.records if "instances written" in r.getMessage()]
    assert len(lines) >= 2  # At least one periodic line, and the last.
    assert "50.0% of the input done" in lines[-1]
