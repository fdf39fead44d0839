"""Thin wrapper around the docker SDK: connection, retries for infra faults, helpers.

Only operations that start nothing graded are retried, by the run's one policy
(``executors.retry``): create/start a container, create an exec, create/connect a
network.  Starting a hook (exec start) is never retried -- a retry could run a graded
hook twice -- and inside a graded call nothing is retried here (the orchestrator retries
the whole call; see ``executors/retry.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..retry import INFRA_RETRY, InfraRetry
from .failures import DockerUnavailable, is_transient

if TYPE_CHECKING:
    import docker

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_HOST = "unix:///var/run/docker.sock"


def resolve_docker_host(explicit: str | None = None) -> str:
    return explicit or os.environ.get("DOCKER_HOST") or DEFAULT_HOST


class DockerApi:
    """A connected SDK client plus the endpoint needed for raw attach streams."""

    def __init__(self, host: str | None = None, *, policy: InfraRetry = INFRA_RETRY) -> None:
        import docker  # lazy: the CLI must start fast without the SDK imported

        self.host = resolve_docker_host(host)
        self.policy = policy
        try:
            self.client: docker.DockerClient = docker.DockerClient(base_url=self.host, version="auto")
            self.client.ping()
        except Exception as exc:  # the SDK raises a zoo of types here
            raise DockerUnavailable(f"no Docker engine reachable at {self.host}: {exc}") from exc
        self.api = self.client.api
        self.api_version: str = self.api.api_version

    def retry(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run an infra operation that starts nothing graded, retried on transient engine faults."""
        return self.policy.call(fn, *args, transient=is_transient, **kwargs)

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # closing a dead connection is not worth failing over
            pass


def try_connect(host: str | None = None) -> DockerApi | None:
    """A connected client, or None when no engine answers (for skips and doctor)."""
    try:
        return DockerApi(host, policy=INFRA_RETRY.once())
    except DockerUnavailable:
        return None
