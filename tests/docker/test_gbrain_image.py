"""gbrain's real Claude Code hook, built from a gbrain checkout, reproduces gbrain's reference turns.

Needs GBRAIN_SRC (a gbrain checkout; the test is skipped with that reason otherwise).
It builds the image with scripts/build-gbrain, starts brainbench/postgres-vector, and
plays the seed contract by hand (docs/GBRAIN.md, "What runs where"): gbrain's ``init`` once
on a template database, per fixture a clone seeded by the image's ``seed`` from our
SeedDocument, then the fixture's turns through our own replay (the runner's transcript
synthesis and grading) against the image's hook in a hardened container.  Every claude-code
row of the reference fixtures must come back byte for byte.

init runs as the brain server's superuser here, as in gbrain's own setup: gbrain's schema
needs BYPASSRLS and an event trigger (superuser only), which the least-privilege owner
roles of seed contract v1 do not have (the end-to-end gap, docs/GBRAIN.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from brainbench.corpus.loader import load_corpus
from brainbench.executors.base import RunContext, SeamLaunch
from brainbench.executors.docker import DockerExecutor
from brainbench.executors.docker.config import DockerConfig
from brainbench.harnesses.registry import SEAMS
from brainbench.orchestrator.replay import replay_fixture
from pgvector_brain import ensure_pgvector_image, pgvector_brain  # type: ignore[import-not-found]
from psycopg import sql

GBRAIN_SRC = os.environ.get("GBRAIN_SRC", "")
REPO = Path(__file__).resolve().parents[2]
IMAGE = "brainbench-test/gbrain:latest"
HARDENED = ("--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--memory", "512m", "--pids-limit", "256", "--init", "--user", "10001:10001")

pytestmark = pytest.mark.skipif(not GBRAIN_SRC, reason="GBRAIN_SRC is not set (a path to a gbrain checkout)")


@pytest.fixture(scope="module")
def gbrain_image() -> str:
    build = subprocess.run(["bash", str(REPO / "scripts/build-gbrain"), GBRAIN_SRC, "--tag", IMAGE, "--no-postgres"],
                           capture_output=True, text=True, timeout=1800, check=False)
    assert build.returncode == 0, build.stderr[-3000:]
    return IMAGE


def _expected(reference: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (reference / "turns" / "gbrain-turns-handauthored.jsonl").read_text().splitlines():
        doc = json.loads(line)
        if doc.get("harness") == "claude-code" and doc.get("kind") != "codex-preamble":
            out[doc["fixture_id"]].append(doc)
    return out


def _one_shot(image: str, network: str, verb: str, url: str, stdin: bytes = b"", **env: str) -> None:
    """init or seed as a one-shot container of the image, hardened like the hook."""
    args = ["docker", "run", "--rm", "-i", *HARDENED, "--network", network, "--entrypoint", "/usr/local/bin/bb-gbrain",
            "-e", f"BRAINBENCH_DATABASE_URL={url}", *(x for k, v in env.items() for x in ("-e", f"{k}={v}")),
            image, verb]
    done = subprocess.run(args, input=stdin, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, (verb, done.stderr.decode(errors="replace")[-2000:])


def _database_url(admin_url: str, name: str) -> str:
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


async def _replay(reference: Path, image: str, admin_url: str, run_id: str) -> dict[str, Any]:
    from brainbench.brain.seed_document import seed_document  # seed contract v1 (runner side)

    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    work = Path(tempfile.mkdtemp(prefix="bb-gbrain-"))
    seam_root = work / "claude-code"
    seam_root.mkdir()
    executor = DockerExecutor(DockerConfig(database_url=admin_url), run_id=run_id)
    await executor.prepare(RunContext(run_id=run_id, database_url=admin_url, work_root=work, pool_size=1))
    assert executor.network_name is not None

    def inside(url: str) -> str:  # the URL as containers on the run network see it
        return executor.container_env({"BRAINBENCH_DATABASE_URL": url})["BRAINBENCH_DATABASE_URL"]

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE gbrain_tpl")
    with psycopg.connect(_database_url(admin_url, "gbrain_tpl"), autocommit=True) as conn:
        for ext in ("vector", "pg_trgm", "pgcrypto"):
            conn.execute(sql.SQL("CREATE EXTENSION {}").format(sql.Identifier(ext)))
    _one_shot(image, executor.network_name, "init", inside(_database_url(admin_url, "gbrain_tpl")))

    process = await executor.start(SeamLaunch(seam="claude-code", command=(), mode="exec", image=image,
                                              shared_paths=(str(seam_root),), run_id=run_id))
    results: dict[str, Any] = {}
    try:
        for n, item in enumerate(corpus.fixtures):
            continuity = item.fixture.continuity
            if continuity is not None and continuity.pair_role == "writer":
                continue
            db = f"gbrain_fx_{n}"
            url = _database_url(admin_url, db)
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE gbrain_tpl").format(sql.Identifier(db)))
            # A continuity reader reads what its writer left: here its writer's seed (no write-back).
            seeds = [corpus.pairs[continuity.pair_id].writer.fixture] if continuity is not None else []
            for fixture in [*seeds, item.fixture]:
                _one_shot(image, executor.network_name, "seed", inside(url),
                          seed_document(fixture).model_dump_json().encode(),
                          BRAINBENCH_SOURCE=fixture.source, BRAINBENCH_FIXTURE=fixture.fixture_id)
            workdir = seam_root / item.fixture_id
            env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": item.fixture.source,
                   "CLAUDE_CONFIG_DIR": str(workdir / "claude")}
            results[item.fixture_id] = await replay_fixture(
                item, SEAMS["claude-code"], process, suites=["know-to-ask"], env=env, workdir=workdir,
                timeout_s=30, slug_sources={}, image=image)
    finally:
        await process.stop()
        await executor.close()
    return results


def test_gbrain_hook_reproduces_the_reference_turns(reference: Path, docker_client: Any, gbrain_image: str,
                                                     run_id: str) -> None:
    labels = docker_client.images.get(gbrain_image).labels
    contract = json.loads(labels["io.brainbench.brain"])
    assert contract["version"] == 1 and contract["extensions"] == ["vector", "pg_trgm", "pgcrypto"]
    assert labels["io.brainbench.kind"] == "production"

    with pgvector_brain(docker_client, ensure_pgvector_image(docker_client)) as (_, admin_url):
        results = anyio.run(_replay, reference, gbrain_image, admin_url, run_id)
    checked = 0
    for fixture_id, turns in _expected(reference).items():
        replay = results[fixture_id]
        assert not replay.faults, replay.faults
        rows = {r.turn_id: r for r in replay.rows}
        for want in turns:
            tid = want["turn_id"]
            assert replay.contexts[tid] == want["injected_text"], (fixture_id, tid)
            assert rows[tid].injected_slugs == want["injected_slugs"], (fixture_id, tid)
            assert rows[tid].injected_tokens == want["injected_tokens"], (fixture_id, tid)
            checked += 1
    assert checked == 12  # every claude-code row of the 7 reference fixtures
