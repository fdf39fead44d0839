"""How many brain connections a run may open, and how its concurrency was chosen."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConnectionBudget(_Model):
    """The most connections a run can hold at once, by who holds them.

    Every term is an upper bound, not an estimate: the server is sized (embedded)
    or the concurrency lowered (external) so that ``total`` always fits.
    """

    jobs: int = Field(ge=1, description="Fixtures replayed at once.")
    seams: int = Field(ge=1)
    modes: list[Literal["exec", "stream"]] = Field(description="Each seam's invocation mode.")
    warm_workers_per_seam: int = Field(ge=0, description="Warm stream processes per seam (0 in exec mode).")
    per_hook_role: int = Field(ge=1, description="Connections one seam may hold: its hook role's CONNECTION LIMIT.")
    hooks: int = Field(ge=0, description="seams × per_hook_role.")
    runner_brains: int = Field(ge=0, description="One pooled runner connection per leased brain (seeding, "
                                                 "write-back and scoring share it).")
    admin: int = Field(ge=0, description="CREATE/DROP DATABASE, migrations and sweeps, behind one semaphore.")
    margin: int = Field(ge=0, description="Backends of just-closed connections that have not exited yet.")
    total: int = Field(ge=1)


class ServerCapacity(_Model):
    """What a server we do not own reported at the start of the run."""

    max_connections: int
    superuser_reserved: int
    reserved: int = Field(description="reserved_connections (PostgreSQL 16+), else 0.")
    in_use: int = Field(description="Client backends already connected, ours excluded.")

    @property
    def available(self) -> int:
        # Reserved slots are never planned on: hook roles cannot use them, and a
        # superuser needs them to repair a server we filled.
        return self.max_connections - self.superuser_reserved - self.reserved - self.in_use


class Concurrency(_Model):
    """The ``--jobs`` a run used and what limited it (``_meta.run.concurrency``)."""

    jobs: int = Field(ge=1)
    requested: int | None = Field(description="--jobs as given; null when defaulted.")
    limited_by: Literal["requested", "cores", "memory", "connections"]
    cores: int
    memory_jobs: int | None = Field(description="Jobs the available memory carries (null if unknown).")
    connection_jobs: int = Field(description="Jobs the brain server's connections carry.")
    server_max_connections: int = Field(description="max_connections the embedded server was started with, "
                                                    "or the external server's.")
    budget: ConnectionBudget
