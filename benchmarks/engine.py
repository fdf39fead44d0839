"""The Docker engine a benchmark row needs, or why there is none (a sibling script, not a package)."""

from __future__ import annotations

from typing import Any


def docker_client() -> tuple[Any, str | None]:
    """A connected Docker SDK client and None, or None and why Docker rows cannot be measured here.

    The caller closes the client."""
    try:
        import docker
    except ImportError:
        return None, "the docker SDK is not installed (pip install '.[docker]')"
    try:
        client = docker.from_env(version="auto")
        client.ping()
    except Exception as exc:  # any failure to reach the engine means: no Docker here
        return None, f"no Docker engine reachable ({exc.__class__.__name__})"
    return client, None
