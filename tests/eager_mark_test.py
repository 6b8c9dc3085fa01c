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
