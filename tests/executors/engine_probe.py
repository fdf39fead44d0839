"""Whether the provider suites can use Docker: an engine that answers and the local base image."""

from __future__ import annotations

from typing import Any

BASE = "brainbench/base:bookworm"


def docker_or_reason() -> tuple[Any, str]:
    """(client, "") when the engine answers and ``BASE`` is built, else (None, why)."""
    try:
        import docker

        client = docker.from_env(version="auto")
        client.ping()
        client.images.get(BASE)
        return client, ""
    except Exception as exc:
        return None, f"no Docker engine or no {BASE}: {exc.__class__.__name__}"
