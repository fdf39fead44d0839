"""A memory-trust fixture through an image's own memory system (seed contract v2).

The same scenario as our reference memory system runs (``trust_scenario.py``), on a fresh
initialised clone of the image's template per arm, with :class:`~brainbench.memory.image.ImageMemory`
as the provider: every step, read and introspection goes through the image's ``operations``
command.  The runner's scans before and after a purge read the clone itself (it created it,
so it can: trust spec §2.6).  A poisoning fixture's later session is replayed through that
seam's hook on that clone, once per source the image said it opened.

Whatever the image does wrong is its seam's fault for the fixture: a namespace it would not
open, a clone it could not have, a command that crashed or lied.  The steps then fail and the
items are scored as failing, never skipped and never the run's end.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio

from brainbench.brain.guarded import ImageServerError
from brainbench.corpus.loader import LoadedFixture
from brainbench.memory.image import SEAM_FAULT, CommandFault
from brainbench.memory.operations import MemoryOperations
from brainbench.models import memory as m
from brainbench.models.result import Fault
from brainbench.models.trust_run import Arm, TrustFixtureScore
from brainbench.orchestrator.image_memory import operations_of, seam_fault
from brainbench.orchestrator.image_seed import SeededSeam, one_clone
from brainbench.orchestrator.launch import ActiveSeam
from brainbench.orchestrator.replay import replay_fixture
from brainbench.orchestrator.stages import Stages
from brainbench.orchestrator.trust_scenario import NamespaceRefused, Scenario, open_namespace
from brainbench.orchestrator.trust_unit import Capture, trust_suite

SOURCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


class Unreachable(MemoryOperations):
    """The memory system of a clone that could not be had: every request is that seam's fault."""

    name = "unreachable"

    def __init__(self, why: str) -> None:
        self.why = why

    def call(self, request: m.MemoryRequest) -> m.MemoryOutcome:
        return m.refusal(request.op, SEAM_FAULT, self.why)  # type: ignore[no-any-return]


def scenario_of(ops: MemoryOperations, conn: Any, item: LoadedFixture,
                protections: bool) -> tuple[Scenario, str | None]:
    """Open the namespace and run the steps; a namespace the image would not open is its fault, and the
    steps then run against it anyway (each fails as it will), in the fixture's own source."""
    fixture = item.fixture
    why = None
    try:
        opened = open_namespace(ops, fixture, protections)
    except NamespaceRefused as exc:
        # A system without namespaces answers `unsupported` honestly: no fault; its steps run in the
        # fixture's own source and are scored as the spec scores steps that could not run.
        opened = m.NamespaceOpened(sources=[fixture.source])
        why = None if exc.code == "unsupported" else str(exc)
    bad = [s for s in opened.sources if not SOURCE.fullmatch(s) or s in (".", "..")]
    if why is None and (bad or not opened.sources):
        # Sources name the later session's directories and BRAINBENCH_SOURCE: a name, nothing else.
        why = (f"{fixture.fixture_id}: open_namespace answered source {bad[0][:40]!r}, not a source name" if bad
               else f"{fixture.fixture_id}: open_namespace answered no source")
        opened = m.NamespaceOpened(sources=[fixture.source])
    scenario = Scenario(ops, conn, fixture, opened)
    scenario.run()
    return scenario, why


@contextlib.asynccontextmanager
async def _scan_connection(seam: SeededSeam, name: str) -> AsyncIterator[Any]:
    """The runner's own connection to the clone, for its scans (superuser: it created the clone)."""
    cm = seam.brains.dbs.admin(name)
    conn = await seam.in_thread(cm.__enter__)
    try:
        yield conn
    finally:
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await seam.in_thread(lambda: cm.__exit__(None, None, None))


