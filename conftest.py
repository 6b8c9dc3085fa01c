"""Test-wide settings: quiet TensorFlow logs, CPU only."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from training import onednn  # noqa: E402

onednn.enable()  # as the entry points do, before any test imports TensorFlow


def pytest_collection_modifyitems(items):
    """The tests marked `long` (a minute or more) first, the rest in their order: `make test`'s two workers take the
    first quarter of the tests in turns, so the long ones are shared out at the start and what is left at the end,
    while one worker waits for the other, is short."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
