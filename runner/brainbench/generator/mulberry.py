"""Mulberry32, the PRNG of gbrain's corpus generator (trust spec §6.3), drawing through our ``Draws``
(gbrain's ``pick`` and ``shuffle`` are the same Fisher–Yates over ``int(n)``).

Only ``--trust gbrain`` uses it: it reproduces gbrain 0.60's trust fixtures from the state its
generator reaches after its older categories.  Our own corpus draws from ``Prng``.
Plain 32-bit integer arithmetic, so the stream is the one JavaScript's ``Math.imul`` version yields.
"""

from __future__ import annotations

from brainbench.generator.prng import Draws

_MASK = 0xFFFFFFFF
_STEP = 0x6D2B79F5


def _imul(a: int, b: int) -> int:
    return (a * b) & _MASK


class Mulberry32(Draws):
    """``state`` is Mulberry32's one word ``a`` (the seed, or where an earlier stream left it)."""

    def __init__(self, state: int) -> None:
        self._a = state & _MASK

    @property
    def state(self) -> int:
        return self._a

    def next_u32(self) -> int:
        self._a = (self._a + _STEP) & _MASK
        a = self._a
        t = _imul(a ^ (a >> 15), 1 | a)
        t = ((t + _imul(t ^ (t >> 7), 61 | t)) & _MASK) ^ t
        return t ^ (t >> 14)

    def below(self, n: int) -> int:
        """gbrain's ``int(n) = floor(next() * n)``; exact in integers, as ``next()`` is ``u32 / 2**32``."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        return (self.next_u32() * n) >> 32
