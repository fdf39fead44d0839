"""The brain of a run on a remote engine: a Postgres container on that engine.

The embedded server listens on a Unix socket of this machine, which a remote engine's
containers cannot reach.  So when seams run on a remote engine and no ``--database-url``
is given, the run starts ``brainbench/postgres`` there: on a run-scoped bridge network,
its port published on the engine host (loopback only when the engine itself is reached on
loopback), reached by the runner at ``DOCKER_HOST``'s host name and by the seam
containers through the run's internal network under the alias ``postgres``
(``provider._prepare_network``).  Everything carries the run's owner labels, so the
sweeps and ``brainbench cleanup`` cover it; the run's close removes it.

Overrides (environment): ``BRAINBENCH_REMOTE_BRAIN_HOST`` (where the runner connects),
``BRAINBENCH_REMOTE_BRAIN_PORT`` (a fixed host port, e.g. for an SSH tunnel),
``BRAINBENCH_REMOTE_BRAIN_BIND`` (the engine host interface to publish on) and
``BRAINBENCH_POSTGRES_IMAGE``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from typing import Any

from brainbench.brain.server import ExternalPostgres, ServerError

from .cleanup import owner_labels
from .client import DockerApi
from .config import LABEL_ROLE, ROLE_BRAIN, THROWAWAY_SETTINGS
from .database import is_loopback
from .labels import runner_labels
from .remote import engine_hostname

log = logging.getLogger(__name__)

IMAGE_ENV = "BRAINBENCH_POSTGRES_IMAGE"
DEFAULT_IMAGE = "brainbench/postgres:latest"
PORT_ENV = "BRAINBENCH_REMOTE_BRAIN_PORT"
BIND_ENV = "BRAINBENCH_REMOTE_BRAIN_BIND"
READY_TIMEOUT_S = 180.0


class RemoteBrain:
    """A Postgres server the run owns, in a container on the (remote) engine."""

    def __init__(self, run_id: str, *, max_connections: int, docker_host: str | None = None,
                 image: str | None = None) -> None:
        self.run_id = run_id
        self.api = DockerApi(docker_host)
        self.image = image or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE
        self.container: Any = None
        self.network: Any = None
        self._password = secrets.token_urlsafe(24)
        try:
            self._start(max_connections)
            self.external = ExternalPostgres(self._url())
            self._wait_ready()
        except BaseException:
            self.close()
            raise

    def _start(self, max_connections: int) -> None:
        import docker.errors

        client = self.api.client
        host = engine_hostname(self.api.host)
        bind = os.environ.get(BIND_ENV) or ("127.0.0.1" if is_loopback(host) else "0.0.0.0")
        port = int(os.environ[PORT_ENV]) if os.environ.get(PORT_ENV) else None
        try:
            image_labels = client.images.get(self.image).labels
        except docker.errors.ImageNotFound:
            raise ServerError(f"the remote Docker engine at {self.api.host} has no image {self.image} for the "
                              "run's brain: build it there (scripts/build-images) or load it (docker save | "
                              "docker load), or give a --database-url its containers can reach") from None
        own = {**owner_labels(self.run_id), LABEL_ROLE: ROLE_BRAIN}
        labels = runner_labels(image_labels, own)
        # Published ports need a network with a gateway; the seams' run network is internal.
        self.network = self.api.retry(client.networks.create, f"{self.run_id}-brain", driver="bridge",
                                      labels=own, check_duplicate=True)
        self.container = self.api.retry(
            client.containers.run, self.image,
            command=["postgres", "-c", f"max_connections={max_connections}", *THROWAWAY_SETTINGS],
            name=f"{self.run_id}-brain", environment={"POSTGRES_PASSWORD": self._password},
            ports={"5432/tcp": (bind, port)}, network=self.network.name, labels=labels, detach=True,
            shm_size="256m")
        self.host = host
        self.port = self._published_port()

    def _published_port(self) -> int:
        for _ in range(100):
            self.container.reload()
            bindings = (self.container.attrs["NetworkSettings"].get("Ports") or {}).get("5432/tcp") or []
            if bindings:
                return int(bindings[0]["HostPort"])
            if self.container.status == "exited":
                break
            time.sleep(0.1)
        raise ServerError(f"the brain container on {self.api.host} published no port: {self.diagnose() or '?'}")

    def _url(self) -> str:
        return f"postgresql://postgres:{self._password}@{self.host}:{self.port}/postgres?connect_timeout=10"

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + READY_TIMEOUT_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                with psycopg.connect(self.external.database_url("postgres"), connect_timeout=3) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.Error as exc:
                last = exc
            self.container.reload()
            if self.container.status == "exited":
                break
            time.sleep(0.3)
        raise ServerError(f"the brain container on {self.api.host} is not reachable at {self.host}:{self.port}: "
                          f"{self.diagnose() or last}")

    # -- PostgresServer ----------------------------------------------------------------------
    def database_url(self, database: str) -> str:
        return self.external.database_url(database)

    def role_url(self, database: str, role: str, password: str) -> str:
        return self.external.role_url(database, role, password)

    def diagnose(self) -> str | None:
        with contextlib.suppress(Exception):
            self.container.reload()
            if self.container.status != "running":
                tail = self.container.logs(tail=5).decode("utf-8", "replace").strip()
                return f"the brain container stopped ({self.container.status}): {tail}"
        return None

    def close(self) -> None:
        if self.container is not None:
            with contextlib.suppress(Exception):
                self.container.remove(force=True, v=True)
            self.container = None
        if self.network is not None:
            with contextlib.suppress(Exception):
                self.network.remove()
            self.network = None
        self.api.close()


def describe(brain: RemoteBrain) -> str:
    return f"brain: {brain.image} on the remote engine, reached at {brain.host}:{brain.port}"
