"""Mulberry32, the PRNG of gbrain's corpus generator (trust spec §6.3), with :class:`~brainbench.generator.prng.Prng`'s
drawing interface.

Only ``--trust gbrain`` uses it: it reproduces gbrain 0.60's trust fixtures from the state its
generator reaches after its older categories.  Our own corpus draws from ``Prng``.
Plain 32-bit integer arithmetic, so the stream is the one JavaScript's ``Math.imul`` version yields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = 0xFFFFFFFF
_STEP = 0x6D2B79F5


def _imul(a: int, b: int) -> int:
    return (a * b) & _MASK


class Mulberry32:
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

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """Fisher–Yates from the end (``j = int(i + 1)``) on a copy."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out
