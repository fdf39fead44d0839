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
from .remote import client_kwargs

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
        # The SDK is imported lazily (in _connect): the CLI must start fast without it.
        self.host = resolve_docker_host(host)
        self.policy = policy
        try:
            self.client: docker.DockerClient = _connect(self.host)
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


def _connect(host: str) -> docker.DockerClient:
    import docker

    extra = client_kwargs(host)
    if "tls" not in extra:
        return docker.DockerClient(base_url=host, version="auto", **extra)
    # requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE override the client's own CA per request,
    # which breaks a private engine CA: read the API version, then talk with trust_env off.
    probe = docker.DockerClient(base_url=host, version="1.24", **extra)
    probe.api.trust_env = False
    try:
        version = str(probe.api.version(api_version=False)["ApiVersion"])
    finally:
        probe.close()
    client = docker.DockerClient(base_url=host, version=version, **extra)
    client.api.trust_env = False
    return client


def try_connect(host: str | None = None) -> DockerApi | None:
    """A connected client, or None when no engine answers (for skips and doctor)."""
    try:
        return DockerApi(host, policy=INFRA_RETRY.once())
    except DockerUnavailable:
        return None
