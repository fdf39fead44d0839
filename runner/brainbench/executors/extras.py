"""Optional dependencies an executor needs, checked before anything starts: a missing extra is named
with the command that installs it, never reported as a missing engine."""

from __future__ import annotations

import importlib.util

# No package index serves BrainBench, so the extra is named by what it installs (pyproject's `docker` extra):
# `pip install 'brainbench[docker]'` would send the user to an index that has never heard of it.
DOCKER_EXTRA = "pip install 'docker>=7.0' (or reinstall BrainBench with [docker])"


def docker_sdk_missing(what: str) -> str | None:
    """One line for ``what`` (``--executor docker``, ``doctor``…) when the Docker SDK is not installed."""
    if importlib.util.find_spec("docker") is not None:
        return None
    return (f"{what} needs the Docker SDK, which this install lacks (the `docker` extra): {DOCKER_EXTRA}")
