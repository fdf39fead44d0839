"""gbrain's real Claude Code hook and OpenClaw context engine, built from a gbrain checkout, graded.

Needs GBRAIN_SRC (a gbrain checkout, which cannot be in this repository): marker ``gbrain``, left out
of scripts/test's passes; ``scripts/check-gbrain PATH`` runs it.  Selected without GBRAIN_SRC, it fails.
It builds the image with scripts/build-gbrain and plays the seed contract by hand, on the
private brain server (brainbench/postgres-vector) the Docker executor starts for the seam
(docs/GBRAIN.md, "What runs where"): gbrain's ``init`` once
on a template database, per fixture a clone seeded by the image's ``seed`` from our
SeedDocument, then the fixture's turns through our own replay (the runner's transcript
synthesis and grading) against the image's hook in a hardened container.  Every claude-code
row of the reference fixtures must come back byte for byte.

init runs as the brain server's superuser here, as in gbrain's own setup: gbrain's schema
needs BYPASSRLS and an event trigger (superuser only).  The second test is the user's path,
``brainbench run --executor docker --image claude-code=<gbrain image> --image openclaw=<gbrain image>``:
the image's label asks for a private brain server (``"server": "private"``), so the runner starts one
Postgres container per seam and gives init, seed, write_back, operations and hook its superuser;
seed contract v2 grades write-back through gbrain's own pipeline and continuity through its hook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import psycopg
import pytest
from brainbench.corpus.loader import load_corpus
from brainbench.executors.base import HookCall, RunContext, SeamLaunch
from brainbench.executors.docker import DockerExecutor
from brainbench.executors.docker.config import DockerConfig
from brainbench.harnesses.registry import SEAMS
from brainbench.orchestrator.replay import replay_fixture
from pgvector_brain import ensure_pgvector_image  # type: ignore[import-not-found]
from psycopg import sql

GBRAIN_SRC = os.environ.get("GBRAIN_SRC", "")
REPO = Path(__file__).resolve().parents[2]
# BB_GBRAIN_TEST_IMAGE: a tag of your own when several checkouts share one engine.
IMAGE = os.environ.get("BB_GBRAIN_TEST_IMAGE", "brainbench-test/gbrain:latest")
pytestmark = pytest.mark.gbrain


@pytest.fixture(scope="session", autouse=True)  # session: before the engine's fixture, which may skip
def _gbrain_checkout() -> None:
    """First, before the engine is asked: without a checkout there is nothing to check."""
    if not GBRAIN_SRC:
        pytest.fail("GBRAIN_SRC is not set: run scripts/check-gbrain PATH (a gbrain checkout)", pytrace=False)


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


def _step(process: Any, verb: str, url: str, stdin: bytes = b"", **env: str) -> None:
    """init or seed in the seam's own container, as the runner runs them (hardened like the hook)."""
    outcome = process.run_command(["/usr/local/bin/bb-gbrain", verb],
                                  HookCall(payload=stdin, env={"BRAINBENCH_DATABASE_URL": url, **env}, timeout_s=180))
    assert outcome.exit_code == 0, (verb, outcome.stderr.decode(errors="replace")[-2000:])


def _database_url(admin_url: str, name: str) -> str:
    """Database ``name`` on the server of ``admin_url`` (a URL over the server's Unix socket)."""
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


