"""A private brain server: one throw-away Postgres container for one seed-contract seam, sealed.

Some memory systems cannot create their schema as a least-privilege role (gbrain's
migrations enable row-level security, which needs ``BYPASSRLS``, and create an event
trigger, which only a superuser may).  Superuser on the run's shared server would reach
every other seam's brain, and on the embedded server (a host process) run programs on
the host.  So a seam whose image declares ``"server": "private"`` gets a Postgres of its
own instead, and its superuser, which can run programs in that container.  It is sealed:

* the server's container has no network at all (``network_mode=none``: a loopback of its
  own, no interface of the host or any bridge), no capabilities, no new privileges, limits,
  its data on a tmpfs of its own inside its memory limit (no byte on the host's disk, and a
  brain that fills it fails alone), and it goes with the run (owner labels);
* the seam's container joins that network namespace (``network_mode=container:<server>``)
  and nothing else: the seam reaches its server at ``127.0.0.1:5432``, the server and the
  seam reach nothing beyond each other, and no other seam or server reaches either;
* the runner reaches the server through its Unix socket, which the server puts in a
  directory of the runner's scratch bind-mounted at ``/var/run/postgresql``.  That
  directory sits in a ``0700`` directory of the runner's with the owner file (the server can
  write in the socket directory, never beside it), so a sweep judges it by the runner's
  label and a killed run's is removed by the next run.  Only a local engine can share it: a
  remote engine has no private brain servers.

Every runner connection to it is bounded in time (``brain/guarded.py``): it is the image's.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import psycopg

from brainbench.scratch_owner import RUN_PREFIX, owned_scratch_dir

from .cleanup import owner_labels
from .config import LABEL_SEAM, THROWAWAY_SETTINGS
from .database import parse_target, rewrite_host
from .failures import DockerInfraError
from .labels import runner_labels

if TYPE_CHECKING:
    from .client import DockerApi

DEFAULT_IMAGE = "brainbench/postgres-vector:latest"
IMAGE_ENV = "BRAINBENCH_PRIVATE_BRAIN_IMAGE"
LABEL_PRIVATE_BRAIN = "brainbench.private_brain"
PORT = 5432
# Where Postgres images (ours and the official one) put their socket; bind-mounted from the runner's scratch.
SERVER_SOCKET_DIR = "/var/run/postgresql"
# The seam reaches its server on the loopback of the network namespace they share.
SEAM_ADDRESS = f"127.0.0.1:{PORT}"
# sun_path holds 107 bytes: the runner's socket path must fit.
MAX_SOCKET_PATH = 107
# The server's data directory, on a tmpfs: a clone of gbrain's 12 MB template is ~20 ms there against
# ~125 ms in an overlay layer, and a drop half that (measured with CREATE DATABASE … FILE_COPY on this
# machine).  The mount is world-writable (sticky) so that any Postgres image's own user makes its
# PGDATA there (initdb creates it 0700); WAL is capped so that it cannot take the tmpfs's room.
DATA_MOUNT = "/brainbench-data"
DATA_TMPFS = "rw,nosuid,nodev,size=768m,mode=1777"
MEMORY_LIMIT = "1536m"  # the tmpfs's pages are charged to the container: its 768 MiB and the server's own
DATA_SETTINGS = ("-c", "max_wal_size=128MB", "-c", "min_wal_size=32MB")


def private_brain_image(configured: str | None) -> str:
    return configured or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE


@dataclass
class PrivateBrain:
    """A started private server: its container (whose network namespace the seam joins), and the
    runner's way in."""

    container: Any
    root: Path  # the runner's 0700 scratch dir: owner file and the socket directory
    password: str

    @property
    def socket_dir(self) -> str:
        return str(self.root / "socket")

    @property
    def url(self) -> str:
        """The runner's superuser URL (database ``postgres``), over the Unix socket."""
        return f"postgresql://postgres:{self.password}@/postgres?host={quote(self.socket_dir, safe='/')}"

    @property
    def network_mode(self) -> str:
        return f"container:{self.container.id}"

    def for_seam(self, url: str) -> str:
        """A URL on this server as the seam must use it (its loopback); any other URL unchanged."""
        if parse_target(url).socket_dir != self.socket_dir:
            return url
        return rewrite_host(url, SEAM_ADDRESS)

    def remove(self) -> None:
        """After the seam's container (which holds the server's network namespace too)."""
        with contextlib.suppress(Exception):
            self.container.remove(force=True, v=True)
        shutil.rmtree(self.root, ignore_errors=True)


def start_private_brain(api: DockerApi, run_id: str, seam: str, image: str, start_s: float) -> PrivateBrain:
    """Container and a server that answers; raises ``DockerInfraError`` in one line."""
    name = f"{run_id}-{seam.replace('_', '-')}-brain"
    try:
        labels = runner_labels(api.client.images.get(image).labels, {
            **owner_labels(run_id), LABEL_SEAM: seam, LABEL_PRIVATE_BRAIN: "1"})
    except Exception as exc:
        raise DockerInfraError(
            f"seam {seam}: its image declares a private brain server, whose image {image} is not on the engine "
            f"(build it: scripts/build-images --offline --only postgres-vector; or name another with "
            f"--private-brain-image or {IMAGE_ENV})") from exc
    from docker.types import Mount

    root = owned_scratch_dir(f"{RUN_PREFIX}brain-")
    brain = PrivateBrain(None, root, secrets.token_hex(16))
    try:
        socket_path = Path(brain.socket_dir) / f".s.PGSQL.{PORT}"
        if len(str(socket_path).encode()) > MAX_SOCKET_PATH:
            raise DockerInfraError(f"seam {seam}: the private brain server's socket path {socket_path} is over the "
                                   f"kernel's {MAX_SOCKET_PATH} bytes; point BRAINBENCH_SCRATCH_DIR at a shorter "
                                   "directory")
        Path(brain.socket_dir).mkdir()
        # The server's own uid in its container creates the socket; nobody else on this machine
        # gets past the 0700 root around it.
        os.chmod(brain.socket_dir, 0o777)
        brain.container = api.client.containers.create(
            image, name=name, labels=labels, detach=True, network_mode="none", hostname="postgres",
            environment={"POSTGRES_USER": "postgres", "POSTGRES_PASSWORD": brain.password,
                         "PGDATA": f"{DATA_MOUNT}/pgdata"},
            command=["postgres", *THROWAWAY_SETTINGS, *DATA_SETTINGS],
            mounts=[Mount(target=SERVER_SOCKET_DIR, source=brain.socket_dir, type="bind")],
            tmpfs={DATA_MOUNT: DATA_TMPFS},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=512, mem_limit=MEMORY_LIMIT, init=True)
        brain.container.start()
        wait_ready(brain, seam, start_s)
    except BaseException:
        with contextlib.suppress(Exception):
            api.client.containers.get(name).remove(force=True, v=True)
        shutil.rmtree(root, ignore_errors=True)
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
    raise DockerInfraError(f"seam {seam}: private brain server did not answer on its socket {brain.socket_dir} "
                           f"within {start_s:g} s ({last})")
