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
import shutil
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import anyio

from ..base import Executor, RunContext, SeamLaunch, SeamProcess
from .cleanup import owner_labels, remove_labelled, sweep_dead_runs
from .client import DockerApi, resolve_docker_host
from .config import (
    DB_ENV,
    LABEL_OWNER,
    LABEL_ROLE,
    LABEL_RUN_ID,
    ROLE_BRAIN,
    DockerConfig,
    HardeningConfig,
    ResourceLimits,
)
from .database import DbTarget, is_loopback, parse_target, rewrite_host
from .failures import DockerInfraError
from .labels import ImageLabels
from .remote import is_remote
from .seam import DockerSeamProcess
from .static_helper import helper_binary, same_architecture

log = logging.getLogger(__name__)

COMPOSE_SERVICE = "com.docker.compose.service"
COMPOSE_PROJECT = "com.docker.compose.project"

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
        self.db_host_override: str | None = None
        # Host path of the static call server, bind-mounted into every seam container.
        self.static_helper: str | None = None
        self.engine_cpus: int | None = None  # the engine's CPUs, read at prepare

    @property
    def api(self) -> DockerApi:
        if self._api is None:
            self._api = DockerApi(self.config.docker_host)
        return self._api

    @property
    def remote(self) -> bool:
        """The engine cannot see this machine's files (``remote.is_remote``)."""
        return is_remote(resolve_docker_host(self.config.docker_host), self.config.remote)

    # -- lifecycle ---------------------------------------------------------------------------
    async def prepare(self, context: RunContext) -> None:
        if self.context is not None:
            raise RuntimeError("DockerExecutor.prepare is called once per run")
        self.context = context
        self.run_id = context.run_id or self.run_id
        self.pool_size = max(1, context.pool_size)
        self.db_host_override = context.container_db_host
        await anyio.to_thread.run_sync(self._prepare, self.config.database_url or context.database_url)

    @property
    def limits(self) -> ResourceLimits:
        limits = self.context.limits if self.context else ResourceLimits()
        # Docker refuses a quota above the engine's CPUs; the runner's machine may have more.
        if limits.cpus and self.engine_cpus and limits.cpus > self.engine_cpus:
            return limits.model_copy(update={"cpus": float(self.engine_cpus)})
        return limits

    @property
    def hardening(self) -> HardeningConfig:
        return self.context.hardening if self.context else HardeningConfig()

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
        info = api.retry(api.client.info)
        self.engine_cpus = info.get("NCPU")
        if self.config.sweep_on_start:
            sweep_dead_runs(api, current_run_id=self.run_id)
        # The static server is bind-mounted from this machine: not on an engine that cannot see it.
        if self.config.call_server in ("auto", "static") and not self.remote:
            helper = helper_binary()
            if helper and same_architecture(info.get("Architecture")):
                self.static_helper = self._stage_helper(helper)
        if url:
            target = parse_target(url)
            if target.is_socket and self.remote:
                raise DockerInfraError(
                    f"the Docker engine at {api.host} is remote: its containers cannot reach this machine's "
                    f"Unix socket {target.socket_dir}; run without --database-url (the brain then runs on that "
                    "engine) or give a --database-url its containers can reach")
            if not target.is_socket:
                self._prepare_network(target)
            self.db_target = target

    def _stage_helper(self, helper: str) -> str:
        """Where the engine can bind-mount the static call server from: the run's work root,
        which the engine must share with the runner anyway (compose mounts it at the same
        path); the user's cache only for callers without a run (doctor, tests)."""
        root = self.context.work_root if self.context else None
        if root is None:
            return helper
        staged = Path(root) / ".brainbench-call-server"
        shutil.copyfile(helper, staged)
        staged.chmod(0o755)
        return str(staged)

    def _prepare_network(self, target: DbTarget) -> None:
        """Internal (no egress) run network; Postgres is attached to it under an alias.

        On a remote engine the Postgres is the run's own brain container there; failing
        that, a server the engine reaches by itself (managed Postgres, another host), for
        which the run network needs egress and the URL goes to the hooks unchanged.
        """
        api = self.api
        brain = self._find_remote_brain(target) if self.remote else None
        pg = brain or self._find_postgres(target)
        if pg is None and not self.remote:
            raise DockerInfraError(
                f"Postgres at {target.host}:{target.port} is not a container this executor can attach to "
                "the run network; publish the Postgres container's port on loopback (docker run -p "
                "127.0.0.1:PORT:5432) and pass that URL, pass --brain-container (the compose service) "
                "or use the embedded Unix-socket database")
        network = api.retry(api.client.networks.create, f"{self.run_id}-db", driver="bridge", internal=pg is not None,
                            labels=owner_labels(self.run_id), check_duplicate=True)
        self.network_name = network.name
        if pg is None:
            return
        alias = "postgres" if brain is not None or is_loopback(target.host or "") else (target.host or "postgres")
        api.retry(network.connect, pg, aliases=[alias])
        if self.db_host_override is None and (brain is not None or is_loopback(target.host or "")):
            # The runner talks to a published port (loopback, or the remote engine's host);
            # containers use the alias and the container's own port.
            port = 5432 if brain is not None else (_container_port(pg, target.port) or 5432)
            self.db_host_override = f"{alias}:{port}"

    def _find_remote_brain(self, target: DbTarget) -> Any:
        """The run's own Postgres on this engine (``remote_brain``): one per run, by the name and
        labels the runner gave it (never by a label an image could have set, ``labels.py``)."""
        images = ImageLabels(self.api)
        found = self.api.client.containers.list(filters={"label": [
            f"{LABEL_ROLE}={ROLE_BRAIN}", f"{LABEL_RUN_ID}={self.run_id}"], "name": f"{self.run_id}-brain"})
        found = [c for c in found if c.name == f"{self.run_id}-brain"
                 and images.believed(c).get(LABEL_RUN_ID) == self.run_id]
        return found[0] if found else None

    def _find_postgres(self, target: DbTarget) -> Any:
        client = self.api.client
        named = self.context.brain_container if self.context else None
        if named:
            return client.containers.get(named)
        host = target.host or ""
        images = ImageLabels(self.api)
        # A compose service is told by a label compose set, not one its image carries; and no
        # container a run made (a seam, a private brain) is anyone's shared Postgres.
        running = [(c, images.believed(c)) for c in client.containers.list(ignore_removed=True)]
        running = [(c, labels) for c, labels in running if LABEL_OWNER not in labels]
        candidates = [c for c, labels in running if c.name == host or labels.get(COMPOSE_SERVICE) == host]
        if is_loopback(host):
            # The container that publishes the URL's port is the one the runner talks to (a
            # brain the user started, e.g. brainbench/postgres-vector, docs/GBRAIN.md); else compose's.
            candidates = ([c for c, _ in running if _container_port(c, target.port) is not None]
                          or [c for c, labels in running if labels.get(COMPOSE_SERVICE) == "postgres"])
        if len(candidates) > 1:
            # Inside compose our hostname is our container id: prefer our own project.
            with contextlib.suppress(Exception):
                me = client.containers.get(socket.gethostname())
                project = images.believed(me).get(COMPOSE_PROJECT)
                candidates = [c for c in candidates if project and images.believed(c).get(COMPOSE_PROJECT) == project
                              ] or candidates
        return candidates[0] if candidates else None

    def _teardown(self) -> None:
        if self._api is None:
            return
        with contextlib.suppress(Exception):
            report = remove_labelled(self._api, run_id=self.run_id, keep_role=ROLE_BRAIN)
            if report.errors:
                log.warning("docker: cleanup errors: %s", report.errors)

    def container_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Environment as a container must see it (DB URL rewritten for TCP mode)."""
        out = dict(env)
        if self.db_host_override and out.get(DB_ENV) and self._on_shared_server(out[DB_ENV]):
            out[DB_ENV] = rewrite_host(out[DB_ENV], self.db_host_override)
        return out

    def _on_shared_server(self, url: str) -> bool:
        """Not a private brain server's URL (its Unix socket: the seam container rewrites that one)."""
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