async def _replay(reference: Path, image: str, server_image: str, run_id: str, work: Path,
                  hook_env: dict[str, str]) -> dict[str, Any]:
    from brainbench.brain.seed_document import seed_document  # seed contract v1 (runner side)

    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    seam_root = work / "claude-code"
    seam_root.mkdir()
    executor = DockerExecutor(DockerConfig(private_brain_image=server_image), run_id=run_id)
    await executor.prepare(RunContext(run_id=run_id, work_root=work, pool_size=1))
    # The label asks for a private server: the executor starts it with the seam.
    process = await executor.start(SeamLaunch(seam="claude-code", command=(), mode="exec", image=image,
                                              shared_paths=(str(seam_root),), run_id=run_id))
    admin_url = process.brain_server_url
    assert admin_url is not None

    def seam_url(name: str) -> str:  # the same database as the seam reaches it (its loopback)
        return process.box.private.for_seam(_database_url(admin_url, name))
    results: dict[str, Any] = {}
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE gbrain_tpl")
        with psycopg.connect(_database_url(admin_url, "gbrain_tpl"), autocommit=True) as conn:
            for ext in ("vector", "pg_trgm", "pgcrypto"):
                conn.execute(sql.SQL("CREATE EXTENSION {}").format(sql.Identifier(ext)))
        await anyio.to_thread.run_sync(_step, process, "init", seam_url("gbrain_tpl"))
        for n, item in enumerate(corpus.fixtures):
            continuity = item.fixture.continuity
            if continuity is not None and continuity.pair_role == "writer":
                continue
            db = f"gbrain_fx_{n}"
            url = seam_url(db)
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE gbrain_tpl").format(sql.Identifier(db)))
            # A continuity reader reads what its writer left: here its writer's seed (no write-back).
            seeds = [corpus.pairs[continuity.pair_id].writer.fixture] if continuity is not None else []
            for fixture in [*seeds, item.fixture]:
                await anyio.to_thread.run_sync(lambda f=fixture, u=url: _step(
                    process, "seed", u, seed_document(f).model_dump_json().encode(),
                    BRAINBENCH_SOURCE=f.source, BRAINBENCH_FIXTURE=f.fixture_id))
            workdir = seam_root / item.fixture_id
            env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": item.fixture.source,
                   "CLAUDE_CONFIG_DIR": str(workdir / "claude"), **hook_env}
            results[item.fixture_id] = await replay_fixture(
                item, SEAMS["claude-code"], process, suites=["know-to-ask"], env=env, workdir=workdir,
                timeout_s=30, slug_sources={}, image=image)
    finally:
        await process.stop()
        await executor.close()
    return results


# The image's hook executable (hook-entry.ts, the default) and gbrain's whole CLI (BB_GBRAIN_HOOK_ENTRY=cli):
# the same turns, byte for byte.
@pytest.mark.parametrize("hook_env", [{}, {"BB_GBRAIN_HOOK_ENTRY": "cli"}], ids=["hook-entry", "whole-cli"])
def test_gbrain_hook_reproduces_the_reference_turns(reference: Path, docker_client: Any, gbrain_image: str,
                                                     run_id: str, short_scratch: Path,
                                                     hook_env: dict[str, str]) -> None:
    labels = docker_client.images.get(gbrain_image).labels
    contract = json.loads(labels["io.brainbench.brain"])
    assert contract["version"] == 2 and contract["extensions"] == ["vector", "pg_trgm", "pgcrypto"]
    assert labels["io.brainbench.kind"] == "production"
    # gbrain's CLI as gbrain ships it, compiled (scripts/build-gbrain; --from-source is the other one).
    assert labels["io.brainbench.gbrain.launcher"] == "compiled"
    assert contract["operations_verbs"] == ["recall"]

    results = anyio.run(_replay, reference, gbrain_image, ensure_pgvector_image(docker_client), run_id, short_scratch,
                        hook_env)
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


def _run(args: list[str], out: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *args, "--out", str(out),
                           "--ledger", str(out.with_suffix(".ledger.jsonl")), "--quiet"],
                          capture_output=True, text=True, timeout=1800, check=False, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _cells(result: dict[str, Any], harness: str, suite: str) -> dict[str, Any]:
    cell = next(c for c in result["cells"] if (c["harness"], c["suite"]) == (harness, suite))
    return {k: cell[k] for k in ("gold_total", "gold_failed", "metrics", "fixtures")}


# Measured (docs/GBRAIN.md, "The openclaw seam"): the reference openclaw turns where gbrain's real
# context engine (4-turn mixed-role window, slug-only suppression, its Live Context block) points at
# other pages than gbrain's bench row (1-turn window, title-and-slug suppression).
# kta-001 turns 3-4, ms-001 turn 2, ms-002 turns 2-3: entities named in the window's earlier turns
# point again (the real engine suppresses by slug against its prior messages, the bench row by title too
# and against earlier injections, which OpenClaw keeps out of the message list).
OPENCLAW_SLUGS_DIFFER = {("kta-001-deal-recall", 3), ("kta-001-deal-recall", 4), ("ms-001-two-source-alias", 2),
                         ("ms-002-nondefault-active", 2), ("ms-002-nondefault-active", 3)}


