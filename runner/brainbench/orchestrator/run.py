"""Run a benchmark: seed isolated brains, replay every fixture through every seam, grade.

Fixtures run concurrently (``jobs``) but results are assembled in corpus order,
so ``--jobs 1`` and ``--jobs 8`` produce the same cells and rows.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import psycopg

from brainbench.brain.budget import Mode, choose_concurrency, describe_choice, probe_capacity, warm_workers
from brainbench.brain.databases import Brain, BrainDatabases, sweep_databases
from brainbench.brain.seeding import SeedError, SeedReport, seed_fixture
from brainbench.brain.server import ExternalPostgres, PostgresServer, ServerError, open_server
from brainbench.corpus.loader import ContinuityPair, Corpus, LoadedFixture
from brainbench.executors.base import ExecutorError, RunContext
from brainbench.models.budget import Concurrency
from brainbench.models.config import RunConfig
from brainbench.models.result import Fault, Receipt, RunInfo, RunResult, SeedFailure, TraceInfo, TurnRow
from brainbench.models.trace import CONTEXT_CAP, TurnTrace
from brainbench.orchestrator.assemble import assemble_cells, metric_names
from brainbench.orchestrator.launch import ActiveSeam, Providers, start_seams
from brainbench.orchestrator.replay import SeamReplay, replay_fixture
from brainbench.orchestrator.selection import Plan, plan_run, retrieval_suites, wants_write_back
from brainbench.scratch import scratch_parent

Progress = Callable[[str], None]


class RunAborted(RuntimeError):
    """The run cannot produce a valid result (e.g. write-back could not store its page)."""


# Expected reasons for a run to stop without a result: reported in one line, exit 2.
RUN_FAILURES = (RunAborted, ServerError, ExecutorError)


@dataclass
class FixtureOutcome:
    """Everything one fixture (or pair) contributed; assembled later in corpus order."""

    rows: list[TurnRow] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    write_back: Any | None = None
    continuity: dict[str, Any] = field(default_factory=dict)  # harness → ContinuityScore
    seed_failure: SeedFailure | None = None
    traces: list[TurnTrace] = field(default_factory=list)


def git_sha() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def seam_modes(config: RunConfig) -> list[Mode]:
    """Each seam's invocation mode, as _start_seam will choose it."""
    modes: list[Mode] = []
    for harness in dict.fromkeys(config.harnesses):
        override = config.seams.get(harness)
        modes.append((override.mode if override and override.mode else None) or config.mode)
    return modes


