"""Who owns a leftover: enough to tell a live BrainBench process from a dead one anywhere we look."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from brainbench.models import bounded_json

OwnerState = Literal["alive", "dead", "unknown"]


class Owner(BaseModel):
    """The identity of one runner process instance.

    Host name + pid is not enough: containers and CI runners share host names, pid
    namespaces differ, and pids are reused.  A pid is only meaningful together with the
    kernel (``boot_id``) and the pid namespace it was read in, and only names the same
    process while its start time (in clock ticks since boot) is unchanged.  Across pid
    namespaces the owner's lock file answers instead: the kernel releases an ``flock``
    when its holder dies, whatever namespace either side is in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    boot_id: str
    pid_ns: str
    pid: int
    start_ticks: int
    lock_path: str | None = None

    def label(self) -> str:
        """Compact JSON for a Docker label, a database or role comment."""
        return self.model_dump_json(exclude_none=True)

    @classmethod
    def from_label(cls, text: str | None) -> Owner | None:
        if not text:
            return None
        try:
            # Bounded: a label or comment may come from a server or container an image controls.
            return cls.model_validate(bounded_json.loads(text))
        except (ValueError, ValidationError):
            return None