def test_run_grades_gbrain_v2_on_both_production_seams(reference: Path, docker_client: Any, gbrain_image: str,
                                                       tmp_path: Path) -> None:
    """Seed contract v2: gbrain's real hook behind claude-code and its real OpenClaw context engine
    behind openclaw, on one run.  Write-back goes through gbrain's own conversation-to-memory pipeline
    with the gold extractor, so its cells equal our reference seams' (the pipeline is the same);
    continuity is graded, not n/a; the openclaw rows are the real engine's."""
    labels = docker_client.images.get(gbrain_image).labels
    contract = json.loads(labels["io.brainbench.brain"])
    assert contract["server"] == "private" and contract["version"] == 2
    assert contract["events"] == {"claude-code": ["UserPromptSubmit", "Stop", "SessionEnd"]}
    env = {**{k: v for k, v in os.environ.items() if k != "CI"},
           "BRAINBENCH_PRIVATE_BRAIN_IMAGE": ensure_pgvector_image(docker_client), "COLUMNS": "250"}
    corpus = ["--fixtures", str(reference / "corpus" / "fixtures"), "--gold", str(reference / "corpus" / "gold")]
    ours = _run([*corpus, "--harness", "claude-code,openclaw"], tmp_path / "ours.json", env)
    out = tmp_path / "gbrain.json"
    result = _run([*corpus, "--executor", "docker", "--image", f"claude-code={gbrain_image}",
                   "--image", f"openclaw={gbrain_image}", "--harness", "claude-code,openclaw", "--jobs", "1"], out, env)
    assert result["seed_failures"] == [] and result["_meta"]["faults"] == []
    seams = {s["harness"]: s for s in result["_meta"]["run"]["seams"]}
    for harness in ("claude-code", "openclaw"):
        assert (seams[harness]["image"], seams[harness]["brain_contract"]) == (gbrain_image, 2)
        assert _cells(result, harness, "write-back") == _cells(ours, harness, "write-back")
        assert _cells(result, harness, "write-back")["gold_failed"] == 0
        continuity = _cells(result, harness, "continuity")
        assert continuity["gold_total"] == 1 and continuity["fixtures"] == ["cont-001-widget-pass-reader"]
    assert result["_meta"].get("not_applicable", []) == []  # the key is left out when nothing is n/a
    # The claude-code rows are still gbrain's reference turns, byte for byte, the continuity reader's too.
    traces = {(t["harness"], t["fixture_id"], t["turn_id"]): t
              for t in map(json.loads, out.with_name("gbrain.trace.jsonl").read_text().splitlines())}
    rows = {(r["harness"], r["fixture_id"], r["turn_id"]): r for r in result["turn_rows"]}
    for fixture_id, turns in _expected(reference).items():
        for want in turns:
            key = ("claude-code", fixture_id, want["turn_id"])
            assert traces[key]["context"] == want["injected_text"], key
            assert rows[key]["injected_slugs"] == want["injected_slugs"], key
            assert rows[key]["injected_tokens"] == want["injected_tokens"], key
    # Where the time went (_meta.phases): one template, seeded clones, and the warm-up calls that started
    # gbrain's serve before the first graded turn (the turns above still match).
    phases = next(p for p in result["_meta"]["phases"]["seams"] if p["harness"] == "claude-code")
    assert phases["image_seeded"] and phases["template_init"]["count"] == 1
    assert phases["clone"]["count"] >= 1 and phases["seed"]["count"] >= 1 and phases["brain_start"]["count"] >= 1
    calls = phases["hook_calls"]
    assert calls["count"] >= 12 and calls["over_deadline"] <= calls["count"]
    # openclaw: every reference turn answered by the real engine; where its pointers differ from
    # gbrain's bench row is the measured set above.
    differ = set()
    for line in (reference / "turns" / "gbrain-turns-handauthored.jsonl").read_text().splitlines():
        want = json.loads(line)
        if want["harness"] != "openclaw":
            continue
        key = ("openclaw", want["fixture_id"], want["turn_id"])
        assert traces[key]["context"].startswith("## Live Context"), key
        if rows[key]["injected_slugs"] != want["injected_slugs"]:
            differ.add((want["fixture_id"], want["turn_id"]))
    assert differ == OPENCLAW_SLUGS_DIFFER
    run_id = result["_meta"]["run"]["run_id"]
    assert not docker_client.containers.list(all=True, filters={"label": f"brainbench.run_id={run_id}"})
