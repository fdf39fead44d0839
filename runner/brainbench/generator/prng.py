"""A small self-contained seeded PRNG (xoshiro128** seeded through splitmix32).

Python's ``random`` is avoided on purpose: its algorithms for ``shuffle``/``choice``/
``randrange`` have changed between versions, and the corpus must be byte-identical
for a given seed forever.  Everything here is plain 32-bit integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = 0xFFFFFFFF


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _MASK


class Draws:
    """Choices and shuffles built on one primitive, ``below(n)``: a uniform integer in [0, n)."""

    def below(self, n: int) -> int:
        raise NotImplementedError

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """Fisher–Yates from the end (``j = below(i + 1)``) on a copy; the input is never mutated."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        if k > len(items):
            raise ValueError("sample larger than population")
        return self.shuffled(items)[:k]


class Prng(Draws):
    """Deterministic generator; draws happen in call order, nothing else matters."""

    def __init__(self, seed: int) -> None:
        # splitmix32 expands one integer seed into the four state words; it never
        # yields an all-zero state for any seed, which xoshiro would get stuck in.
        z = seed & _MASK
        state = []
        for _ in range(4):
            z = (z + 0x9E3779B9) & _MASK
            x = z
            x = ((x ^ (x >> 16)) * 0x85EBCA6B) & _MASK
            x = ((x ^ (x >> 13)) * 0xC2B2AE35) & _MASK
            x ^= x >> 16
            state.append(x)
        self._s = state

    def next_u32(self) -> int:
        s = self._s
        result = (_rotl((s[1] * 5) & _MASK, 7) * 9) & _MASK
        t = (s[1] << 9) & _MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 11)
        return result

    def below(self, n: int) -> int:
        """Uniform integer in [0, n); rejection sampling so small n carry no modulo bias."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = (1 << 32) - ((1 << 32) % n)
        while True:
            v = self.next_u32()
            if v < limit:
                return v % n

    def between(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi] inclusive."""
        return lo + self.below(hi - lo + 1)


class Deck:
    """Deals items without replacement, reshuffling when exhausted.

    Spreads entity use evenly over the universe instead of letting a few people
    dominate the corpus, while staying a pure function of the PRNG stream.
    """

    def __init__(self, prng: Prng, items: Sequence[T]) -> None:
        if not items:
            raise ValueError("empty deck")
        self._prng = prng
        self._items = list(items)
        self._pile: list[T] = []

    def deal(self, avoid: Sequence[T] = ()) -> T:
        # Skip over avoided items (e.g. a fixture's other entities) but keep them
        # in the pile; only give up when every item is avoided.
        for _ in range(2):
            if not self._pile:
                self._pile = self._prng.shuffled(self._items)
            for idx, item in enumerate(self._pile):
                if item not in avoid:
                    return self._pile.pop(idx)
            self._pile = []
        raise ValueError("every deck item is avoided")
