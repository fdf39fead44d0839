"""Failure classification: a failed *hook* is a result, a dead *container* is an error.

The orchestrator grades whatever a hook did (exit code, stdout, timeout).  Anything
that prevented the hook from running at all is an infrastructure fault: it is
reported through ``HookOutcome.infra_error`` (never a memory miss) and, where it is
safe because the hook has not started yet, retried.
"""

from __future__ import annotations

import time
from typing import Any

from brainbench.executors.base import ExecutorError


class DockerInfraError(ExecutorError):
    """The engine, a container or the attach stream failed; nothing was graded."""


class DockerUnavailable(DockerInfraError):
    """No Docker engine is reachable (not installed, not started, wrong DOCKER_HOST)."""


class StreamProtocolError(DockerInfraError):
    """A stream-mode hook wrote something that is not a response line."""


class ImageNotFound(DockerInfraError):
    """The image is not on this engine; nothing is ever pulled implicitly."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(missing_image_hint(ref))


class ImageContractError(DockerInfraError):
    """The image cannot host a hook at all (no /bin/sh, no command): fix the image, not the engine."""


# What runc says when the container's first process (our idle /bin/sh) is absent.
_MISSING_EXECUTABLE = ("executable file not found", "no such file or directory")


def missing_image_hint(ref: str) -> str:
    """One line that says how to get the image, ours or a third party's."""
    if ref.startswith("brainbench/"):
        return (f"image {ref} not found: build BrainBench's images with `scripts/build-images --offline` "
                "(or `brainbench images build`)")
    return (f"image {ref} not found on this Docker engine (nothing is pulled implicitly): "
            f"`docker pull {ref}` if it is published, or `docker build -t {ref} DIR` from its Dockerfile")


def missing_shell(exc: BaseException | str) -> bool:
    """True when a container failed to start because the image has no /bin/sh."""
    text = (exc if isinstance(exc, str) else str(exc)).lower()
    return "/bin/sh" in text and any(marker in text for marker in _MISSING_EXECUTABLE)


def check_started(container: Any, ref: str, settle_s: float = 0.2) -> None:
    """Raise a clear error when a fresh seam container died at once instead of idling.

    Its first process is our idle ``/bin/sh`` under tini: in an image without a
    shell, tini's exec fails a moment *after* a successful start, and every later
    exec would meet a stopped container (and be retried for nothing).
    """
    deadline = time.monotonic() + settle_s
    while True:
        container.reload()
        if container.status not in ("created", "running"):
            break
        if time.monotonic() >= deadline:
            return
        time.sleep(0.05)
    logs = container.logs(tail=5).decode("utf-8", "replace").strip()
    if missing_shell(logs):
        raise ImageContractError(no_shell_message(ref))
    code = (container.attrs.get("State") or {}).get("ExitCode")
    raise ImageContractError(f"the container of {ref} stopped right after it started (exit {code})"
                           + (f": {logs.splitlines()[-1]}" if logs else ""))


def no_shell_message(ref: str) -> str:
    return (f"image {ref} has no /bin/sh: the image contract needs /bin/sh and `timeout` "
            "(any Debian, Ubuntu, Alpine or busybox base has both; distroless and scratch images do not)")


def is_transient(exc: BaseException) -> bool:
    """True for faults worth retrying: the daemon hiccuped, nothing of ours ran.

    Retrying is only ever applied to operations that start nothing graded
    (create/start container, create exec, create network, inspect).
    """
    import requests
    from docker import errors

    if isinstance(exc, requests.exceptions.ConnectionError | requests.exceptions.Timeout):
        return True
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    if missing_shell(exc):
        return False  # the image will never grow a shell: retrying only delays the verdict
    if isinstance(exc, errors.APIError):
        status = exc.status_code or 0
        # 5xx: daemon-side failure (e.g. "OCI runtime create failed" under load).
        # 409 "is not running"/"is restarting": the container can be brought back.
        if status >= 500:
            return True
        if status == 409 and "not running" in str(exc).lower():
            return True
    return False


def describe(exc: BaseException) -> str:
    """A one-line, stable description for HookOutcome.infra_error and logs."""
    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{name}: {text}"[:500] if text else name
