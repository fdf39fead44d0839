"""The environment a local hook process inherits: the runner's, minus its database credentials.

A local hook runs as the runner's uid and is trusted code (README, Security), but it
still gets only its own role's URL: libpq's ``PG*`` variables and a ``DATABASE_URL``
would otherwise hand it the user's own login (and would override nothing useful:
every call's ``BRAINBENCH_DATABASE_URL`` carries its role and password).
"""

from __future__ import annotations

import os

_SECRET_NAMES = frozenset({"DATABASE_URL", "BRAINBENCH_DATABASE_URL"})


def inherited_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not (k.startswith("PG") or k in _SECRET_NAMES)}
