"""`FastRandom`: a random number generator that draws exactly what `random.Random` draws, faster.

The original algorithm makes ~125 random draws per instance, most of them in
`rng.shuffle` and `rng.randint`, which are pure Python in the standard
library. Two faster versions make the same draws from the same Mersenne
Twister state, so instances are bit for bit the original's:

  _mersenne_twister.MersenneTwister  compiled (Cython, built by `make setup`):
                                     ~10x faster shuffles
  _FastRandom                        pure Python: `random.Random` with shuffle
                                     and randint inlined down to getrandbits,
                                     ~2x faster shuffles

`FastRandom` is the first of them that reproduces `random.Random` on this
interpreter (an import-time self-check), else `random.Random` itself.
`COMPILED` says whether the compiled one is in use.
"""

import random

try:
    from pretraining_data import _mersenne_twister
except ImportError:  # Not built: `make setup` builds it.
    _mersenne_twister = None


# _BITS[i] = (i + 1).bit_length(): a list lookup is cheaper than the call.
_BITS = [(i + 1).bit_length() for i in range(1 << 12)]


class _FastRandom(random.Random):
    """random.Random with `shuffle` and `randint` inlined down to getrandbits."""

    def shuffle(self, x):
        """In-place Fisher-Yates from the end, as `random.Random.shuffle`."""
        if len(x) > len(_BITS):
            return super().shuffle(x)  # Beyond the table: a shard's records, once per shard.
        getrandbits = self.getrandbits
        bits = _BITS
        for i in range(len(x) - 1, 0, -1):
            k = bits[i]
            j = getrandbits(k)
            while j > i:  # Rejection sampling: uniform over [0, i].
                j = getrandbits(k)
            x[i], x[j] = x[j], x[i]

    def randint(self, a, b):
        """A random int in [a, b], as `random.Random.randint`."""
        n = b - a + 1
        if n <= 0:
            raise ValueError("empty range in randint(%r, %r)" % (a, b))
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return a + r


def draws_like_standard_library(rng_class):
    """True if rng_class(seed) draws what random.Random(seed) draws.

    Checks the calls the algorithm makes (random, randint, shuffle), of the
    sizes it makes them, interleaved, and the generator state afterwards.
    """
    for seed in (2024, 12345 + (1 << 64)):
        ours, theirs = rng_class(seed), random.Random(seed)
        for size in (0, 1, 2, 3, 5, 17, 64, 65, 130, 5000):
            x, y = list(range(size)), list(range(size))
            ours.shuffle(x)
            theirs.shuffle(y)
            if x != y or ours.random() != theirs.random():
                return False
            for a, b in ((0, 0), (0, 1), (2, 125), (1, size + 1), (0, 30521), (0, 1 << 40)):
                if ours.randint(a, b) != theirs.randint(a, b):
                    return False
        if ours.getstate() != theirs.getstate():
            return False
    return True


def _choose():
    candidates = [_FastRandom]
    if _mersenne_twister is not None:
        candidates.insert(0, _mersenne_twister.MersenneTwister)
    for rng_class in candidates:
        if draws_like_standard_library(rng_class):
            return rng_class
    return random.Random


FastRandom = _choose()
COMPILED = _mersenne_twister is not None and FastRandom is _mersenne_twister.MersenneTwister
