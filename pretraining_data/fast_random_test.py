"""FastRandom draws exactly what random.Random draws."""

import random

from pretraining_data import fast_random


def test_uses_the_fast_version_on_this_interpreter():
    assert fast_random.FastRandom is not random.Random
    assert issubclass(fast_random.FastRandom, random.Random)


def test_shuffle_equals_the_standard_library_and_leaves_the_same_state():
    for seed in range(20):
        ours, theirs = fast_random.FastRandom(seed), random.Random(seed)
        for size in list(range(0, 70)) + [127, 128, 129, 1000, 5000]:
            x, y = list(range(size)), list(range(size))
            ours.shuffle(x)
            theirs.shuffle(y)
            assert x == y, (seed, size)
        assert ours.getstate() == theirs.getstate()


def test_randint_equals_the_standard_library_and_leaves_the_same_state():
    ours, theirs = fast_random.FastRandom(7), random.Random(7)
    for a, b in [(0, 0), (2, 2), (0, 1), (1, 5), (2, 125), (0, 30521), (-3, 3), (0, 2**40)] * 50:
        assert ours.randint(a, b) == theirs.randint(a, b)
        # Interleaved with other draws, as in the algorithm.
        assert ours.random() == theirs.random()
    assert ours.getstate() == theirs.getstate()
