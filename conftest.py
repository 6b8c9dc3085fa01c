"""Test-wide settings: quiet TensorFlow logs, CPU only."""
import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from training import onednn  # noqa: E402

onednn.enable()  # as the entry points do, before any test imports TensorFlow


def pytest_collection_modifyitems(items):
    """The tests marked `long` (a minute or more) first, the rest in their order: `make test`'s two workers take the
    first quarter of the tests in turns, so the long ones are shared out at the start and what is left at the end,
    while one worker waits for the other, is short."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_addoption(parser):
    parser.addoption("--no-eager", action="store_true", help="Run the tests marked `eager` with compiled "
                     "tf.functions too, as every other test runs.")


@pytest.fixture(autouse=True)
def _functions_run_eagerly_if_marked(request):
    """A test marked `eager` runs its tf.functions as plain Python (tf.config.run_functions_eagerly): the same
    operations, without tracing and optimising a graph first, which is most of a micro run's time. Session-scoped
    fixtures are built before this one, in graph mode, so shared runs are the compiled ones."""
    if request.node.get_closest_marker("eager") is None or request.config.getoption("--no-eager"):
        yield
        return
    import tensorflow as tf  # pylint: disable=import-outside-toplevel  # Only the marked tests need it here.

    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(False)
