"""Every (seam, fixture, user turn) of gbrain's reference output, reproduced byte for byte.

The reference turns are gbrain v0.46.28's, so the seams behave like that release
(``BRAINBENCH_BEHAVIOUR=0.46``); what gbrain 0.60 changes is pinned by tests/hooks/test_trust_labels.py
and, on gbrain's whole corpus, by tests/run/test_gbrain_releases.py.

The seams run as real separate programs (exec: one process per hook call;
stream: warm processes) against a real embedded Postgres; the runner grades only
what comes back on the wire.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.brain.databases import BrainDatabases
from brainbench.brain.seeding import seed_fixture
from brainbench.corpus.loader import load_corpus
from brainbench.executors.base import SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.registry import SEAMS
from brainbench.orchestrator.replay import replay_fixture
from brainbench.writeback.extractors import GoldExtractor
from brainbench.writeback.pipeline import run_write_back


def _expected(reference: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in (reference / "turns" / "gbrain-turns-handauthored.jsonl").read_text().splitlines():
        doc = json.loads(line)
        if doc.get("kind") != "codex-preamble":
            out[(doc["harness"], doc["fixture_id"])].append(doc)
    return out


async def _replay_all(reference: Path, dbs: BrainDatabases, mode: str, work: Path) -> dict[tuple[str, str], Any]:
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    executor = LocalExecutor(pool_size=1)
    seams = {h: await executor.start(SeamLaunch(seam=h, command=s.command(mode == "stream"), mode=mode))  # type: ignore[arg-type]
             for h, s in SEAMS.items()}
    results: dict[tuple[str, str], Any] = {}
    try:
        for item in corpus.fixtures:
            if item.fixture.continuity is not None and item.fixture.continuity.pair_role == "writer":
                continue
            # A lease, as in a run: each seam reads through its own least-privilege role.
            with dbs.lease() as brain:
                conn = brain.conn
                slug_sources = {}
                if item.fixture.continuity is not None:  # the reader replays on the writer's written brain
                    writer = corpus.pairs[item.fixture.continuity.pair_id].writer
                    slug_sources = seed_fixture(conn, writer.fixture).slug_sources
                    run_write_back(conn, writer, GoldExtractor(writer))
                slug_sources |= seed_fixture(conn, item.fixture).slug_sources
                for harness, process in seams.items():
                    env = {"BRAINBENCH_DATABASE_URL": brain.hook_urls[harness],
                           "BRAINBENCH_SOURCE": item.fixture.source, "BRAINBENCH_BEHAVIOUR": "0.46",
                           "CLAUDE_CONFIG_DIR": str(work / harness / "claude")}
                    results[(harness, item.fixture_id)] = await replay_fixture(
                        item, SEAMS[harness], process, suites=["know-to-ask"], env=env, workdir=work / harness,
                        timeout_s=30, slug_sources=slug_sources)
    finally:
        for process in seams.values():
            await process.stop()
    return results


@pytest.mark.parametrize("mode", ["stream", "exec"])
def test_reference_turns_byte_for_byte(reference: Path, pg_server: object, mode: str, short_scratch: Path) -> None:
    dbs = BrainDatabases(pg_server, f"pytest_ref_{mode}", list(SEAMS))  # type: ignore[arg-type]
    dbs.prepare()
    try:
        results = anyio.run(_replay_all, reference, dbs, mode, short_scratch)
    finally:
        dbs.close()
    expected = _expected(reference)
    checked = 0
    for (harness, fixture_id), turns in expected.items():
        replay = results[(harness, fixture_id)]
        rows = {r.turn_id: r for r in replay.rows}
        for want in turns:
            tid = want["turn_id"]
            got_text = replay.contexts[tid]
            assert rows[tid].injected_slugs == want["injected_slugs"], (harness, fixture_id, tid)
            # The cont-001 reader's codex preamble holds a clock-dependent receipt slug
            # (date, 4-char id); its length — all the tokens see — is fixed.
            assert got_text == want["injected_text"], (harness, fixture_id, tid)
            assert rows[tid].injected_tokens == want["injected_tokens"], (harness, fixture_id, tid)
            assert not replay.faults
            checked += 1
    assert checked == 36
