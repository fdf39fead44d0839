"""How a benchmark script that measures one optional row ends (a sibling script, not a package)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def report(name: str, why: str | None, measure: Callable[[], dict[str, Any]],
           line: Callable[[dict[str, Any]], str]) -> int:
    """Measure and print the row and its README cell (0), or say why it was not run or failed (2)."""
    if why:
        print(f"{name}: not run: {why}", file=sys.stderr)
        return 2
    try:
        row = measure()
    except RuntimeError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(row, indent=2))
    print(line(row))
    return 0
