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
import re
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
from brainbench.hooks.codex import MAX_FRAGMENTS
from brainbench.hooks.openclaw import MAX_POINTERS
from brainbench.orchestrator.replay import replay_fixture
from brainbench.reflex.candidates import extract_candidates
from brainbench.reflex.resolve import resolve_pointers
from brainbench.writeback.extractors import GoldExtractor
from brainbench.writeback.pipeline import run_write_back

# Every key a reference line carries, so a new field in the reference data fails here until it is compared.
TURN_KEYS = {"harness", "fixture_id", "turn_id", "injected_slugs", "injected_tokens", "injected_text", "pointers",
             "prior_context_text"}
PREAMBLE_KEYS = {"harness", "kind", "fixture_id", "preamble", "preamble_tokens"}
# The cont-001 reader's index lists an extract receipt whose date and 4-character id come from the
# wall clock (tests/data/reference/turns/README.md): both sides are compared with those masked.
_RECEIPT = re.compile(r"extracts/\d{4}-\d{2}-\d{2}/(.*)/ecf-[0-9a-z]{4}/")


def _unclocked(text: str) -> str:
    return _RECEIPT.sub(r"extracts/DATE/\1/ecf-XXXX/", text)


def _reference_lines(reference: Path) -> list[dict[str, Any]]:
    lines = (reference / "turns" / "gbrain-turns-handauthored.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _expected(reference: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for doc in _reference_lines(reference):
        if doc.get("kind") != "codex-preamble":
            out[(doc["harness"], doc["fixture_id"])].append(doc)
    return out


def _preambles(reference: Path) -> dict[str, dict[str, Any]]:
    return {doc["fixture_id"]: doc for doc in _reference_lines(reference) if doc.get("kind") == "codex-preamble"}


def _pointers(conn: Any, source: str, harness: str, prompt: str, prior: str) -> list[dict[str, str]]:
    """The resolver's pointers for one openclaw/codex turn, given gbrain's own prior context."""
    candidates = extract_candidates(prompt)
    if not candidates:
        return []
    found = resolve_pointers(conn, source, candidates, max_pointers=MAX_FRAGMENTS if harness == "codex" else
                             MAX_POINTERS, prior_context=prior, suppression="slug-and-title", gate=None)
    return [{"slug": p.slug, "source_id": p.source_id, "display": p.display, "arm": p.arm, "synopsis": p.synopsis}
            for p in found]


async def _replay_all(reference: Path, dbs: BrainDatabases, mode: str, work: Path) -> tuple[
        dict[tuple[str, str], Any], dict[tuple[str, str, int], list[dict[str, str]]]]:
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    executor = LocalExecutor(pool_size=1)
    seams = {h: await executor.start(SeamLaunch(seam=h, command=s.command(mode == "stream"), mode=mode))  # type: ignore[arg-type]
             for h, s in SEAMS.items()}
    results: dict[tuple[str, str], Any] = {}
    pointers: dict[tuple[str, str, int], list[dict[str, str]]] = {}
    priors = {(d["harness"], d["fixture_id"], d["turn_id"]): d.get("prior_context_text")
              for d in _reference_lines(reference) if d.get("kind") != "codex-preamble"}
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
                    for turn in item.public_turns():
                        prior = priors.get((harness, item.fixture_id, turn.turn_id))
                        if turn.role == "user" and harness != "claude-code" and prior is not None:
                            pointers[(harness, item.fixture_id, turn.turn_id)] = _pointers(
                                conn, item.fixture.source, harness, turn.text, prior)
    finally:
        for process in seams.values():
            await process.stop()
    return results, pointers


@pytest.mark.parametrize("mode", ["stream", "exec"])
def test_reference_turns_byte_for_byte(reference: Path, pg_server: object, mode: str, short_scratch: Path) -> None:
    dbs = BrainDatabases(pg_server, f"pytest_ref_{mode}", list(SEAMS))  # type: ignore[arg-type]
    dbs.prepare()
    try:
        results, pointers = anyio.run(_replay_all, reference, dbs, mode, short_scratch)
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
            assert rows[tid].harness == want["harness"] and rows[tid].fixture_id == want["fixture_id"]
            if harness == "claude-code":  # text only: no pointers, and its adapter ignores the prior context
                assert want["pointers"] == [] and "prior_context_text" not in want
            else:
                assert set(want) == TURN_KEYS, (harness, fixture_id, tid)
                assert _unclocked(replay.priors[tid]) == _unclocked(want["prior_context_text"]), (harness, fixture_id,
                                                                                                 tid)
                assert pointers[(harness, fixture_id, tid)] == want["pointers"], (harness, fixture_id, tid)
            assert not replay.faults
            checked += 1
    assert checked == 36
    preambles = _preambles(reference)
    for fixture_id, want in preambles.items():
        assert set(want) == PREAMBLE_KEYS
        got = results[("codex", fixture_id)].preamble
        # Whole text, line order included: a reversed index has the same token count.
        assert _unclocked(got) == _unclocked(want["preamble"]), fixture_id
        assert len(got) == len(want["preamble"]) and -(-len(got) // 4) == want["preamble_tokens"], fixture_id
    assert len(preambles) == 5
