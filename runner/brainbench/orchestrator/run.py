"""Run a benchmark: seed isolated brains, replay every fixture through every seam, grade.

Fixtures run concurrently (``jobs``) but results are assembled in corpus order,
so ``--jobs 1`` and ``--jobs 8`` produce the same cells and rows.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import psycopg

from brainbench.brain.budget import (
    HOOK_ROLE_SLACK,
    Mode,
    choose_concurrency,
    describe_choice,
    probe_capacity,
    warm_workers,
)
from brainbench.brain.databases import Brain, BrainDatabases, sweep_databases
from brainbench.brain.seeding import SeedError, SeedReport, seed_fixture
from brainbench.brain.server import (
    DatabaseFailure,
    ExternalPostgres,
    PostgresServer,
    ServerError,
    first_line,
    open_server,
)
from brainbench.corpus.loader import ContinuityPair, Corpus, LoadedFixture
from brainbench.disk_full import disk_full_message, is_disk_full
from brainbench.executors.base import ExecutorError
from brainbench.models.behaviour import BEHAVIOUR_ENV, NEWEST, Behaviour
from brainbench.models.budget import Concurrency
from brainbench.models.config import RunConfig
from brainbench.models.result import RunResult, SeamInfo, SeedFailure, TraceInfo
from brainbench.models.shard import ShardInfo, ShardSpec
from brainbench.models.trace import CONTEXT_CAP, TurnTrace
from brainbench.orchestrator.image_seed import SeededSeam, prepare_seeded_seams, seeded_brains
from brainbench.orchestrator.launch import ActiveSeam, Providers, remote_docker, run_context, start_seams
from brainbench.orchestrator.outcome import FixtureOutcome, key_records, resumed_outcomes, utc_iso
from brainbench.orchestrator.progress import RunEvents, Silent
from brainbench.orchestrator.replay import SeamReplay, replay_fixture
from brainbench.orchestrator.selection import Plan, plan_run, retrieval_suites, wants_write_back
from brainbench.orchestrator.shard import config_fingerprint, pair_key, plan_keys, shard_plan
from brainbench.orchestrator.spill import TraceSpill, TraceStream
from brainbench.orchestrator.stages import RunAborted, Stages
from brainbench.orchestrator.trust_unit import TrustUnit
from brainbench.ownership import sweep_lock_files
from brainbench.scratch_owner import OWNER_FILE, RUN_PREFIX, owned_scratch_dir, sweep_run_dirs
from brainbench.version import source_revision

# One-line diagnostics (the jobs chosen, warnings) go to a ``notify(line)`` callable.
Progress = Callable[[str], None]
# A dead runner's lock file outlives it this long, so sweepers in other pid namespaces can
# still prove its leftovers dead; `brainbench cleanup` removes it at once.
LOCK_FILE_KEEP_S = 24 * 3600


# Expected reasons for a run to stop early: reported in one line, exit 2, with the partial
# result (``exc.partial``) of the fixtures that finished.
RUN_FAILURES = (RunAborted, ServerError, ExecutorError)


class DiskFull(RunAborted):
    """The runner's own files (trace spill, transcripts, scratch) found no room: the machine's
    state, not a bug, and a partial result plus --resume is the way on."""


def _database_failure(exc: psycopg.Error, server: PostgresServer) -> DatabaseFailure:
    """A driver error under the runner's own connection: name the cause, not a traceback."""
    cause = getattr(server, "diagnose", lambda: None)()
    return DatabaseFailure(f"the brain database failed: {cause or first_line(exc)}")


def _as_run_failure(exc: BaseException, server: PostgresServer) -> Exception | None:
    """``exc`` as an expected reason for the run to stop (RUN_FAILURES), or None for a bug."""
    if isinstance(exc, psycopg.Error):
        return _database_failure(exc, server)
    if is_disk_full(exc):
        return DiskFull(f"{disk_full_message(exc)}; free some space, or point BRAINBENCH_SCRATCH_DIR and "
                        "TMPDIR at a roomier disk, and continue with --resume")
    return exc if isinstance(exc, RUN_FAILURES) else None


