"""When a test may skip: on a developer's machine, for a prerequisite it names; under CI, never.

CI (``CI=true``, as .ci/run and every hosted runner set it) brings up everything the suite needs — a
Docker engine, the offline images, root, a browser, bun — so a skip there hides a layer that did not
run and the run could go green with it missing.  tests/conftest.py turns every skip into a failure
under CI with one line that says why; a test that checks a prerequisite itself calls ``skip_or_fail``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NoReturn

import pytest

CI_SKIP_PREFIX = "CI=true: a skip hides a layer that did not run (CI has every prerequisite)"


def under_ci(env: Mapping[str, str] = os.environ) -> bool:
    return env.get("CI", "").strip().lower() in ("true", "1")


def ci_failure(reason: str, env: Mapping[str, str] = os.environ) -> str | None:
    """The one-line failure a skip for ``reason`` becomes, or None where skipping is allowed."""
    if not under_ci(env):
        return None
    return f"{CI_SKIP_PREFIX}: {' '.join(reason.split())}"


def skip_or_fail(reason: str) -> NoReturn:
    message = ci_failure(reason)
    if message is not None:
        pytest.fail(message, pytrace=False)
    pytest.skip(reason)
