"""A private brain server keeps its data on a bounded tmpfs of its own, never on the host's disk.

A seam's image is its private server's superuser (docs/GBRAIN.md, "Why a private server"): it may
write as much as it likes.  Filling the server's data directory must end in Postgres's own "No
space left on device" for that server, which goes on answering, while the container's writable
layer (the engine's disk) stays as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from brainbench.executors.docker.client import DockerApi
from brainbench.executors.docker.private_brain import (
    DATA_MOUNT,
    MEMORY_LIMIT,
    PrivateBrain,
    start_private_brain,
)
from pgvector_brain import ensure_pgvector_image  # type: ignore[import-not-found]

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def brain(docker_client: Any, run_id: str) -> Iterator[PrivateBrain]:
    image = ensure_pgvector_image(docker_client)
    api = DockerApi()
    started = start_private_brain(api, run_id, "codex", image, 60)
    try:
        yield started
    finally:
        started.remove()
        api.close()


def _fill(conn: psycopg.Connection) -> psycopg.Error:
    """Insert until the data directory is full; the error that stopped it."""
    for _ in range(200):  # 8 MB a round: the tmpfs's 768 MiB are full well before the end
        try:
            conn.execute("INSERT INTO junk SELECT repeat(md5(g::text), 200) FROM generate_series(1, 1000) g")
        except (psycopg.errors.DiskFull, psycopg.OperationalError) as exc:
            return exc
    pytest.fail("200 rounds of 8 MB and the data directory never filled")


def _answers_again(url: str, gave_up: Callable[[], bool], within_s: float = 120.0) -> tuple[int, ...] | None:
    """``SELECT 1`` as soon as the server answers it, or None once it has given up.  After a PANIC Postgres
    restarts its backends and replays its WAL; until that recovery ends a connection is refused ("in
    recovery mode") or dropped.  A recovery that cannot write on the full disk ends the server instead."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                return conn.execute("SELECT 1").fetchone()
        except psycopg.OperationalError:
            if gave_up():
                return None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


# What Postgres logs when the recovery after a PANIC fails (seen once in the full suite: the disk was
# still full) and the postmaster exits rather than serve.
_GAVE_UP = ("aborting startup due to startup process failure", "database system is shut down")


def _gave_up_after_panic(docker_client: Any, brain: PrivateBrain) -> bool:
    log = docker_client.api.logs(brain.container.id).decode("utf-8", "replace")
    after = log[log.find("PANIC"):] if "PANIC" in log else ""
    return any(words in after for words in _GAVE_UP)


def _writable_layer_bytes(docker_client: Any, brain: PrivateBrain) -> int:
    (listed,) = docker_client.api.containers(all=True, size=True, filters={"id": brain.container.id})
    return int(listed.get("SizeRw") or 0)


def test_a_brain_that_fills_its_data_directory_fails_alone_and_off_the_host_disk(
        docker_client: Any, brain: PrivateBrain) -> None:
    info = docker_client.api.inspect_container(brain.container.id)
    assert DATA_MOUNT in (info["HostConfig"]["Tmpfs"] or {})
    assert info["HostConfig"]["Memory"] == 1536 * 1024 * 1024 == int(MEMORY_LIMIT.removesuffix("m")) * 1024 * 1024
    with psycopg.connect(brain.url, autocommit=True) as conn:
        assert conn.execute("SHOW data_directory").fetchone()[0].startswith(DATA_MOUNT + "/")
    layer_before = _writable_layer_bytes(docker_client, brain)

    with psycopg.connect(brain.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE junk (blob text STORAGE PLAIN)")  # no compression, no TOAST: pages fill
        stopped = _fill(conn)
    # Postgres's own "No space left on device": the statement's error when a table file could not grow,
    # or, when the full disk met a WAL write, a PANIC in its log (it then restarts its backends and
    # replays its WAL) with the connection lost.
    if isinstance(stopped, psycopg.errors.DiskFull):
        assert "No space left on device" in str(stopped)
    else:
        log = docker_client.api.logs(brain.container.id).decode("utf-8", "replace")
        assert "No space left on device" in log and "PANIC" in log, (stopped, log[-2000:])

    # The server is still there for whoever asks next (read-only: on a full disk any write may PANIC it
    # again), unless its own recovery from a PANIC could not write either; and it wrote nothing to the
    # engine's disk.
    answer = _answers_again(brain.url, lambda: _gave_up_after_panic(docker_client, brain))
    assert answer == (1,) or (answer is None and not isinstance(stopped, psycopg.errors.DiskFull))
    assert _writable_layer_bytes(docker_client, brain) - layer_before < 16 * 1024 * 1024
