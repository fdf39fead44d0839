"""Failure classification: a failed *hook* is a result, a dead *container* is an error.

The orchestrator grades whatever a hook did (exit code, stdout, timeout).  Anything
that prevented the hook from running at all is an infrastructure fault: it is
reported through ``HookOutcome.infra_error`` (never a memory miss) and, where it is
safe because the hook has not started yet, retried.
"""

from __future__ import annotations

from brainbench.executors.base import ExecutorError


class DockerInfraError(ExecutorError):
    """The engine, a container or the attach stream failed; nothing was graded."""


class DockerUnavailable(DockerInfraError):
    """No Docker engine is reachable (not installed, not started, wrong DOCKER_HOST)."""


class StreamProtocolError(DockerInfraError):
    """A stream-mode hook wrote something that is not a response line."""


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
