"""brainbench/postgres-vector: the Postgres that image-seeded brains (gbrain) need.

Built hermetically from Debian 13 packages (scripts/build-images --offline --only
postgres-vector); tests/pgvector_brain.py builds it when it is missing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import anyio
import psycopg
import pytest
from brainbench.executors.base import HookCall, SeamLaunch
from brainbench.executors.docker import DockerExecutor
from brainbench.executors.docker.config import DockerConfig
from pgvector_brain import ensure_pgvector_image, pgvector_brain  # type: ignore[import-not-found]


@pytest.fixture(scope="module")
def brain(docker_client: Any) -> Iterator[tuple[Any, str]]:
    """A running postgres-vector container publishing 5432 on a random loopback port."""
    with pgvector_brain(docker_client, ensure_pgvector_image(docker_client)) as running:
        yield running


def test_extensions_gbrain_needs_are_there(brain: tuple[Any, str]) -> None:
    container, url = brain
    with psycopg.connect(url, autocommit=True) as conn:
        # POSTGRES_USER / POSTGRES_DB are honoured as by harness_images/postgres.
        assert conn.execute("SELECT current_user, current_database()").fetchone() == ("brain", "brains")
        assert conn.execute("SHOW server_version_num").fetchone()[0] >= "170000"
        for ext in ("vector", "pg_trgm", "pgcrypto"):
            conn.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        versions = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
        # The extensions work, not merely install: one operator of each.
        distance = conn.execute("SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector").fetchone()[0]
        similarity = conn.execute("SELECT similarity('alice example', 'alice exampel')").fetchone()[0]
        digest = conn.execute("SELECT encode(digest('brain', 'sha256'), 'hex')").fetchone()[0]
    major, minor = (int(x) for x in versions["vector"].split(".")[:2])
    assert (major, minor) >= (0, 5), versions
    assert versions["pg_trgm"] and versions["pgcrypto"], versions
    assert distance == 1.0 and 0 < similarity < 1
    assert digest == hashlib.sha256(b"brain").hexdigest()
    labels = container.image.labels
    assert labels["io.brainbench.role"] == "postgres"
    assert labels["io.brainbench.postgres-extensions"] == "vector,pg_trgm,pgcrypto"


def test_docker_run_reaches_a_published_brain_by_its_loopback_url(hook_image: str, brain: tuple[Any, str],
                                                                   run_id: str, labelled_objects: Any,
                                                                   docker_client: Any) -> None:
    # `brainbench run --executor docker --database-url postgresql://…@127.0.0.1:PORT/…`: the
    # executor finds the container publishing PORT (no compose label, no extra flag), attaches
    # it to the internal run network, and hands containers the alias URL.
    container, url = brain

    async def body() -> tuple[Any, str | None]:
        ex = DockerExecutor(DockerConfig(database_url=url), run_id=run_id)
        try:
            proc = await ex.start(SeamLaunch(seam="codex", command=(), mode="exec", image=hook_image))
            outcome = await proc.call(HookCall(json.dumps({"prompt": "tcp"}).encode(),
                                               ex.container_env({"BRAINBENCH_DATABASE_URL": url}), 10))
            attached = docker_client.networks.get(ex.network_name).attrs["Containers"]
            assert container.id in attached, "the published brain was not the container attached"
            return outcome, ex.db_host_override
        finally:
            await ex.close()

    outcome, override = anyio.run(body)
    assert outcome.exit_code == 0, outcome
    assert json.loads(outcome.stdout)["hookSpecificOutput"]["additionalContext"] == "connected to postgres"
    assert override == "postgres:5432"
    assert labelled_objects(run_id) == ([], [])
    container.reload()
    assert container.status == "running"
