"""A private brain server: one throw-away Postgres container for one seed-contract seam.

Some memory systems cannot create their schema as a least-privilege role (gbrain's
migrations enable row-level security, which needs ``BYPASSRLS``, and create an event
trigger, which only a superuser may).  Superuser on the run's shared server would reach
every other seam's brain, and on the embedded server (a host process) run programs on
the host.  So a seam whose image declares ``"server": "private"`` gets a Postgres of its
own instead, and its superuser:

* the container runs ``brainbench/postgres-vector`` (or the configured image) with no
  mounts of the host, no capabilities, no new privileges, its data in its own writable
  layer, and is removed with the run (owner labels, like every run object);
* it sits on an internal network of its own (no egress) that only the seam's container
  joins: the seam reaches neither the shared brain nor any other seam's server, and
  other seams cannot reach this one;
* the runner, on the engine's host, reaches it at its address on that network (a
  Linux Docker engine routes its bridge networks to the host; internal networks publish
  no ports).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg

from .cleanup import owner_labels
from .config import LABEL_SEAM
from .failures import DockerInfraError
from .labels import runner_labels

if TYPE_CHECKING:
    from .client import DockerApi

DEFAULT_IMAGE = "brainbench/postgres-vector:latest"
IMAGE_ENV = "BRAINBENCH_PRIVATE_BRAIN_IMAGE"
LABEL_PRIVATE_BRAIN = "brainbench.private_brain"
PORT = 5432


def private_brain_image(configured: str | None) -> str:
    return configured or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


@dataclass
class PrivateBrain:
    """A started private server: its network (the seam joins it) and the superuser URL."""

    network: str
    container: Any
    url: str  # superuser, database ``postgres``, at the container's address on ``network``

    def remove(self, api: DockerApi) -> None:
        with contextlib.suppress(Exception):
            self.container.remove(force=True, v=True)
        with contextlib.suppress(Exception):
            api.client.networks.get(self.network).remove()


def start_private_brain(api: DockerApi, run_id: str, seam: str, image: str, start_s: float) -> PrivateBrain:
    """Network, container, and a server that answers; raises ``DockerInfraError`` in one line."""
    name = f"{run_id}-{seam.replace('_', '-')}-brain"
    try:
        labels = runner_labels(api.client.images.get(image).labels, {
            **owner_labels(run_id), LABEL_SEAM: seam, LABEL_PRIVATE_BRAIN: "1"})
    except Exception as exc:
        raise DockerInfraError(
            f"seam {seam}: its image declares a private brain server, whose image {image} is not on the engine "
            f"(build it: scripts/build-images --offline --only postgres-vector; or name another with "
            f"--private-brain-image or {IMAGE_ENV})") from exc
    network = api.retry(api.client.networks.create, name, driver="bridge", internal=True, labels=labels,
                        check_duplicate=True)
    password = secrets.token_hex(16)
    try:
        container = api.client.containers.create(
            image, name=name, labels=labels, detach=True, network=network.name, hostname="postgres",
            environment={"POSTGRES_USER": "postgres", "POSTGRES_PASSWORD": password},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=512, mem_limit="1g",
            init=True)
        brain = PrivateBrain(network.name, container, "")
        container.start()
        container.reload()
        address = container.attrs["NetworkSettings"]["Networks"][network.name]["IPAddress"]
        brain.url = f"postgresql://postgres:{password}@{address}:{PORT}/postgres"
        wait_ready(brain, seam, start_s)
    except BaseException:
        with contextlib.suppress(Exception):
            api.client.containers.get(name).remove(force=True, v=True)
        with contextlib.suppress(Exception):
            network.remove()
        raise
    return brain


def wait_ready(brain: PrivateBrain, seam: str, start_s: float) -> None:
    deadline = time.monotonic() + start_s
    last = ""
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(brain.url, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.Error as exc:
            last = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        brain.container.reload()
        if brain.container.status not in ("created", "running"):
            tail = brain.container.logs(tail=5).decode("utf-8", "replace").strip().replace("\n", " | ")
            raise DockerInfraError(f"seam {seam}: private brain server exited ({brain.container.status}): {tail}")
        time.sleep(0.5)
    raise DockerInfraError(f"seam {seam}: private brain server at {brain.url.rsplit('@', 1)[-1]} did not answer "
                           f"within {start_s:g} s ({last}); the runner must reach the engine's bridge networks "
                           "(a Linux Docker engine on this host)")
