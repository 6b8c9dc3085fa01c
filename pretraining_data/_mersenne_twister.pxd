# The C interface of _mersenne_twister.MersenneTwister, for other Cython
# modules: the state, and its draws as inline C methods (a call through the
# module boundary would cost as much as the draw).

cimport cython
from libc.stdint cimport uint32_t, uint64_t

cdef enum:
    _N = 624  # 32-bit words of state


@cython.final
cdef class MersenneTwister:
    cdef uint32_t _state[_N]
    cdef int _index

    # Regenerates the state's 624 words (when they are used up).
    cdef void _twist(self) noexcept

    cdef inline uint32_t _next(self) noexcept:
        """genrand_uint32 of Modules/_randommodule.c: the next 32-bit output."""
        if self._index >= _N:
            self._twist()
        cdef uint32_t y = self._state[self._index]
        self._index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9d2c5680U
        y ^= (y << 15) & 0xefc60000U
        y ^= y >> 18
        return y

    cdef inline uint64_t _below(self, uint64_t n) noexcept:
        """A uniform int in [0, n), 0 < n <= 2**32: what randint(0, n - 1) draws,
        by `_randbelow_with_getrandbits`."""
        cdef int k = 0
        cdef uint64_t r
        while (n >> k) != 0:  # k = n.bit_length()
            k += 1
        if k == 33:  # n == 2**32: getrandbits(33) takes two words.
            r = self._next()
            r |= <uint64_t>(self._next() >> 31) << 32
            while r >= n:
                r = self._next()
                r |= <uint64_t>(self._next() >> 31) << 32
            return r
        r = self._next() >> (32 - k)
        while r >= n:
            r = self._next() >> (32 - k)
        return r

    cdef inline double _random(self) noexcept:
        """random(): a float in [0, 1), as `random_random` of Modules/_randommodule.c."""
        cdef uint32_t a = self._next() >> 5
        cdef uint32_t b = self._next() >> 6
        return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
