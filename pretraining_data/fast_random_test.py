"""FastRandom, compiled and pure Python, draws exactly what random.Random draws."""

import random

import pytest

from pretraining_data import fast_random

try:
    from pretraining_data import _mersenne_twister
    IMPLEMENTATIONS = [_mersenne_twister.MersenneTwister, fast_random._FastRandom]
except ImportError:  # Reported by test_the_compiled_version_is_built_and_in_use.
    IMPLEMENTATIONS = [fast_random._FastRandom]

# Seeds as the pipeline makes them (shards.shard_seed), and a few others.
SEEDS = [0, 1, 7, 12345, 12345 + (1 << 64), 12345 + 11 * (1 << 64), 2**200 + 3]


def test_the_compiled_version_is_built_and_in_use():
    # `make setup` builds it; without it create_pretraining_data is ~2x slower.
    assert fast_random.COMPILED, "pretraining_data/_mersenne_twister is not built: run make setup"
    assert fast_random.FastRandom is _mersenne_twister.MersenneTwister


@pytest.mark.parametrize("rng_class", IMPLEMENTATIONS)
def test_shuffle_equals_the_standard_library_and_leaves_the_same_state(rng_class):
    for seed in SEEDS:
        ours, theirs = rng_class(seed), random.Random(seed)
        for size in list(range(0, 70)) + [127, 128, 129, 1000, 4096, 4097, 30000]:
            x, y = list(range(size)), list(range(size))
            ours.shuffle(x)
            theirs.shuffle(y)
            assert x == y, (seed, size)
        assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("rng_class", IMPLEMENTATIONS)
def test_randint_and_random_equal_the_standard_library(rng_class):
    for seed in SEEDS:
        ours, theirs = rng_class(seed), random.Random(seed)
        bounds = [(0, 0), (2, 2), (0, 1), (1, 5), (2, 125), (0, 30521), (-3, 3),
                  (0, 2**31), (0, 2**32 - 2), (0, 2**32 - 1), (0, 2**32), (5, 2**40), (0, 2**70)]
        for a, b in bounds * 20:
            assert ours.randint(a, b) == theirs.randint(a, b), (seed, a, b)
            # Interleaved with other draws, as in the algorithm.
            assert ours.random() == theirs.random()
        assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("rng_class", IMPLEMENTATIONS)
def test_getrandbits_equals_the_standard_library(rng_class):
    ours, theirs = rng_class(3), random.Random(3)
    for k in [0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 1000] * 5:
        assert ours.getrandbits(k) == theirs.getrandbits(k), k
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("rng_class", IMPLEMENTATIONS)
def test_state_round_trips_with_the_standard_library(rng_class):
    theirs = random.Random(99)
    theirs.random()
    ours = rng_class(0)
    ours.setstate(theirs.getstate())
    assert [ours.random() for _ in range(700)] == [theirs.random() for _ in range(700)]
    theirs.setstate(ours.getstate())
    assert ours.randint(0, 10**6) == theirs.randint(0, 10**6)


@pytest.mark.parametrize("rng_class", IMPLEMENTATIONS)
def test_errors_as_the_standard_library(rng_class):
    with pytest.raises(ValueError, match="empty range"):
        rng_class(1).randint(3, 2)
    with pytest.raises(ValueError):
        rng_class(1).getrandbits(-1)


def test_the_compiled_version_takes_lists_only_and_checks_states():
    if fast_random._mersenne_twister is None:
        pytest.skip("not built; see test_the_compiled_version_is_built_and_in_use")
    rng = _mersenne_twister.MersenneTwister(1)
    with pytest.raises(TypeError, match="shuffle takes a list, got tuple"):
        rng.shuffle((1, 2, 3))
    with pytest.raises(ValueError, match="random.Random state"):
        rng.setstate((2, (0,) * 625, None))


def test_the_self_check_rejects_a_generator_that_draws_otherwise():
    class OffByOne(fast_random._FastRandom):
        def randint(self, a, b):
            return min(b, super().randint(a, b) + 1)

    assert fast_random.draws_like_standard_library(fast_random._FastRandom)
    assert not fast_random.draws_like_standard_library(OffByOne)
