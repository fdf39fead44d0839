"""Reported numbers: JS ``Math.round(x * 10000) / 10000`` (round half up, not banker's)."""

from __future__ import annotations

import math


def round4(x: float) -> float | int:
    value = math.floor(x * 10000 + 0.5) / 10000
    return int(value) if value.is_integer() else value
