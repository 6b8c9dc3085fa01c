"""The benchmarks' tests run with the scripts' flags at their defaults."""

import pytest
from absl import flags


@pytest.fixture(autouse=True)
def _parsed_flags():
    # Under pytest nobody parses argv: the tests use the flags' defaults and set what they need.
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
