# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, binding=False
"""CPython's Mersenne Twister with `random`, `randint` and `shuffle` in C.

`random.Random` generates in C, but its `randint` and `shuffle` are Python
code around the generator (`randrange`, `_randbelow`): the ~125-item shuffle
that the original algorithm makes per instance costs ~22 us there, ~12 us in
`fast_random._FastRandom` and ~2 us here. The numbers are the standard
library's, draw for draw:
  * the MT19937 state comes from `random.Random(seed).getstate()`, so the
    seeding is CPython's own;
  * `random()` combines two 32-bit outputs as `random_random` in
    Modules/_randommodule.c;
  * `randint` and `shuffle` follow Lib/random.py's
    `_randbelow_with_getrandbits`: draw getrandbits(k), the top k bits of one
    output (k = n.bit_length() <= 32), until the value is below n.
`fast_random` checks this against `random.Random` at import and uses this
class only if they agree. Built by `make setup` (cythonize).
"""

import random as _random

from cpython.object cimport PyObject
from libc.stdint cimport uint32_t, uint64_t


cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item

# _N (the state's 32-bit words) is in the .pxd.
cdef enum:
    _M = 397

cdef uint32_t _UPPER_MASK = 0x80000000
cdef uint32_t _LOWER_MASK = 0x7fffffff
cdef uint32_t _MATRIX_A = 0x9908b0df


cdef class MersenneTwister:
    """A subset of `random.Random`: seed, random, randint, shuffle, getrandbits,
    getstate and setstate, drawing exactly the same numbers.

    Compiled code (`_instance_kernels`) draws through the C methods of the
    .pxd: `_next` (genrand_uint32), `_below(n)` (randint(0, n - 1) for
    n <= 2**32) and `_random` (random()).
    """

    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, a=None):
        """Seeds as `random.Random(a)` (the standard library does the seeding)."""
        self.setstate(_random.Random(a).getstate())

    def getstate(self):
        """The state, in `random.Random.getstate()`'s format."""
        return (3, tuple([self._state[i] for i in range(_N)]) + (self._index,), None)

    def setstate(self, state):
        """Takes a `random.Random.getstate()` (Gaussian pair: none pending)."""
        version, internal, gauss_next = state
        if version != 3 or len(internal) != _N + 1 or gauss_next is not None:
            raise ValueError("Not a random.Random state this class can take.")
        cdef int i
        for i in range(_N):
            self._state[i] = internal[i]
        index = internal[_N]
        if not 0 <= index <= _N:
            raise ValueError("Invalid state index %r." % index)
        self._index = index

    cdef void _twist(self) noexcept:
        """The state update of genrand_uint32 in Modules/_randommodule.c."""
        cdef uint32_t y
        cdef int k
        cdef uint32_t* mt = self._state
        for k in range(_N - _M):
            y = (mt[k] & _UPPER_MASK) | (mt[k + 1] & _LOWER_MASK)
            mt[k] = mt[k + _M] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        for k in range(_N - _M, _N - 1):
            y = (mt[k] & _UPPER_MASK) | (mt[k + 1] & _LOWER_MASK)
            mt[k] = mt[k + (_M - _N)] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        y = (mt[_N - 1] & _UPPER_MASK) | (mt[0] & _LOWER_MASK)
        mt[_N - 1] = mt[_M - 1] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        self._index = 0

    def random(self):
        """A float in [0, 1), as `random.Random.random`."""
        return self._random()

    def getrandbits(self, int k):
        """An int of k random bits, k >= 0, as `random.Random.getrandbits`."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if k <= 32:
            return self._next() >> (32 - k) if k else 0
        # Whole 32-bit words from the least significant; the last one's top bits.
        value, shift = 0, 0
        while k > 0:
            word = self._next()
            if k < 32:
                word >>= 32 - k
            value |= word << shift
            shift += 32
            k -= 32
        return value

    def randint(self, a, b):
        """A random int in [a, b], as `random.Random.randint`."""
        n = b - a + 1
        if n <= 0:
            raise ValueError("empty range in randint(%r, %r)" % (a, b))
        if n <= 0xFFFFFFFF:
            return a + <object>self._below(n)
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return a + r

    def shuffle(self, x):
        """Shuffles the list x in place, as `random.Random.shuffle`."""
        if type(x) is not list:
            raise TypeError("shuffle takes a list, got %s" % type(x).__name__)
        cdef list items = x
        if len(items) > 0xFFFFFFFF:  # _below draws below 2**32 at most.
            raise ValueError("shuffle takes fewer than 2**32 items, got %d" % len(items))
        # A swap moves references without changing their counts: swap the
        # list's item pointers directly.
        cdef PyObject** item = (<PyListObject*>items).ob_item
        cdef PyObject* swapped
        cdef Py_ssize_t i, j
        cdef int k = 64  # (i + 1).bit_length(), kept as i goes down.
        cdef uint64_t r
        for i in range(len(items) - 1, 0, -1):
            while (<uint64_t>(i + 1) >> (k - 1)) == 0:
                k -= 1
            if k > 32:  # i + 1 == 2**32.
                j = <Py_ssize_t>self._below(i + 1)
            else:  # self._below(i + 1), without finding k again.
                r = self._next() >> (32 - k)
                while r > <uint64_t>i:
                    r = self._next() >> (32 - k)
                j = <Py_ssize_t>r
            swapped = item[i]
            item[i] = item[j]
            item[j] = swapped
