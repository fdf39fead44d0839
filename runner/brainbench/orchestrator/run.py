"""Run a benchmark: seed isolated brains, replay every fixture through every seam, grade.

Fixtures run concurrently (``jobs``) but results are assembled in corpus order,
so ``--jobs 1`` and ``--jobs 8`` produce the same cells and rows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import psycopg

from brainbench.brain.budget import (
    HOOK_ROLE_SLACK,
    choose_concurrency,
    cores,
    describe_choice,
    hook_role_connection_limit,
    probe_capacity,
    seam_modes,
    warm_workers,
)
from brainbench.brain.databases import PREFIX, Brain, BrainDatabases, sweep_databases
from brainbench.brain.gate import SeamGates, server_socket
from brainbench.brain.seeding import SeedError, SeedReport, parse_ahead, seed_fixture
from brainbench.brain.server import (
    DatabaseFailure,
    ExternalPostgres,
    PostgresServer,
    ServerError,
    first_line,
    open_server,
)
from brainbench.brain.shares import ShareLedger
from brainbench.brain.watchdog import ShareWatchdog
from brainbench.corpus.loader import ContinuityPair, Corpus, LoadedFixture
from brainbench.disk_full import disk_full_message, is_disk_full
from brainbench.executors.base import ExecutorError
from brainbench.models.behaviour import BEHAVIOUR_ENV, NEWEST, Behaviour
from brainbench.models.budget import Concurrency
from brainbench.models.config import RunConfig
from brainbench.models.corpus import Fixture
from brainbench.models.phases import RunPhases
from brainbench.models.result import Fault, RunResult, SeamInfo, SeedFailure, TraceInfo
from brainbench.models.shard import ShardInfo, ShardSpec
from brainbench.models.share import BrainShare, share_from_env
from brainbench.models.trace import CONTEXT_CAP, TurnTrace
from brainbench.orchestrator.clone_pool import ClonePool, ahead_for
from brainbench.orchestrator.image_seed import SeededSeam, one_clone, prepare_seeded_seams, seeded_brains
from brainbench.orchestrator.launch import (
    ActiveSeam,
    Providers,
    gated_seams,
    images_over_cores,
    provider_for,
    remote_docker,
    run_context,
    seams_side_by_side,
    start_seams,
)
from brainbench.orchestrator.outcome import FixtureOutcome, key_records, resumed_outcomes, utc_iso
from brainbench.orchestrator.phases import PhaseClock, describe
from brainbench.orchestrator.progress import RunEvents, Silent
from brainbench.orchestrator.replay import SeamReplay, replay_fixture
from brainbench.orchestrator.selection import Plan, plan_run, retrieval_suites, wants_write_back
from brainbench.orchestrator.shard import config_fingerprint, pair_key, plan_keys, shard_plan
from brainbench.orchestrator.spill import TraceSpill, TraceStream
from brainbench.orchestrator.stages import RunAborted, Stages
from brainbench.orchestrator.warm_up import warm_up
from brainbench.ownership import sweep_lock_files
from brainbench.scratch_owner import OWNER_FILE, RUN_PREFIX, owned_scratch_dir, sweep_run_dirs
from brainbench.version import source_revision

# One-line diagnostics (the jobs chosen, warnings) go to a ``notify(line)`` callable.
Progress = Callable[[str], None]
# A dead runner's lock file outlives it this long, so sweepers in other pid namespaces can
# still prove its leftovers dead; `brainbench cleanup` removes it at once.
LOCK_FILE_KEEP_S = 24 * 3600
# The warm-up call of an image-seeded brain may wait this long for the image's own start
# (gbrain's wrapper waits up to 25 s for its serve).
WARM_UP_TIMEOUT_S = 30.0
# "0" turns the warm-up call off: only to measure what it buys (benchmarks/gbrain_image.py, tests).
WARM_UP_ENV = "BRAINBENCH_IMAGE_WARM_UP"


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
        self.leftovers: list[str] = []  # what dbs.close could not drop
        self.concurrency: Concurrency | None = None  # chosen by run_benchmark against the server
        # Image seeds (seed contract): done and expected, for the progress lines.
        self.seeds_done = 0
        self.seeds_total = 0
        # Each seam's share of the shared brain, and who went over it (brain/gate.py, brain/watchdog.py).
        self.share = BrainShare()
        self._brain_down: Callable[[], str | None] | None = None  # the server's diagnose, once the run has one
        self._share_error: str | None = None
        try:
            self.share = share_from_env()
        except ValueError as exc:
            self._share_error = str(exc)  # raised in the run, where it is one line (RunAborted)
        self.ledger = ShareLedger()
        # Where the wall time goes, per seam and phase (``_meta.phases``).
        self.clock = PhaseClock()

    @property
    def fixture_count(self) -> int:
        """Corpus fixtures this run replays: a continuity pair is two (its writer and its reader)."""
        return len(self.plan.regular) + 2 * len(self.plan.pairs) + len(self.plan.trust)

    @property
    def jobs(self) -> int:
        if self.concurrency is not None:
            return self.concurrency.jobs
        return self.config.jobs or 1

    def _cores(self) -> int:
        return self.concurrency.cores if self.concurrency is not None else cores()

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
        names = list(self.seams if harnesses is None else harnesses)
        done: dict[str, SeamReplay] = {}

        async def one_seam(harness: str) -> None:
            seam = self.seams[harness]
            workdir = workroot / harness / key  # inside the seam's own mounted subtree
            # Each seam logs in with its own role (read-only on our brain, owner of its image-seeded
            # clone), never with the runner's URL.
            url = (image_urls or {}).get(harness) or brain.hook_urls[harness]
            env = {**seam.env, **self._env(url, item.fixture.source, workdir)}
            done[harness] = await replay_fixture(item, seam.spec, seam.process, suites=suites, env=env,
                                                 workdir=workdir, timeout_s=seam.timeout_s,
                                                 slug_sources=slug_sources, keep=self.config.keep,
                                                 image=seam.production_image, share=self.ledger,
                                                 events=seam.brain.events.get(harness) if seam.brain else None,
                                                 brain_down=self._brain_down)
            self.clock.hook_calls(harness, done[harness].durations_ms)

        if seams_side_by_side(self.config.executor, [self.seams[h] for h in names]):
            async with anyio.create_task_group() as tg:
                for harness in names:
                    tg.start_soon(one_seam, harness)
        else:
            for harness in names:
                await one_seam(harness)
        return [done[harness] for harness in names]

    async def _warm_up(self, item: LoadedFixture, image_urls: dict[str, str], workroot: Path) -> None:
        """One ungraded call per image-seeded brain before its first graded turn (orchestrator/warm_up.py)."""
        if os.environ.get(WARM_UP_ENV, "1") == "0":
            return  # benchmarks/gbrain_image.py measures the run without it
        for harness, url in image_urls.items():
            seam = self.seams[harness]
            workdir = workroot / harness / f"warm-up-{item.fixture_id}"
            env = {**seam.env, **self._env(url, item.fixture.source, workdir)}
            # The image's own start may take longer than one graded call may.
            timeout_s = max(seam.timeout_s, WARM_UP_TIMEOUT_S)
            with self.clock.timed(harness, "brain_start"):
                await warm_up(seam.spec, seam.process, env, workdir, timeout_s, item.fixture_id)

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
        # Seed contract v2: images that write back into their own store, graded on this fixture.
        image_wb = self._image_seams("write-back") if wants_write_back(item, self.config) else {}
        if suites:
            async with seeded_brains(self.seeded, item.fixture) as (image_urls, failures):
                if self.seeded:
                    self.seeds_done += len(self.seeded)
                    self.events.seeded(self.seeds_done, self.seeds_total)
                await self._warm_up(item, image_urls, workroot)
                # A seam whose image failed to seed this fixture is not replayed on it.
                harnesses = [h for h in self.seams if h not in self.seeded or h in image_urls]
                replays = await self._replay_all(item, suites, brain, workroot, item.fixture_id,
                                                 report.slug_sources, harnesses, image_urls)
                for harness, seam in image_wb.items():  # after the replay, on the brain it read
                    await self._image_write_back(out, seam, item, image_urls.get(harness), failures)
            if failures:
                out.seed_failure = SeedFailure(fixture_id=item.fixture_id, error="; ".join(failures))
            for replay in replays:
                out.rows += replay.rows
                out.faults += replay.faults
                out.calls += replay.calls
            out.traces += await self._diagnose(conn, item, replays, report.slug_sources)
        elif image_wb:  # nothing to replay: a seeded clone for the write-back alone
            for seam in image_wb.values():
                async with one_clone(seam, item.fixture) as (clone, failure):
                    if failure:
                        error = "; ".join(filter(None, [out.seed_failure.error if out.seed_failure else None,
                                                        failure]))
                        out.seed_failure = SeedFailure(fixture_id=item.fixture_id, error=error)
                    await self._image_write_back(out, seam, item, clone.url if clone else None,
                                                 [failure] if failure else [])
        if wants_write_back(item, self.config):
            out.write_back = await anyio.to_thread.run_sync(self._stages.write_back, conn, item)
        return out

    def _to_seed(self) -> list[Fixture]:
        """The fixtures this run still seeds into its brain, in the order it replays them."""
        regular = [i.fixture for i in self.plan.regular if i.fixture_id not in self.outcomes]
        pairs = [f.fixture for p in self.plan.pairs if pair_key(p.pair_id) not in self.outcomes
                 for f in (p.writer, p.reader)]
        return regular + pairs

    def _image_seams(self, suite: str) -> dict[str, SeededSeam]:
        """The image-seeded seams whose image declares a path to ``suite`` (seed contract v2)."""
        return {h: s for h, s in self.seeded.items() if s.contract.no_path(suite) is None}

    async def _image_write_back(self, out: FixtureOutcome, seam: SeededSeam, item: LoadedFixture, url: str | None,
                                failures: list[str]) -> None:
        """The image's write-back of ``item`` into its clone at ``url``, graded; no clone (its seed failed,
        recorded as such): every gold fact of it is lost, for that reason."""
        if url is None:
            why = next((f for f in failures if seam.harness in f), "no seeded brain")
            out.image_write_back[seam.harness] = self._stages.score_image_write_back(item, [], why)
            return
        from brainbench.orchestrator.image_memory import graded_write_back  # as in _trust: only for images

        score, faults = await graded_write_back(seam, self._stages, item, url)
        out.image_write_back[seam.harness] = score
        out.faults += faults

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
        # The runner's write-back never reaches an image-seeded brain: an image continues through its own
        # write-back (seed contract v2), or continuity is not applicable there.
        harnesses = [h for h in self.seams if h not in self.seeded]
        replays = await self._replay_all(pair.reader, ["continuity"], brain, workroot, f"pair-{pair.pair_id}",
                                         slug_sources, harnesses)
        for harness, replay in zip(harnesses, replays, strict=True):
            out.rows += replay.rows
            out.faults += replay.faults
            out.calls += replay.calls
            out.continuity[harness] = await anyio.to_thread.run_sync(
                self._stages.score_continuity, conn, pair.reader, replay.injected)
        for seam in self._image_seams("continuity").values():
            replay = await self._image_pair(out, seam, pair, brain, workroot, slug_sources)
            if replay is not None:
                replays.append(replay)
        out.traces += await self._diagnose(conn, pair.reader, replays, slug_sources)
        return out

    async def _image_pair(self, out: FixtureOutcome, seam: SeededSeam, pair: ContinuityPair, brain: Brain,
                          workroot: Path, slug_sources: dict[str, set[str]]) -> SeamReplay | None:
        """A continuity pair on an image's own store: writer and reader seeded into one clone, the writer's
        session written back by the image, the reader replayed through its hook (seed contract v2)."""
        from brainbench.orchestrator.image_memory import graded_write_back, keyword_probe, seam_fault, write_back

        harness, reader = seam.harness, pair.reader
        async with one_clone(seam, pair.writer.fixture, reader.fixture) as (clone, failure):
            if clone is None:
                error = "; ".join(filter(None, [out.seed_failure.error if out.seed_failure else None, failure]))
                out.seed_failure = SeedFailure(fixture_id=pair.pair_id, error=error)
                out.continuity[harness] = await anyio.to_thread.run_sync(
                    self._stages.score_continuity_by, reader, set(), None)
                return None
            wb_suite = "write-back" in pair.writer.fixture.suites and "write-back" in self.config.suites
            if seam.contract.no_path("write-back") is None:
                score, faults = await graded_write_back(seam, self._stages, pair.writer, clone.url)
                out.faults += faults
                if wb_suite:
                    out.image_write_back[harness] = score
            else:  # written back, never read back: only the reader's hook can show it
                fault = await write_back(seam, self._stages.write_back_document(pair.writer), clone.url,
                                         pair.writer.fixture)
                out.faults += [seam_fault(pair.writer.fixture_id, harness, fault)] if fault else []
            [replay] = await self._replay_all(reader, ["continuity"], brain, workroot, f"pair-{pair.pair_id}",
                                              slug_sources, [harness], {harness: clone.url})
            out.rows += replay.rows
            out.faults += replay.faults
            out.calls += replay.calls
            probe_faults: list[Fault] = []
            probe = keyword_probe(seam, clone.url, reader.fixture, probe_faults)
            out.continuity[harness] = await anyio.to_thread.run_sync(
                self._stages.score_continuity_by, reader, replay.injected, probe, abandon_on_cancel=True)
            out.faults += probe_faults
            return replay

    async def _trust(self, item: LoadedFixture, dbs: BrainDatabases, workroot: Path) -> FixtureOutcome:
        # Imported here: our reference memory system (memory.reference) is ~15 modules that a run
        # with no memory-trust fixture never uses, and imports are on every run's critical path.
        from brainbench.orchestrator.image_trust import image_trust
        from brainbench.orchestrator.trust_unit import TrustUnit, trust_suite

        # An image that seeds its own brain has no path to our reference memory system's brain.
        seams = {h: s for h, s in self.seams.items() if h not in self.seeded}
        unit = TrustUnit(brain=lambda: self._brain(dbs), seams=seams, stages=self._stages, workroot=workroot,
                         env=self._env, keep=self.config.keep, share=self.ledger,
                         side_by_side=seams_side_by_side(self.config.executor, list(seams.values())))
        score, shown = await unit.run(item)
        suite = trust_suite(item) or ""
        for seam in self._image_seams(suite).values():  # seed contract v2: through its operations command
            await image_trust(seam, item, self._stages, score, shown, workroot, self._env, self.config.keep)
        return FixtureOutcome(rows=shown.rows, faults=shown.faults, traces=shown.traces, trust=score)

    # --- whole run ----------------------------------------------------------------------

    async def _run(self, server: PostgresServer) -> None:
        if self._share_error:
            raise RunAborted(self._share_error)
        # A role per (brain, seam): its limit is what one seam's honest hooks hold on one brain
        # (a connection per warm process, or the one call in flight), plus the budget's slack.
        self._brain_down = getattr(server, "diagnose", None)
        dbs = BrainDatabases(server, self.run_id, list(self.config.harnesses),
                             connection_limit=warm_workers(self.jobs) + HOOK_ROLE_SLACK,
                             temp_file_limit_kb=self.share.temp_file_limit_kb)
        workroot = owned_scratch_dir(f"{RUN_PREFIX}{self.run_id}-")
        self.work_root = workroot
        watchdog: ShareWatchdog | None = None
        dbs.gates = self._open_gates(server)
        # Warm stream processes per seam: bounded by cores, not jobs (brain/budget.py counts them).
        # The URL only tells providers where the server is (socket or host); hooks never get it.
        sockets = {seam: str(d) for seam, d in (dbs.gates.dirs.items() if dbs.gates else ())}
        providers = Providers(self.config, run_context(self.config, self.run_id, server.database_url("postgres"),
                                                       workroot, warm_workers(self.jobs), self.events.phase,
                                                       sockets, self._cores()))
        try:
            # Leftover databases of runs that died on this host (SIGKILL, power loss).
            # Databases and seam processes are independent until the first hook call.
            async def sweep_files() -> None:
                # Dead runs' work dirs and lock files: nothing of this run's, so beside its start-up.
                await anyio.to_thread.run_sync(sweep_run_dirs)
                await anyio.to_thread.run_sync(lambda: sweep_lock_files(min_age_s=LOCK_FILE_KEEP_S))

            async def prepare_brains() -> None:
                self.events.phase("building the brain template (dead runs' databases swept, schema migrated)")
                try:
                    if not getattr(server, "fresh", False):
                        await anyio.to_thread.run_sync(sweep_databases, server)
                    await anyio.to_thread.run_sync(dbs.prepare)
                    nonlocal watchdog
                    watchdog = ShareWatchdog(server.database_url("postgres"), f"{PREFIX}{self.run_id}_", self.share,
                                             self.ledger, dbs.seam_of, dbs.clones)
                    await anyio.to_thread.run_sync(watchdog.start)
                    dbs.watchdog = watchdog
                except psycopg.OperationalError as exc:
                    raise ServerError(f"cannot use the brain database server: {exc}".strip()) from exc

            async def prepare_seams() -> None:
                await providers.prepare()
                await start_seams(self.config, providers, workroot, self.seams, self.events.phase)

            async with anyio.create_task_group() as start_up:
                start_up.start_soon(sweep_files)
                start_up.start_soon(anyio.to_thread.run_sync, parse_ahead, self._to_seed())
                start_up.start_soon(prepare_brains)
                start_up.start_soon(prepare_seams)
            self.seeded = await prepare_seeded_seams(self.seams, dbs, self.events.phase, self.clock)
            limiter = anyio.CapacityLimiter(self.jobs)
            todo = [i for i in self.plan.regular if i.fixture_id not in self.outcomes]
            pairs = [p for p in self.plan.pairs if pair_key(p.pair_id) not in self.outcomes]
            trust_todo = [i for i in self.plan.trust if i.fixture_id not in self.outcomes]
            needing = sum(1 for i in todo if retrieval_suites(i, self.config))
            self.seeds_total = len(self.seeded) * needing
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

            async with contextlib.AsyncExitStack() as pools:
                # Per image-seeded seam, clones made ahead of the fixtures and dropped behind them.
                for seam in self.seeded.values():
                    seam.pool = await pools.enter_async_context(
                        ClonePool(seam, needing, ahead_for(self.jobs)).running())
                async with anyio.create_task_group() as tg:
                    for item in todo:
                        tg.start_soon(one, item.fixture_id, lambda i=item: self._regular(i, dbs, workroot))
                    for pair in pairs:
                        tg.start_soon(one, pair_key(pair.pair_id), lambda p=pair: self._pair(p, dbs, workroot))
                    for item in trust_todo:
                        tg.start_soon(one, item.fixture_id, lambda i=item: self._trust(i, dbs, workroot))
            for seam in self.seeded.values():
                seam.pool = None
            for phases in self.phases().seams:
                if phases.image_seeded:
                    self.events.phase(describe(phases))
        finally:
            with anyio.CancelScope(shield=True):
                for harness, seam in self.seams.items():
                    with contextlib.suppress(Exception), self.clock.timed(harness, "teardown"):
                        await seam.process.stop()
                await providers.close(interrupted=self.interrupted_by is not None)
                if watchdog is not None:
                    await anyio.to_thread.run_sync(watchdog.close)
                if dbs.gates is not None:
                    dbs.gates.close()
                # A dead server cannot drop anything: its leftovers are a later sweep's (owner label).
                # A live one that refused a drop is said at the end (exit 2, cli_run.report_result).
                with contextlib.suppress(psycopg.Error):
                    self.leftovers = await anyio.to_thread.run_sync(dbs.close, not getattr(server, "throwaway", False))
                if not self.config.keep:
                    shutil.rmtree(workroot, ignore_errors=True)
                else:  # kept on purpose: unlabelled, so no sweep ever takes it
                    (workroot / OWNER_FILE).unlink(missing_ok=True)

    def _open_gates(self, server: PostgresServer) -> SeamGates | None:
        """A gate per seam we did not write in front of a Unix-socket server (the embedded one, or a
        socket URL): each such seam's connections are counted from ``accept`` on, capped at what the
        budget gives it.  Our own adapters run here connect to the server's socket itself: they are
        the runner's code, as its user, and a gate would only relay their bytes (docs/SECURITY-BRAIN.md)."""
        upstream = server_socket(server.database_url("postgres"))
        if upstream is None:
            return None  # TCP: each role's CONNECTION LIMIT only (docs/SECURITY-BRAIN.md)
        gated = gated_seams(self.config)
        if not gated:
            return None
        cap = (self.concurrency.budget.per_hook_role if self.concurrency is not None
               else hook_role_connection_limit(self.jobs, "stream"))
        parent = getattr(server, "root", None)
        return SeamGates(upstream, dict.fromkeys(gated, cap), parent, self.ledger.breach)

    async def replay(self, server: PostgresServer) -> None:
        """The whole run on ``server`` up to its result (:meth:`final_result`)."""
        async with anyio.create_task_group() as outer:
            # The watcher is up before any brain or seam exists, so every interruption
            # goes through the same cleanup path.
            outer.start_soon(self._watch_signals, outer.cancel_scope)
            try:
                await self._run(server)
            finally:
                outer.cancel_scope.cancel()

    def final_result(self) -> RunResult:
        """The result of a :meth:`replay` that returned: complete, or as far as an interruption let it go."""
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
            "trace": TraceInfo(rows=len(traces), context_cap=CONTEXT_CAP, work_root=kept) if kept else None,
            "phases": self.phases() if self.seams else None}
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
        result.left_behind(self.leftovers)
        return result

    def phases(self) -> RunPhases:
        seams = {h: (s.info.image, h in self.seeded) for h, s in self.seams.items()}
        return self.clock.summary(seams, self.jobs)

    def seam_infos(self) -> list[SeamInfo]:
        return [s.info for s in self.seams.values()]