def seam_modes(config: RunConfig) -> list[Mode]:
    """Each seam's invocation mode, as _start_seam will choose it."""
    modes: list[Mode] = []
    for harness in dict.fromkeys(config.harnesses):
        override = config.seams.get(harness)
        modes.append((override.mode if override and override.mode else None) or config.mode)
    return modes


class Runner:
    """Replays the plan through the seams; what comes after (write-back, the result) is ``stages``'
    (None: a runner that only plans, as ``brainbench run`` uses one to count the work)."""

    def __init__(self, config: RunConfig, corpus: Corpus, events: RunEvents | None = None,
                 shard: ShardSpec | None = None, stages: Stages | None = None) -> None:
        self.config = config
        self.stages = stages
        self.corpus = corpus
        self.events: RunEvents = events or Silent()
        self.run_id = uuid.uuid4().hex[:10]
        self.full_plan: Plan = plan_run(corpus, config)
        self.shard = shard
        self.plan: Plan = shard_plan(self.full_plan, config, shard.index, shard.total) if shard else self.full_plan
        self.outcomes: dict[str, FixtureOutcome] = {}
        # Each finished unit's traces go to disk at once (orchestrator/spill.py): the run's memory
        # must not grow with the evidence.
        self.spill = TraceSpill()
        self.started_at = datetime.now(UTC)
        self.seams: dict[str, ActiveSeam] = {}
        # Seams whose image seeds its own brain (seed contract): a clone of theirs per fixture.
        self.seeded: dict[str, SeededSeam] = {}
        self.interrupted_by: str | None = None
        self.work_root: Path | None = None
        self.concurrency: Concurrency | None = None  # chosen by run_benchmark against the server
        # Image seeds (seed contract): done and expected, for the progress lines.
        self.seeds_done = 0
        self.seeds_total = 0

    @property
    def fixture_count(self) -> int:
        """Corpus fixtures this run replays: a continuity pair is two (its writer and its reader)."""
        return len(self.plan.regular) + 2 * len(self.plan.pairs) + len(self.plan.trust)

    @property
    def jobs(self) -> int:
        if self.concurrency is not None:
            return self.concurrency.jobs
        return self.config.jobs or 1

    # --- per fixture ----------------------------------------------------------------

    def _env(self, url: str, source: str, workdir: Path) -> dict[str, str]:
        # The behaviour travels with every call, as the source does: an image receives it the same way.
        return {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": source,
                "CLAUDE_CONFIG_DIR": str(workdir / "claude"), BEHAVIOUR_ENV: self.behaviour}

    @property
    def behaviour(self) -> Behaviour:
        return self.config.behaviour or NEWEST

    async def _replay_all(self, item: LoadedFixture, suites: list[str], brain: Brain, workroot: Path, key: str,
                          slug_sources: dict[str, set[str]], harnesses: list[str] | None = None,
                          image_urls: dict[str, str] | None = None) -> list[SeamReplay]:
        """Replay through ``harnesses`` (default: every seam); ``image_urls`` are image-seeded brains."""
        replays = []
        for harness in self.seams if harnesses is None else harnesses:
            seam = self.seams[harness]
            workdir = workroot / harness / key  # inside the seam's own mounted subtree
            # Each seam logs in with its own role (read-only on our brain, owner of its image-seeded
            # clone), never with the runner's URL.
            url = (image_urls or {}).get(harness) or brain.hook_urls[harness]
            env = {**seam.env, **self._env(url, item.fixture.source, workdir)}
            replays.append(await replay_fixture(item, seam.spec, seam.process, suites=suites, env=env,
                                                workdir=workdir, timeout_s=seam.timeout_s,
                                                slug_sources=slug_sources, keep=self.config.keep,
                                                image=seam.production_image))
        return replays

    async def _diagnose(self, conn: Any, item: LoadedFixture, replays: list[SeamReplay],
                        slug_sources: dict[str, set[str]]) -> list[TurnTrace]:
        # While the brain is still leased: the reference replays missed turns on this same brain.
        def work() -> list[TurnTrace]:
            return [t for r in replays
                    for t in self._stages.diagnose(conn, item, r.traces, r.contexts, slug_sources)]

        return await anyio.to_thread.run_sync(work)

    async def _regular(self, item: LoadedFixture, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        async with self._brain(dbs) as brain:
            return await self._regular_in(item, brain, workroot)

    async def _regular_in(self, item: LoadedFixture, brain: Brain, workroot: Path) -> FixtureOutcome:
        out = FixtureOutcome()
        conn = brain.conn
        try:
            report = await anyio.to_thread.run_sync(seed_fixture, conn, item.fixture)
        except SeedError as exc:
            out.seed_failure = SeedFailure(fixture_id=item.fixture_id, error=str(exc))
            return out
        suites = retrieval_suites(item, self.config)
        if suites:
            async with seeded_brains(self.seeded, item.fixture) as (image_urls, failures):
                if self.seeded:
                    self.seeds_done += len(self.seeded)
                    self.events.seeded(self.seeds_done, self.seeds_total)
                # A seam whose image failed to seed this fixture is not replayed on it.
                harnesses = [h for h in self.seams if h not in self.seeded or h in image_urls]
                replays = await self._replay_all(item, suites, brain, workroot, item.fixture_id,
                                                 report.slug_sources, harnesses, image_urls)
            if failures:
                out.seed_failure = SeedFailure(fixture_id=item.fixture_id, error="; ".join(failures))
            for replay in replays:
                out.rows += replay.rows
                out.faults += replay.faults
                out.calls += replay.calls
            out.traces += await self._diagnose(conn, item, replays, report.slug_sources)
        if wants_write_back(item, self.config):
            out.write_back = await anyio.to_thread.run_sync(self._stages.write_back, conn, item)
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

    @property
    def _stages(self) -> Stages:
        if self.stages is None:
            raise RuntimeError("this Runner only plans: give it stages to run")
        return self.stages

    async def _pair(self, pair: ContinuityPair, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        async with self._brain(dbs) as brain:
            return await self._pair_in(pair, brain, workroot)

    async def _pair_in(self, pair: ContinuityPair, brain: Brain, workroot: Path) -> FixtureOutcome:
        out = FixtureOutcome()
        conn = brain.conn
        try:
            writer = await anyio.to_thread.run_sync(seed_fixture, conn, pair.writer.fixture)
            reader = await anyio.to_thread.run_sync(seed_fixture, conn, pair.reader.fixture)
        except SeedError as exc:
            out.seed_failure = SeedFailure(fixture_id=pair.pair_id, error=str(exc))
            return out
        slug_sources = SeedReport.merge(writer, reader).slug_sources
        score = await anyio.to_thread.run_sync(self._stages.write_back, conn, pair.writer)
        if "write-back" in pair.writer.fixture.suites and "write-back" in self.config.suites:
            out.write_back = score
        # The runner's write-back never reaches an image-seeded brain: continuity is not applicable there.
        harnesses = [h for h in self.seams if h not in self.seeded]
        replays = await self._replay_all(pair.reader, ["continuity"], brain, workroot, f"pair-{pair.pair_id}",
                                         slug_sources, harnesses)
        for harness, replay in zip(harnesses, replays, strict=True):
            out.rows += replay.rows
            out.faults += replay.faults
            out.calls += replay.calls
            out.continuity[harness] = await anyio.to_thread.run_sync(
                self._stages.score_continuity, conn, pair.reader, replay.injected)
        out.traces += await self._diagnose(conn, pair.reader, replays, slug_sources)
        return out

    async def _trust(self, item: LoadedFixture, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        # An image that seeds its own brain (seed contract v1) has no path to a trust fixture's brain.
        seams = {h: s for h, s in self.seams.items() if h not in self.seeded}
        unit = TrustUnit(brain=lambda: self._brain(dbs), seams=seams, stages=self._stages, workroot=workroot,
                         env=self._env, keep=self.config.keep)
        score, shown = await unit.run(item)
        return FixtureOutcome(rows=shown.rows, faults=shown.faults, traces=shown.traces, trust=score)

    # --- whole run ----------------------------------------------------------------------

    async def _run(self, server: PostgresServer) -> None:
        # A role per (brain, seam): its limit is what one seam's honest hooks hold on one brain
        # (a connection per warm process, or the one call in flight), plus the budget's slack.
        dbs = BrainDatabases(server, self.run_id, list(self.config.harnesses),
                             connection_limit=warm_workers(self.jobs) + HOOK_ROLE_SLACK)
        workroot = owned_scratch_dir(f"{RUN_PREFIX}{self.run_id}-")
        self.work_root = workroot
        # Warm stream processes per seam: bounded by cores, not jobs (brain/budget.py counts them).
        # The URL only tells providers where the server is (socket or host); hooks never get it.
        providers = Providers(self.config, run_context(self.config, self.run_id, server.database_url("postgres"),
                                                       workroot, warm_workers(self.jobs), self.events.phase))
        try:
            # Leftover databases of runs that died on this host (SIGKILL, power loss).
            # Databases and seam processes are independent until the first hook call.
            async def prepare_brains() -> None:
                self.events.phase("building the brain template (dead runs' databases swept, schema migrated)")
                try:
                    await anyio.to_thread.run_sync(sweep_databases, server)
                    await anyio.to_thread.run_sync(sweep_run_dirs)
                    await anyio.to_thread.run_sync(lambda: sweep_lock_files(min_age_s=LOCK_FILE_KEEP_S))
                    await anyio.to_thread.run_sync(dbs.prepare)
                except psycopg.OperationalError as exc:
                    raise ServerError(f"cannot use the brain database server: {exc}".strip()) from exc

            async def prepare_seams() -> None:
                await providers.prepare()
                await start_seams(self.config, providers, workroot, self.seams, self.events.phase)

            async with anyio.create_task_group() as start_up:
                start_up.start_soon(prepare_brains)
                start_up.start_soon(prepare_seams)
            self.seeded = await prepare_seeded_seams(self.seams, dbs, self.events.phase)
            limiter = anyio.CapacityLimiter(self.jobs)
            todo = [i for i in self.plan.regular if i.fixture_id not in self.outcomes]
            pairs = [p for p in self.plan.pairs if pair_key(p.pair_id) not in self.outcomes]
            trust_todo = [i for i in self.plan.trust if i.fixture_id not in self.outcomes]
            self.seeds_total = len(self.seeded) * sum(1 for i in todo if retrieval_suites(i, self.config))
            self.events.phase(f"replaying {len(todo) + 2 * len(pairs) + len(trust_todo)} fixtures through "
                              f"{', '.join(self.seams)} ({self.jobs} at a time)")

            async def one(key: str, work: Callable[[], Any]) -> None:
                async with limiter:
                    outcome = await work()
                    if outcome.faults:
                        # Hooks that failed because our own server died or lost its directory are the
                        # run's failure, not their seams': otherwise the run could end as seam faults,
                        # scored, when the brain went away after the runner's last query of its own.
                        cause = await anyio.to_thread.run_sync(getattr(server, "diagnose", lambda: None))
                        if cause:
                            raise DatabaseFailure(f"the brain database failed: {cause}")
                    outcome.traces = self.spill.keep(outcome.traces)
                    self.outcomes[key] = outcome
                    self.events.unit_done(key, 2 if key.startswith("pair:") else 1, outcome.calls)

            async with anyio.create_task_group() as tg:
                for item in todo:
                    tg.start_soon(one, item.fixture_id, lambda i=item: self._regular(i, dbs, workroot))
                for pair in pairs:
                    tg.start_soon(one, pair_key(pair.pair_id), lambda p=pair: self._pair(p, dbs, workroot))
                for item in trust_todo:
                    tg.start_soon(one, item.fixture_id, lambda i=item: self._trust(i, dbs, workroot))
        finally:
            with anyio.CancelScope(shield=True):
                for seam in self.seams.values():
                    with contextlib.suppress(Exception):
                        await seam.process.stop()
                await providers.close(interrupted=self.interrupted_by is not None)
                # A dead server cannot drop anything: its leftovers are a later sweep's (owner label).
                with contextlib.suppress(psycopg.Error):
                    await anyio.to_thread.run_sync(dbs.close)
                if not self.config.keep:
                    shutil.rmtree(workroot, ignore_errors=True)
                else:  # kept on purpose: unlabelled, so no sweep ever takes it
                    (workroot / OWNER_FILE).unlink(missing_ok=True)

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

    def resume_from(self, previous: RunResult) -> None:
        """Adopt the finished fixtures of an interrupted run of the same corpus and config."""
        readers = {pair_key(p.pair_id): p.reader.fixture_id for p in self.plan.pairs}
        for key, outcome in resumed_outcomes(previous, readers).items():
            outcome.traces = self.spill.keep(outcome.traces)
            self.outcomes[key] = outcome

    def ordered_keys(self) -> list[str]:
        return plan_keys(self.plan)

    def result(self, complete: bool = True, interrupted_by: str | None = None) -> RunResult:
        keyed = [(k, self.outcomes[k]) for k in self.ordered_keys() if k in self.outcomes]
        kept = str(self.work_root) if self.config.keep and self.work_root else None
        traces = TraceStream([o.traces for _, o in keyed])
        meta_extra: dict[str, Any] = {
            "trace": TraceInfo(rows=len(traces), context_cap=CONTEXT_CAP, work_root=kept) if kept else None}
        if self.shard is not None and complete:
            meta_extra["shard"] = ShardInfo(
                index=self.shard.index, total=self.shard.total, plan=plan_keys(self.full_plan),
                keys=self.ordered_keys(), fingerprint=config_fingerprint(self.config),
                outcomes=key_records(keyed))
        result = self._stages.build_result(
            self.config, fixtures_hash=self.corpus.fixtures_hash, harness_sha=source_revision(),
            seams=self.seam_infos(), keyed=keyed, receipt_ts=utc_iso(self.started_at, millis=True),
            meta_extra=meta_extra,
            run={"run_id": self.run_id, "executor": self.config.executor, "jobs": self.jobs,
                 "started_at": utc_iso(self.started_at), "finished_at": utc_iso(datetime.now(UTC)),
                 "complete": complete, "interrupted_by": interrupted_by,
                 "fixture_selection": list(self.config.fixture_ids) or None, "concurrency": self.concurrency,
                 "behaviour": self.behaviour,
                 "resume_state": None if complete else {
                     k: r.model_dump(mode="json") for k, r in key_records(keyed).items()}},
        )
        result.use_trace(traces)
        return result

    def seam_infos(self) -> list[SeamInfo]:
        return [s.info for s in self.seams.values()]


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


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
    if remote_docker(config):
        # A remote engine cannot reach the embedded server's socket: the brain runs there.
        from brainbench.executors.docker.remote_brain import RemoteBrain, describe

        runner.events.phase("starting the brain server on the remote Docker engine")
        brain = RemoteBrain(runner.run_id, max_connections=runner.concurrency.server_max_connections)
        notify(describe(brain))
        return brain
    runner.events.phase("starting the embedded brain server (PostgreSQL, Unix socket only)")
    return open_server(None, max_connections=runner.concurrency.server_max_connections)


def run_benchmark(config: RunConfig, corpus: Corpus, stages: Stages, events: RunEvents | None = None,
                  resume: RunResult | None = None, notify: Progress | None = None,
                  shard: ShardSpec | None = None) -> RunResult:
    """Run the benchmark with its downstream ``stages`` (``brainbench.pipeline`` composes them);
    ``events`` hears each set-up phase and finished unit, ``notify`` receives the one-line
    diagnostics (the jobs chosen, warnings)."""
    runner = Runner(config, corpus, events, shard, stages)
    if resume is not None:
        runner.resume_from(resume)
    if runner.plan.is_empty:
        # A shard that drew no work (N above the number of units) is a valid, empty part of the run.
        return runner.result()
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
        failure = _explain(group, server)
        if failure is None:
            raise
        failure.partial = runner.result(complete=False, interrupted_by="error")  # type: ignore[attr-defined]
        raise failure from None
    except (*RUN_FAILURES, psycopg.Error, OSError) as exc:
        failure = _as_run_failure(exc, server)
        if failure is None:
            raise
        failure.partial = runner.result(complete=False, interrupted_by="error")  # type: ignore[attr-defined]
        raise failure from None
    finally:
        server.close()


def _explain(group: BaseExceptionGroup, server: PostgresServer) -> Exception | None:
    """The run failure inside nested task-group errors; a database error becomes a DatabaseFailure."""
    explained = group.subgroup((*RUN_FAILURES, psycopg.Error)) or group.subgroup(is_disk_full)
    while explained is not None:
        first = explained.exceptions[0]
        if not isinstance(first, BaseExceptionGroup):
            return _as_run_failure(first, server)
        explained = first
    return None
