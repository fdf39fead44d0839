"""What a seam may use and do: resource limits and container hardening.

Both are part of the run's one options model (:class:`~brainbench.models.config.RunConfig`
sets the limits from flags, env and file) and reach the providers once, in the
``RunContext`` given at ``prepare``.  They live here, not in the Docker provider, because
they are a property of the run: every provider reads them from the same place.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Docker's memory syntax: a number with an optional b/k/m/g unit.
_SIZE = re.compile(r"^\d+(\.\d+)?[bkmg]?$", re.IGNORECASE)


def check_size(value: str) -> str:
    if not _SIZE.match(value.strip()):
        raise ValueError(f"{value!r} is not a size such as 512m or 2g")
    return value.strip().lower()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ResourceLimits(_Strict):
    """Per-seam resource limits (Docker enforces them per container; see docs/CONTAINERS.md)."""

    memory: str = "512m"
    # None or 0: no CPU quota.
    cpus: float | None = Field(1.0, ge=0)
    pids_limit: int = Field(256, ge=1)
    # Seconds the runner waits past a call's timeout before it declares the call wedged and
    # kills it from outside (the in-container supervisor should always fire first).  Tests
    # set it negative to make the host deadline come first.
    call_grace_s: float = 5.0

    @field_validator("memory")
    @classmethod
    def _memory(cls, value: str) -> str:
        return check_size(value)


class HardeningConfig(_Strict):
    """Container hardening; every default is the hardened choice."""

    read_only_rootfs: bool = True
    # Docker mounts every tmpfs noexec unless "exec" is given: a hook cannot run what it
    # writes here.  (The static call server is bind-mounted read-only, never written here.)
    tmpfs: dict[str, str] = Field(default_factory=lambda: {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"})
    cap_drop: tuple[str, ...] = ("ALL",)
    no_new_privileges: bool = True
    # None: the image's own USER if it is non-root, else ``fallback_user``.
    user: str | None = None
    fallback_user: str = "65534:65534"
    # tini as PID 1 reaps the children that `timeout -s KILL` orphans.
    init: bool = True