def _terminate(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _note_images_over_cores(config: RunConfig, choice: Concurrency, notify: Progress) -> None:
    if (note := images_over_cores(config, choice.jobs, choice.cores)) is not None:
        notify(note)


def _open_budgeted(config: RunConfig, runner: Runner, notify: Progress) -> PostgresServer:
    """Choose the run's jobs against the server's connections, then open (or size) the server."""
    modes = seam_modes(config)
    if config.database_url:
        server = ExternalPostgres(config.database_url)
        capacity = probe_capacity(server.database_url("postgres"))
        runner.concurrency = choose_concurrency(config.jobs, modes, capacity)
        notify(describe_choice(runner.concurrency, capacity))
        _note_images_over_cores(config, runner.concurrency, notify)
        return server
    runner.concurrency = choose_concurrency(config.jobs, modes)
    notify(describe_choice(runner.concurrency))
    _note_images_over_cores(config, runner.concurrency, notify)
    if remote_docker(config):
        # A remote engine cannot reach the embedded server's socket: the brain runs there.
        from brainbench.executors.docker.remote_brain import RemoteBrain, describe

        runner.events.phase("starting the brain server on the remote Docker engine")
        brain = RemoteBrain(runner.run_id, max_connections=runner.concurrency.server_max_connections)
        notify(describe(brain))
        return brain
    runner.events.phase("starting the embedded brain server (PostgreSQL, Unix socket only)")
    # Every seam at its whole share at once (temp files; and, where a named image may seed its own brain,
    # a clone per job plus its template): the cluster goes to RAM only if that fits.  Our own seam
    # images seed nothing; a clone's share is enforced wherever the cluster is, only its place is chosen.
    seams = len(set(config.harnesses))
    imaged = sum(1 for h in set(config.harnesses)
                 if provider_for(config, h) != "local" and (config.seams.get(h) and config.seams[h].image))
    clones = (runner.jobs + 1) * imaged
    ram_needed = runner.share.worst_case_bytes(seams, clones)
    return open_server(None, max_connections=runner.concurrency.server_max_connections, ram_needed=ram_needed)


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
        _replay(runner, server)
    except BaseException:
        server.close()
        raise
    # The server's stop and the removal of its files (~50 ms) overlap the result's assembly.
    closing = threading.Thread(target=server.close, name="brain-server-close")
    closing.start()
    try:
        return runner.final_result()
    finally:
        closing.join()


def _replay(runner: Runner, server: PostgresServer) -> None:
    """``runner.replay`` on ``server``; a failure that explains the abort is raised as a run failure
    carrying the partial result."""
    try:
        anyio.run(runner.replay, server)
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


def _explain(group: BaseExceptionGroup, server: PostgresServer) -> Exception | None:
    """The run failure inside nested task-group errors; a database error becomes a DatabaseFailure."""
    explained = group.subgroup((*RUN_FAILURES, psycopg.Error)) or group.subgroup(is_disk_full)
    while explained is not None:
        first = explained.exceptions[0]
        if not isinstance(first, BaseExceptionGroup):
            return _as_run_failure(first, server)
        explained = first
    return None