class Runner:
    def __init__(self, config: RunConfig, corpus: Corpus, progress: Progress | None = None) -> None:
        self.config = config
        self.corpus = corpus
        self.progress = progress or (lambda _: None)
        self.run_id = uuid.uuid4().hex[:10]
        self.plan: Plan = plan_run(corpus, config)
        self.outcomes: dict[str, FixtureOutcome] = {}
        self.started_at = datetime.now(UTC)
        self.seams: dict[str, ActiveSeam] = {}
        self.interrupted_by: str | None = None
        self.work_root: Path | None = None
        self.concurrency: Concurrency | None = None  # chosen by run_benchmark against the server

    @property
    def jobs(self) -> int:
        if self.concurrency is not None:
            return self.concurrency.jobs
        return self.config.jobs or 1

    # --- per fixture ----------------------------------------------------------------

    def _env(self, url: str, source: str, workdir: Path) -> dict[str, str]:
        return {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": source,
                "CLAUDE_CONFIG_DIR": str(workdir / "claude")}

    async def _replay_all(self, item: LoadedFixture, suites: list[str], url: str, workroot: Path, key: str,
                          slug_sources: dict[str, set[str]]) -> list[SeamReplay]:
        replays = []
        for harness, seam in self.seams.items():
            workdir = workroot / harness / key  # inside the seam's own mounted subtree
            env = {**seam.env, **self._env(url, item.fixture.source, workdir)}
            replays.append(await replay_fixture(item, seam.spec, seam.process, suites=suites, env=env,
                                                workdir=workdir, timeout_s=seam.timeout_s,
                                                slug_sources=slug_sources, keep=self.config.keep,
                                                image=seam.info.image))
        return replays

    async def _diagnose(self, conn: Any, item: LoadedFixture, replays: list[SeamReplay],
                        slug_sources: dict[str, set[str]]) -> list[TurnTrace]:
        # While the brain is still leased: the reference replays missed turns on this same brain.
        from brainbench.orchestrator.diagnose import diagnose_replay

        def work() -> list[TurnTrace]:
            return [t for r in replays for t in diagnose_replay(conn, item, r.traces, r.contexts, slug_sources)]

        return await anyio.to_thread.run_sync(work)

    async def _regular(self, item: LoadedFixture, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        async with self._brain(dbs) as brain:
            return await self._regular_in(item, brain, workroot)

    async def _regular_in(self, item: LoadedFixture, brain: Brain, workroot: Path) -> FixtureOutcome:
        out = FixtureOutcome()
        conn, url = brain.conn, brain.url
        try:
            report = await anyio.to_thread.run_sync(seed_fixture, conn, item.fixture)
        except SeedError as exc:
            out.seed_failure = SeedFailure(fixture_id=item.fixture_id, error=str(exc))
            return out
        suites = retrieval_suites(item, self.config)
        if suites:
            replays = await self._replay_all(item, suites, url, workroot, item.fixture_id, report.slug_sources)
            for replay in replays:
                out.rows += replay.rows
                out.faults += replay.faults
            out.traces += await self._diagnose(conn, item, replays, report.slug_sources)
        if wants_write_back(item, self.config):
            out.write_back = await anyio.to_thread.run_sync(self._write_back, conn, item)
        return out

    @contextlib.asynccontextmanager
    async def _brain(self, dbs: BrainDatabases) -> AsyncIterator[Brain]:
        lease = dbs.lease()
        brain = await anyio.to_thread.run_sync(lease.__enter__)
        try:
            yield brain
        finally:
            with anyio.CancelScope(shield=True):  # an interrupted fixture still empties its brain
                await anyio.to_thread.run_sync(lease.__exit__, None, None, None)

    def _write_back(self, conn: Any, item: LoadedFixture) -> Any:
        from brainbench.writeback.extractors import BudgetExhaustedError, LlmError
        from brainbench.writeback.pipeline import run_write_back

        try:
            return run_write_back(conn, item, self._extractor(item))
        except (SeedError, BudgetExhaustedError, LlmError) as exc:
            raise RunAborted(f"write-back failed for {item.fixture_id}: {exc}") from exc

    def _extractor(self, item: LoadedFixture) -> Any:
        from brainbench.writeback import extractors

        if self.config.llm:
            return self.llm_extractor
        return extractors.GoldExtractor(item)

    async def _pair(self, pair: ContinuityPair, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        async with self._brain(dbs) as brain:
            return await self._pair_in(pair, brain, workroot)

    async def _pair_in(self, pair: ContinuityPair, brain: Brain, workroot: Path) -> FixtureOutcome:
        out = FixtureOutcome()
        conn, url = brain.conn, brain.url
        try:
            writer = await anyio.to_thread.run_sync(seed_fixture, conn, pair.writer.fixture)
            reader = await anyio.to_thread.run_sync(seed_fixture, conn, pair.reader.fixture)
        except SeedError as exc:
            out.seed_failure = SeedFailure(fixture_id=pair.pair_id, error=str(exc))
            return out
        slug_sources = SeedReport.merge(writer, reader).slug_sources
        score = await anyio.to_thread.run_sync(self._write_back, conn, pair.writer)
        if "write-back" in pair.writer.fixture.suites and "write-back" in self.config.suites:
            out.write_back = score
        replays = await self._replay_all(pair.reader, ["continuity"], url, workroot, f"pair-{pair.pair_id}",
                                         slug_sources)
        for harness, replay in zip(self.seams, replays, strict=True):
            out.rows += replay.rows
            out.faults += replay.faults
            out.continuity[harness] = await anyio.to_thread.run_sync(
                _score_continuity, conn, pair.reader, replay.injected)
        out.traces += await self._diagnose(conn, pair.reader, replays, slug_sources)
        return out

    # --- whole run ----------------------------------------------------------------------

    async def _run(self, server: PostgresServer) -> None:
        dbs = BrainDatabases(server, self.run_id)
        workroot = Path(tempfile.mkdtemp(prefix=f"brainbench-run-{self.run_id}-", dir=scratch_parent()))
        self.work_root = workroot
        # Warm stream processes per seam: bounded by cores, not jobs (brain/budget.py counts them).
        providers = Providers(self.config, RunContext(run_id=self.run_id, database_url=server.database_url("postgres"),
                                                      work_root=workroot, pool_size=warm_workers(self.jobs)))
        self.llm_extractor: Any = None
        if self.config.llm:
            from brainbench.writeback import extractors

            self.llm_extractor = extractors.LlmExtractor.from_env(self.config.budget_usd)
        try:
            # Leftover databases of runs that died on this host (SIGKILL, power loss).
            # Databases and seam processes are independent until the first hook call.
            async def prepare_brains() -> None:
                try:
                    await anyio.to_thread.run_sync(sweep_databases, server)
                    await anyio.to_thread.run_sync(dbs.prepare)
                except psycopg.OperationalError as exc:
                    raise ServerError(f"cannot use the brain database server: {exc}".strip()) from exc

            async def prepare_seams() -> None:
                await providers.prepare()
                await start_seams(self.config, providers, workroot, self.seams)

            async with anyio.create_task_group() as start_up:
                start_up.start_soon(prepare_brains)
                start_up.start_soon(prepare_seams)
            limiter = anyio.CapacityLimiter(self.jobs)

            async def one(key: str, work: Callable[[], Any]) -> None:
                async with limiter:
                    self.outcomes[key] = await work()
                    self.progress(key)

            async with anyio.create_task_group() as tg:
                for item in self.plan.regular:
                    if item.fixture_id not in self.outcomes:
                        tg.start_soon(one, item.fixture_id, lambda i=item: self._regular(i, dbs, workroot))
                for pair in self.plan.pairs:
                    if f"pair:{pair.pair_id}" not in self.outcomes:
                        tg.start_soon(one, f"pair:{pair.pair_id}", lambda p=pair: self._pair(p, dbs, workroot))
        finally:
            with anyio.CancelScope(shield=True):
                for seam in self.seams.values():
                    with contextlib.suppress(Exception):
                        await seam.process.stop()
                await providers.close(interrupted=self.interrupted_by is not None)
                await anyio.to_thread.run_sync(dbs.close)
                if not self.config.keep:
                    shutil.rmtree(workroot, ignore_errors=True)

    async def run(self, server: PostgresServer) -> RunResult:
        async with anyio.create_task_group() as outer:
            # The watcher is up before any brain or seam exists, so every interruption
            # goes through the same cleanup path.
            outer.start_soon(self._watch_signals, outer.cancel_scope)
            try:
                await self._run(server)
            finally:
                outer.cancel_scope.cancel()
        if self.interrupted_by is not None:
            return self.result(complete=False, interrupted_by=self.interrupted_by)
        return self.result()


    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        # SIGINT/SIGTERM stop the replay; the finally-block of run() still stops
        # seams and drops databases, and the caller writes a partial result.
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                self.interrupted_by = signal.Signals(signum).name
                scope.cancel()
                return

    def _resume_state(self) -> dict[str, dict[str, Any]]:
        state: dict[str, dict[str, Any]] = {}
        for key, o in self.outcomes.items():
            state[key] = {
                "write_back": o.write_back.model_dump(mode="json") if o.write_back is not None else None,
                "continuity": {h: c.model_dump(mode="json") for h, c in o.continuity.items()},
                "seed_failure": o.seed_failure.model_dump(mode="json") if o.seed_failure else None,
            }
        return state

    def resume_from(self, previous: RunResult) -> None:
        """Adopt the finished fixtures of an interrupted run of the same corpus and config."""
        from brainbench.models.writeback import ContinuityScore, WriteBackScore

        run = previous.meta.run
        state = (run.resume_state or {}) if run else {}
        readers = {f"pair:{p.pair_id}": p.reader.fixture_id for p in self.plan.pairs}
        for key in run.completed_fixtures if run else []:
            if key not in state:
                continue
            fid = readers.get(key, key)
            saved = state[key]
            self.outcomes[key] = FixtureOutcome(
                rows=[r for r in previous.turn_rows if r.fixture_id == fid],
                faults=[f for f in previous.meta.faults if f.fixture_id == fid],
                write_back=WriteBackScore.model_validate(saved["write_back"]) if saved.get("write_back") else None,
                continuity={h: ContinuityScore.model_validate(c) for h, c in (saved.get("continuity") or {}).items()},
                seed_failure=SeedFailure.model_validate(saved["seed_failure"]) if saved.get("seed_failure") else None,
                traces=[t for t in previous.trace if t.fixture_id == fid],
            )

    def ordered_keys(self) -> list[str]:
        return [i.fixture_id for i in self.plan.regular] + [f"pair:{p.pair_id}" for p in self.plan.pairs]

    def result(self, complete: bool = True, interrupted_by: str | None = None) -> RunResult:
        done = [self.outcomes[k] for k in self.ordered_keys() if k in self.outcomes]
        rows = [r for o in done for r in o.rows]
        faults = [f for o in done for f in o.faults]
        cells = assemble_cells(self.config, self.seams, rows, done)
        fault_counts: dict[str, int] = {}
        for f in faults:
            fault_counts[f.fault_class] = fault_counts.get(f.fault_class, 0) + 1
        meta_run = RunInfo(
            run_id=self.run_id, executor=self.config.executor, jobs=self.jobs,
            harnesses=list(self.config.harnesses), suites=list(self.config.suites),
            started_at=self.started_at.isoformat().replace("+00:00", "Z"),
            finished_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            complete=complete, interrupted_by=interrupted_by,
            completed_fixtures=[k for k in self.ordered_keys() if k in self.outcomes],
            fixture_selection=list(self.config.fixture_ids) or None,
            seams=[s.info for s in self.seams.values()], fault_counts=fault_counts,
            resume_state=None if complete else self._resume_state(), concurrency=self.concurrency,
        )
        receipt = Receipt(
            fixtures_hash=self.corpus.fixtures_hash, harness_sha=git_sha(),
            ts=self.started_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            cmd_args=self.config.cmd_args, seed=self.config.seed,
            include_holdout=self.config.include_holdout, llm=self.config.llm,
        )
        from brainbench.metrics.glossary import glossary_for

        traces = [t for o in done for t in o.traces]
        kept = str(self.work_root) if self.config.keep and self.work_root else None
        result = RunResult.model_validate({
            "receipt": receipt, "cells": cells, "turn_rows": rows,
            "seed_failures": [o.seed_failure for o in done if o.seed_failure is not None],
            "_meta": {"metric_glossary": glossary_for(metric_names(cells)), "run": meta_run, "faults": faults,
                      "trace": TraceInfo(rows=len(traces), context_cap=CONTEXT_CAP, work_root=kept) if kept else None},
        })
        result.trace.extend(traces)
        return result


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _score_continuity(conn: Any, reader: LoadedFixture, injected: set[str]) -> Any:
    from brainbench.writeback.continuity import score_continuity

    return score_continuity(conn, reader, injected)


def _open_budgeted(config: RunConfig, runner: Runner, notify: Progress) -> PostgresServer:
    """Choose the run's jobs against the server's connections, then open (or size) the server."""
    modes = seam_modes(config)
    if config.database_url:
        server = ExternalPostgres(config.database_url)
        capacity = probe_capacity(server.database_url("postgres"))
        runner.concurrency = choose_concurrency(config.jobs, modes, capacity)
        notify(describe_choice(runner.concurrency, capacity))
        return server
    runner.concurrency = choose_concurrency(config.jobs, modes)
    notify(describe_choice(runner.concurrency))
    return open_server(None, max_connections=runner.concurrency.server_max_connections)


def run_benchmark(config: RunConfig, corpus: Corpus, progress: Progress | None = None,
                  resume: RunResult | None = None, notify: Progress | None = None) -> RunResult:
    """Run the benchmark; ``notify`` receives the one-line diagnostics (the jobs chosen, warnings)."""
    runner = Runner(config, corpus, progress)
    if resume is not None:
        runner.resume_from(resume)
    # Until the run's own signal watcher is up, SIGTERM must unwind like SIGINT
    # (its default action would kill us with the server still running).
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        server = _open_budgeted(config, runner, notify or (lambda _: None))
    except KeyboardInterrupt as exc:
        return runner.result(complete=False, interrupted_by=str(exc) or "SIGINT")
    finally:
        signal.signal(signal.SIGTERM, previous)
    try:
        return anyio.run(runner.run, server)
    except BaseExceptionGroup as group:
        # Task-group failures arrive wrapped; surface the one that explains the abort.
        explained = group.subgroup(RUN_FAILURES)
        while explained is not None:
            first = explained.exceptions[0]
            if not isinstance(first, BaseExceptionGroup):
                raise first from None
            explained = first
        raise
    finally:
        server.close()
