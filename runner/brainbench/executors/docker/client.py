"""Thin wrapper around the docker SDK: connection, retries for infra faults, helpers.

Only operations that start nothing graded are retried (tenacity): create/start a
container, create an exec, create/connect a network, inspect.  Starting a hook
(exec start) is never retried -- a retry could run a graded hook twice.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

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

    def __init__(self, host: str | None = None, *, attempts: int = 4) -> None:
        import docker  # lazy: the CLI must start fast without the SDK imported

        self.host = resolve_docker_host(host)
        self.attempts = max(1, attempts)
        try:
            self.client: docker.DockerClient = docker.DockerClient(base_url=self.host, version="auto",
                                                                   **client_kwargs(self.host))
            self.client.ping()
        except Exception as exc:  # the SDK raises a zoo of types here
            raise DockerUnavailable(f"no Docker engine reachable at {self.host}: {exc}") from exc
        self.api = self.client.api
        self.api_version: str = self.api.api_version

    def retry(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run an infra operation with exponential backoff on transient faults."""
        for attempt in Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=0.2, max=3),
            retry=retry_if_exception(is_transient),
            reraise=True,
        ):
            with attempt:
                if attempt.retry_state.attempt_number > 1:
                    log.warning("docker: retrying %s (attempt %d)", getattr(fn, "__name__", fn),
                                attempt.retry_state.attempt_number)
                return fn(*args, **kwargs)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # closing a dead connection is not worth failing over
            pass


def try_connect(host: str | None = None) -> DockerApi | None:
    """A connected client, or None when no engine answers (for skips and doctor)."""
    try:
        return DockerApi(host, attempts=1)
    except DockerUnavailable:
        return None