async def image_trust(seam: SeededSeam, item: LoadedFixture, stages: Stages, score: TrustFixtureScore,
                      shown: Capture, workroot: Path, env: Callable[[str, str, Path], dict[str, str]],
                      keep: bool) -> None:
    """Grade ``item`` on ``seam``'s own memory system; its scores, rows and faults go into ``score``/``shown``."""
    suite = trust_suite(item)
    arms: tuple[Arm, ...] = ("protections", "default") if suite == "poisoning" else ("protections",)
    harness = seam.harness
    faults: list[Fault] = []
    for arm in arms:
        async with one_clone(seam, item.fixture, seed=False) as (brain, failure):
            conn_cm: Any = contextlib.nullcontext(None)
            if brain is not None:
                conn_cm = _scan_connection(seam, brain.name)
            try:
                async with conn_cm as conn:
                    ops: MemoryOperations = (operations_of(seam, brain.url, item.fixture) if brain is not None
                                             else Unreachable(failure or "no clone"))
                    if brain is None:
                        faults.append(seam_fault(item.fixture_id, harness, CommandFault("infra_error", failure or "")))
                    scenario, why = await anyio.to_thread.run_sync(
                        scenario_of, ops, conn, item, arm == "protections", abandon_on_cancel=True)
                    if why and brain is not None:
                        faults.append(seam_fault(item.fixture_id, harness, CommandFault("contract_violation", why)))
                    score.steps[f"{arm}:{harness}"] = list(scenario.records.values())
                    if suite != "poisoning":
                        mine = await anyio.to_thread.run_sync(stages.score_trust_fixture, scenario, item,
                                                              abandon_on_cancel=True)
                        for verdict in mine.verdicts:  # explain finds this seam's steps by it
                            verdict.harness = harness
                        score.by_harness[harness] = mine
                    else:
                        observation = await anyio.to_thread.run_sync(
                            stages.observe_poison, scenario, item, arm, abandon_on_cancel=True)
                        capture = await _capture(seam, item, scenario, arm, brain.url if brain else None, workroot,
                                                 env, keep)
                        scored = stages.score_poison(item, observation, capture.texts, harness)
                        (score.protections if arm == "protections" else score.default)[harness] = scored
                        if arm == "protections":
                            shown.rows += capture.rows
                            shown.faults += capture.faults
                            shown.traces += capture.traces
                    faults += [seam_fault(item.fixture_id, harness, f) for f in getattr(ops, "faults", [])]
            except ImageServerError as exc:
                faults.append(seam_fault(item.fixture_id, harness,
                                         CommandFault("infra_error", seam.server_failed(exc))))
    shown.faults += faults


def _written_pages(scenario: Scenario) -> dict[str, set[str]]:
    """slug → the sources the fixture's steps wrote a page of that slug into."""
    out: dict[str, set[str]] = {}
    for rec in scenario.records.values():
        if rec.page_slug:
            out.setdefault(rec.page_slug, set()).add(rec.page_source or scenario.source)
    return out


async def _capture(seam: SeededSeam, item: LoadedFixture, scenario: Scenario, arm: Arm, url: str | None,
                   workroot: Path, env: Callable[[str, str, Path], dict[str, str]], keep: bool) -> Capture:
    """The poisoning fixture's later session through the image's hook on its clone, per source."""
    out = Capture()
    if url is None:
        return out
    active: ActiveSeam = seam.active
    written = _written_pages(scenario)
    for source in scenario.sources:
        workdir = workroot / seam.harness / f"{item.fixture_id}-{arm}-{source}"
        call_env = {**active.env, **env(url, source, workdir)}
        replay = await replay_fixture(item, active.spec, active.process, suites=["poisoning"], env=call_env,
                                      workdir=workdir, timeout_s=active.timeout_s, slug_sources={}, keep=keep,
                                      image=active.info.image, events=seam.contract.events.get(seam.harness))
        out.texts += [text for text in replay.contexts.values() if text]
        # The image's pages are its own: a slug the steps wrote only into another source is a leak.
        out.rows += [r.model_copy(update={"cross_source_slugs": [
            s for s in r.injected_slugs if s in written and source not in written[s]]}) for r in replay.rows]
        out.faults += replay.faults
        out.traces += replay.traces
    return out

