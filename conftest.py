"""Test-wide settings: quiet TensorFlow logs, CPU only."""
import contextlib
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


@contextlib.contextmanager
def _functions_run_eagerly(config):
    """tf.functions run as plain Python inside (tf.config.run_functions_eagerly), unless --no-eager."""
    if config.getoption("--no-eager"):
        yield
        return
    import tensorflow as tf  # pylint: disable=import-outside-toplevel  # Only the eager tests need it here.

    before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        yield
    finally:
        tf.config.run_functions_eagerly(before)


@pytest.fixture(autouse=True)
def _functions_run_eagerly_if_marked(request):
    """A test marked `eager` runs its tf.functions as plain Python: the same operations, without tracing and
    optimising a graph first, which is most of a micro run's time. Session-scoped fixtures are built before this
    one, in graph mode, so shared runs are the compiled ones, unless they ask for `eager_functions`."""
    with _functions_run_eagerly(request.config) if request.node.get_closest_marker("eager") else \
            contextlib.nullcontext():
        yield


@pytest.fixture(scope="session")
def eager_functions(request):
    """For a session-scoped run that only tests marked `eager` compare with, bit for bit: `with eager_functions():`
    runs it as they run (eagerly, or compiled with --no-eager), since a compiled graph may round differently."""
    return lambda: _functions_run_eagerly(request.config)
