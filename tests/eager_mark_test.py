"""The `eager` mark (conftest.py): a marked test's tf.functions run eagerly, unless --no-eager; others compile."""

import pytest
import tensorflow as tf


@tf.function
def _inside_a_function_executing_eagerly():
    return tf.executing_eagerly()


@pytest.mark.eager
def test_a_marked_test_runs_its_functions_eagerly_unless_told_not_to(request):
    assert bool(_inside_a_function_executing_eagerly()) is not request.config.getoption("--no-eager")


def test_an_unmarked_test_compiles_its_functions():
    assert not bool(_inside_a_function_executing_eagerly())
    assert not tf.config.functions_run_eagerly()


@pytest.fixture(scope="session")
def _a_shared_run(eager_functions):
    with eager_functions():
        return bool(_inside_a_function_executing_eagerly())


@pytest.mark.eager
def test_a_shared_run_built_with_eager_functions_runs_as_the_marked_tests(request, _a_shared_run):
    assert _a_shared_run is not request.config.getoption("--no-eager")


def test_eager_functions_leave_the_next_test_compiled(_a_shared_run):
    assert not bool(_inside_a_function_executing_eagerly())
    assert not tf.config.functions_run_eagerly()
