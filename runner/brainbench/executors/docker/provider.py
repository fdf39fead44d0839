"""The Docker provider: one warm, hardened container per seam per run.

Split by concern: ``container`` (image facts, user, mounts, exec plumbing), ``exec_call``
(exec mode), ``stream_pool`` (stream mode), ``seam`` (the started seam).  This module is
the run's side: ``prepare`` sweeps dead leftovers and makes the brain reachable (a bind-
mounted Unix socket, or an internal run network that Postgres joins) before any seam
starts, so no call ever discovers a database or recreates a container.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import anyio

from ..base import Executor, RunContext, SeamLaunch, SeamProcess
from .cleanup import owner_labels, remove_labelled, sweep_dead_runs
from .client import DockerApi
from .config import DockerConfig
from .database import DbTarget, is_loopback, parse_target, rewrite_host
from .failures import DockerInfraError
from .seam import DockerSeamProcess

log = logging.getLogger(__name__)

DB_ENV = "BRAINBENCH_DATABASE_URL"

__all__ = ["DB_ENV", "DockerExecutor", "DockerSeamProcess"]


class DockerExecutor(Executor):
    """Runs each seam in its own warm container; everything labelled by run id and owner."""

    name: ClassVar[str] = "docker"

    def __init__(self, config: DockerConfig | None = None, *, run_id: str | None = None,
                 pool_size: int = 2) -> None:
        self.config = config or DockerConfig()
        # Stream mode: warm processes per seam container (calls in flight at once).
        self.pool_size = max(1, pool_size)
        self.run_id = run_id or f"bb-{uuid.uuid4().hex[:12]}"
        self._api: DockerApi | None = None
        self._processes: list[DockerSeamProcess] = []
        self.context: RunContext | None = None
        self.db_target: DbTarget | None = None
        self.network_name: str | None = None
        self.db_host_override: str | None = self.config.container_db_host

    @property
    def api(self) -> DockerApi:
        if self._api is None:
            self._api = DockerApi(self.config.docker_host, attempts=self.config.infra_attempts)
        return self._api

    # -- lifecycle ---------------------------------------------------------------------------
    async def prepare(self, context: RunContext) -> None:
        if self.context is not None:
            raise RuntimeError("DockerExecutor.prepare is called once per run")
        self.context = context
        self.run_id = context.run_id or self.run_id
        self.pool_size = max(1, context.pool_size)
        await anyio.to_thread.run_sync(self._prepare, self.config.database_url or context.database_url)

    async def start(self, launch: SeamLaunch) -> SeamProcess:
        if self.context is None:
            # Callers that skip prepare (tests, doctor) get the run context from the launch.
            await self.prepare(RunContext(run_id=launch.run_id or self.run_id, pool_size=self.pool_size,
                                          database_url=launch.env.get(DB_ENV)))
        process = DockerSeamProcess(self, launch)
        self._processes.append(process)
        try:
            await process.boot(self.config.stream_handshake_s)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await process.stop()
            raise
        return process

    async def close(self, interrupted: bool = False) -> None:
        for process in list(self._processes):
            with contextlib.suppress(Exception):
                await process.stop()
        await anyio.to_thread.run_sync(self._teardown)

    @classmethod
    def cleanup(cls, run_id: str | None = None) -> list[str]:
        """A run's objects (``run_id``), or every provably dead run's; returns what was removed."""
        api = DockerApi()
        try:
            report = remove_labelled(api, run_id=run_id, dead_only=run_id is None)
        finally:
            api.close()
        return [f"container {c}" for c in report.containers] + [f"network {n}" for n in report.networks]

    def forget(self, process: DockerSeamProcess) -> None:
        with contextlib.suppress(ValueError):
            self._processes.remove(process)

    # -- run-scoped resources ----------------------------------------------------------------
    def _prepare(self, url: str | None) -> None:
        api = self.api
        if self.config.sweep_on_start:
            sweep_dead_runs(api, current_run_id=self.run_id)
        if url:
            target = parse_target(url)
            if not target.is_socket:
                self._prepare_network(target)
            self.db_target = target

    def _prepare_network(self, target: DbTarget) -> None:
        """Internal (no egress) run network; Postgres is attached to it under an alias."""
        api = self.api
        name = f"{self.run_id}-db"
        network = api.retry(api.client.networks.create, name, driver="bridge", internal=True,
                            labels=owner_labels(self.run_id), check_duplicate=True)
        self.network_name = network.name
        pg = self._find_postgres(target)
        if pg is None:
            raise DockerInfraError(
                f"Postgres at {target.host}:{target.port} is not a container this executor can attach to "
                "the run network; publish the Postgres container's port on loopback (docker run -p "
                "127.0.0.1:PORT:5432) and pass that URL, pass DockerConfig.postgres_container (compose "
                "service) or use the embedded Unix-socket database")
        alias = "postgres" if is_loopback(target.host or "") else (target.host or "postgres")
        api.retry(network.connect, pg, aliases=[alias])
        if self.db_host_override is None and is_loopback(target.host or ""):
            # The runner talks to a published port on loopback; containers use the alias.
            self.db_host_override = f"{alias}:{_container_port(pg, target.port) or 5432}"

    def _find_postgres(self, target: DbTarget) -> Any:
        client = self.api.client
        if self.config.postgres_container:
            return client.containers.get(self.config.postgres_container)
        host = target.host or ""
        candidates = [
            c for c in client.containers.list(ignore_removed=True)
            if c.name == host or c.labels.get("com.docker.compose.service") == host
        ]
        if is_loopback(host):
            running = client.containers.list(ignore_removed=True)
            # The container that publishes the URL's port is the one the runner talks to (a
            # brain the user started, e.g. brainbench/postgres-vector, docs/GBRAIN.md); else compose's.
            candidates = ([c for c in running if _container_port(c, target.port) is not None]
                          or [c for c in running if c.labels.get("com.docker.compose.service") == "postgres"])
        if len(candidates) > 1:
            # Inside compose our hostname is our container id: prefer our own project.
            with contextlib.suppress(Exception):
                me = client.containers.get(socket.gethostname())
                project = me.labels.get("com.docker.compose.project")
                candidates = [c for c in candidates
                              if c.labels.get("com.docker.compose.project") == project] or candidates
        return candidates[0] if candidates else None

    def _teardown(self) -> None:
        if self._api is None:
            return
        with contextlib.suppress(Exception):
            report = remove_labelled(self._api, run_id=self.run_id)
            if report.errors:
                log.warning("docker: cleanup errors: %s", report.errors)

    def container_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Environment as a container must see it (DB URL rewritten for TCP mode)."""
        out = dict(env)
        if self.db_host_override and out.get(DB_ENV) and self._on_shared_server(out[DB_ENV]):
            out[DB_ENV] = rewrite_host(out[DB_ENV], self.db_host_override)
        return out

    def _on_shared_server(self, url: str) -> bool:
        """A private brain server's URL (its address on the seam's network) is already the container's."""
        target, mine = self.db_target, parse_target(url)
        return target is None or target.is_socket or (mine.host, mine.port) == (target.host, target.port)


def _container_port(container: Any, host_port: int | None) -> int | None:
    """The TCP port inside ``container`` that it publishes on the host as ``host_port``."""
    if host_port is None:
        return None
    for spec, bindings in (container.ports or {}).items():
        port, _, proto = spec.partition("/")
        if proto == "tcp" and any(str(b.get("HostPort")) == str(host_port) for b in bindings or []):
            return int(port)
    return None
