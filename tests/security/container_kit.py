"""Shared helpers for the container security tests (``test_container_*.py``).

Hostile images are built from the local base (nothing is pulled) under the
``bbtest-exec-`` prefix; every container a test starts is labelled with a fresh run id
and removed with it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from image_build import build_image  # type: ignore[import-not-found]

T = TypeVar("T")
BASE = "brainbench/base:bookworm"
PREFIX = "bbtest-exec-"


def _client() -> tuple[Any, str]:
    try:
        import docker
    except ImportError:
        return None, "docker SDK not installed"
    try:
        client = docker.from_env(version="auto")
        client.ping()
        client.images.get(BASE)
    except Exception as exc:
        return None, f"no Docker engine or no {BASE} ({exc.__class__.__name__}); see docs/CONTAINERS.md"
    return client, ""


CLIENT, REASON = _client()
needs_docker = pytest.mark.skipif(CLIENT is None, reason=REASON)


def build(name: str, dockerfile: str, files: Mapping[str, bytes | str] | None = None) -> str:
    """Build ``bbtest-exec-<name>`` from an in-memory context (FROM the local base)."""
    return build_image(CLIENT, f"{PREFIX}{name}:latest", {"Dockerfile": f"FROM {BASE}\n{dockerfile}", **(files or {})})


def payload(prompt: str, **extra: Any) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": prompt,
                       "cwd": "/tmp", **extra}).encode()


@pytest.fixture
def run_id() -> Iterator[str]:
    rid = f"bbtest-exec-{uuid.uuid4().hex[:10]}"
    yield rid
    if CLIENT is not None:
        from brainbench.executors.docker.cleanup import remove_labelled
        from brainbench.executors.docker.client import DockerApi

        api = DockerApi()
        remove_labelled(api, run_id=rid)
        api.close()


def with_seam(image: str, run_id: str, mode: str, body: Callable[[Any], Awaitable[T]], **launch: Any) -> T:
    """Start one docker seam from ``image`` and run ``body(process)`` against it."""
    from brainbench.executors.base import SeamLaunch
    from brainbench.executors.docker import DockerExecutor

    async def main() -> T:
        executor = DockerExecutor(run_id=run_id)
        try:
            proc = await executor.start(SeamLaunch(seam="claude_code", command=launch.pop("command", ()),
                                                   mode=mode, image=image, run_id=run_id, **launch))  # type: ignore[arg-type]
            return await body(proc)
        finally:
            await executor.close()

    return anyio.run(main)


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]
