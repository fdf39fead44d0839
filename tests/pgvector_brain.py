"""A running brainbench/postgres-vector container for tests (docs/GBRAIN.md).

Built on demand (scripts/build-images --offline --only postgres-vector) so a test never
passes on an absent image; BB_POSTGRES_VECTOR_IMAGE names another build of it.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parents[1]
IMAGE = os.environ.get("BB_POSTGRES_VECTOR_IMAGE", "brainbench/postgres-vector:latest")
PASSWORD = "bb-vector-test"


def ensure_pgvector_image(client: Any) -> str:
    try:
        client.images.get(IMAGE)
    except Exception:
        repo, _, tag = IMAGE.rpartition(":")
        assert repo == "brainbench/postgres-vector", f"{IMAGE} is absent and only our own image can be built"
        build = subprocess.run(["bash", str(REPO / "scripts/build-images"), "--offline", "--only", "postgres-vector",
                                "--tag", tag], capture_output=True, text=True, timeout=1800, check=False)
        assert build.returncode == 0, build.stderr[-3000:]
    return IMAGE


@contextmanager
def pgvector_brain(client: Any, image: str, *, user: str = "brain", db: str = "brains") -> Iterator[tuple[Any, str]]:
    """(container, superuser URL on a random loopback port); removed with its network on exit."""
    name = f"bbtest-pgvector-{uuid.uuid4().hex[:8]}"
    # A network of its own: the engine's default bridge is not needed (nor always usable).
    network = client.networks.create(name, driver="bridge")
    container = client.containers.run(
        image, name=name, detach=True, network=name,
        environment={"POSTGRES_PASSWORD": PASSWORD, "POSTGRES_USER": user, "POSTGRES_DB": db},
        ports={"5432/tcp": ("127.0.0.1", None)})
    try:
        container.reload()
        port = container.ports["5432/tcp"][0]["HostPort"]
        url = f"postgresql://{user}:{PASSWORD}@127.0.0.1:{port}/{db}"
        deadline = time.monotonic() + 90
        while True:  # initdb, then the restart into the listening server
            try:
                with psycopg.connect(url, connect_timeout=3) as conn:
                    conn.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise AssertionError(container.logs()[-3000:].decode(errors="replace")) from None
                time.sleep(0.5)
        yield container, url
    finally:
        container.remove(force=True, v=True)
        network.remove()
