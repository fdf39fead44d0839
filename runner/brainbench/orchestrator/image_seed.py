"""Seed contract v1, the runner's side: init an image-seeded seam's template, seed a clone per fixture.

``init`` and ``seed`` run in the seam's own warm container as the hook runs
(``SeamProcess.run_command``: through the container's call server, else a supervised
``docker exec``): the user, read-only root, capabilities, limits and network (the brain's
socket or the run's internal network, nothing else) are exactly the hook's, and a hanging
command is killed with its process group at its timeout.

A seam whose contract says ``"server": "private"`` keeps its databases on the Postgres
server its provider started for it alone (``SeamProcess.brain_server_url``), as that
server's superuser; the run's shared server never sees them.  That server is the image's:
the runner's every connection there is bounded in time (``brain/guarded.py``), and the
first time it stalls or fails the runner, the fixture is a seed failure of that seam, as is
every later one at once (no second wait); the other seams go on as if it were not there.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import anyio

from brainbench.brain.databases import BrainDatabases
from brainbench.brain.guarded import ConnectionGuard, ImageServerError
from brainbench.brain.image_brains import ImageBrain, ImageSeededBrains
from brainbench.brain.seed_document import seed_document
from brainbench.brain.seeding import SeedError
from brainbench.brain.server import ExternalPostgres
from brainbench.executors.base import ExecutorError, HookCall, HookOutcome, SeamProcess
from brainbench.models.corpus import Fixture
from brainbench.models.seed import BrainContract
from brainbench.orchestrator.launch import ActiveSeam
from brainbench.orchestrator.phases import PhaseClock

if TYPE_CHECKING:
    from brainbench.orchestrator.clone_pool import ClonePool

STDERR_TAIL_CHARS = 600
T = TypeVar("T")


@dataclass
class SeededSeam:
    """One image-seeded seam of a run: its contract, its databases, and how its init went."""

    harness: str
    active: ActiveSeam
    contract: BrainContract
    brains: ImageSeededBrains
    init_error: str | None = None
    # Set when the seam's private server stalled or failed the runner: its fixtures fail at once from then on.
    server_error: str | None = None
    # Times template, clone, seed and teardown (``_meta.phases``); a fresh one when the run keeps none.
    clock: PhaseClock = field(default_factory=PhaseClock)
    # Clones made ahead and dropped behind the fixtures (orchestrator/clone_pool.py); None: in the fixture.
    pool: ClonePool | None = None

    @property
    def image(self) -> str:
        return self.active.info.image or "?"

    @property
    def private(self) -> bool:
        return self.contract.server == "private"

    def server_failed(self, exc: ImageServerError) -> str:
        self.server_error = self.server_error or f"its private brain server {exc}"
        return self.server_error

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Runner work on the seam's databases.  On a private server an interrupted run does not
        wait for it: the server goes with the seam, which ends whatever the work still waits on."""
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=self.private)

    async def clone(self) -> ImageBrain:
        if self.pool is not None:
            return await self.pool.take()
        with self.clock.timed(self.harness, "clone"):
            return await self.in_thread(self.brains.clone)

    async def release(self, brain: ImageBrain) -> None:
        """A fixture is done with ``brain``: dropped now, or behind it by the pool."""
        if self.pool is not None:
            self.pool.give_back(brain)
        else:
            await self.drop(brain)

    async def drop(self, brain: ImageBrain) -> None:
        if self.server_error:
            return  # nothing more is asked of a server that failed: it goes with the run
        try:
            with self.clock.timed(self.harness, "teardown"):
                await self.in_thread(lambda: self.brains.drop(brain))
        except ImageServerError as exc:
            self.server_failed(exc)


def stderr_tail(stderr: bytes, one_line: bool = False) -> str:
    """The end of a command's stderr; ``one_line`` joins its lines with `` | `` (a seed failure is one line)."""
    text = stderr.decode("utf-8", "replace").strip()
    text = ("…" + text[-STDERR_TAIL_CHARS:]) if len(text) > STDERR_TAIL_CHARS else text
    return " | ".join(line.strip() for line in text.splitlines() if line.strip()) if one_line else text


def failure_of(outcome: HookOutcome, timeout_s: float) -> str | None:
    """None for success; else why the command failed, with its stderr tail."""
    if outcome.infra_error:
        return f"could not run: {outcome.infra_error}"
    if outcome.timed_out:
        return f"timed out after {timeout_s:g} s and was killed"
    if outcome.oversize:
        return f"killed: {outcome.oversize}"
    if outcome.exit_code == 0:
        return None
    tail = stderr_tail(outcome.stderr, one_line=True)
    return f"exited {outcome.exit_code}" + (f"; stderr tail: {tail}" if tail else "; no stderr")


async def run_step(process: SeamProcess, argv: Sequence[str], stdin: bytes, env: Mapping[str, str],
                   timeout_s: float) -> tuple[str | None, HookOutcome]:
    """Run ``init`` or ``seed`` in the seam: (None or why it failed, the raw outcome)."""
    call = HookCall(payload=stdin, env=dict(env), timeout_s=timeout_s)
    outcome = await anyio.to_thread.run_sync(process.run_command, list(argv), call, abandon_on_cancel=True)
    return failure_of(outcome, timeout_s), outcome


async def prepare_seeded_seams(seams: Mapping[str, ActiveSeam], dbs: BrainDatabases,
                               phase: Callable[[str], None] | None = None,
                               clock: PhaseClock | None = None) -> dict[str, SeededSeam]:
    """Template and ``init`` of every image-seeded seam, once per run (``phase`` hears each step start).

    A missing extension stops the run (``ExtensionMissing``, one line); a failing ``init``, or an
    extension the shared server does not create (``models/seed.py``, ``SHARED_EXTENSIONS``),
    does not: every fixture of that seam becomes a seed failure, the other seams are graded.
    """
    seeded: dict[str, SeededSeam] = {}
    for harness, active in seams.items():
        contract = active.brain
        if contract is None:
            continue
        image = active.info.image or harness
        brains = ImageSeededBrains(brain_server(dbs, harness, image, contract, active.process), harness, image,
                                   contract.extensions, superuser=contract.server == "private")
        seam = seeded[harness] = SeededSeam(harness, active, contract, brains, clock=clock or PhaseClock())
        began = anyio.current_time()
        say = phase or (lambda _line: None)
        refusal = contract.extension_refusal()
        if refusal is not None:  # nothing is created: every fixture of this seam is its seed failure
            say(f"seam {harness}: image {image}: {refusal}")
            seam.init_error = refusal
            continue
        say(f"seam {harness}: building the brain template of image {image}"
            + (f" (extensions {', '.join(contract.extensions)})" if contract.extensions else ""))
        try:
            url = await seam.in_thread(brains.prepare_template)
            if contract.init:
                say(f"seam {harness}: running init of image {image} ({' '.join(contract.init)})")
                failure, _ = await run_step(active.process, contract.init, b"", {"BRAINBENCH_DATABASE_URL": url},
                                            contract.init_timeout_s)
                over = await seam.in_thread(functools.partial(brains.over_share, brains.template))
                if over:
                    failure = f"went over its share of the shared brain: {over}"
                if failure:
                    seam.init_error = f"init ({' '.join(contract.init)}) {failure}"
            await seam.in_thread(brains.seal_template)
        except ImageServerError as exc:
            seam.server_failed(exc)
        seam.clock.add(harness, "template_init", anyio.current_time() - began)
    return seeded


def brain_server(dbs: BrainDatabases, harness: str, image: str, contract: BrainContract,
                 process: SeamProcess) -> BrainDatabases:
    """Where the seam's databases live: the run's shared server, or the seam's private one."""
    if contract.server != "private":
        return dbs
    url = process.brain_server_url
    if url is None:
        raise ExecutorError(f"image {image} (seam {harness}) asks for a private brain server (label "
                            "io.brainbench.brain, \"server\": \"private\"), which only the docker executor starts")
    return BrainDatabases(ExternalPostgres(url), dbs.run_id, connection_limit=dbs.connection_limit,
                          statement_timeout_ms=dbs.statement_timeout_ms, guard=ConnectionGuard())


def seed_env(url: str, fixture: Fixture) -> dict[str, str]:
    return {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": fixture.source,
            "BRAINBENCH_FIXTURE": fixture.fixture_id}


async def seed_clone(seam: SeededSeam, fixture: Fixture, *more: Fixture,
                     seed: bool = True) -> tuple[ImageBrain | None, str | None]:
    """A clone seeded by the image for ``fixture`` (then each of ``more`` into the same clone, as a
    continuity pair's writer and reader share one brain): (brain, None), or (None, the seed failure).
    ``seed=False``: the initialised clone alone (a memory-trust fixture writes through its steps)."""
    where = f"seed failed for fixture {fixture.fixture_id} in seam {seam.harness} (image {seam.image})"
    if seam.init_error:
        return None, f"{where}: {seam.init_error}"
    if seam.server_error:
        return None, f"{where}: {seam.server_error}"
    try:
        documents = [seed_document(f).model_dump_json().encode("utf-8") for f in (fixture, *more)] if seed else []
    except SeedError as exc:
        return None, str(exc)
    try:
        brain = await seam.clone()
    except ImageServerError as exc:
        return None, f"{where}: {seam.server_failed(exc)}"
    for one, document in zip((fixture, *more), documents, strict=False):
        env = seed_env(brain.url, one)
        try:
            with seam.clock.timed(seam.harness, "seed"):
                failure, _ = await run_step(seam.active.process, seam.contract.seed, document, env,
                                            seam.contract.seed_timeout_s)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await seam.drop(brain)
            raise
        # Past its share of the shared server (the watchdog cut it off, or it is now): the seam's own failure.
        over = await seam.in_thread(lambda: seam.brains.over_share(brain.name))
        if over:
            failure = f"went over its share of the shared brain: {over}"
        if failure:
            await seam.release(brain)
            return None, f"{where}: seed ({' '.join(seam.contract.seed)}) {failure}"
    return brain, None


@contextlib.asynccontextmanager
async def one_clone(seam: SeededSeam, fixture: Fixture, *more: Fixture,
                    seed: bool = True) -> AsyncIterator[tuple[ImageBrain | None, str | None]]:
    """:func:`seed_clone` as a context: the clone is dropped on exit, whatever happened."""
    brain, failure = await seed_clone(seam, fixture, *more, seed=seed)
    try:
        yield brain, failure
    finally:
        if brain is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await seam.drop(brain)


@contextlib.asynccontextmanager
async def seeded_brains(seams: Mapping[str, SeededSeam], fixture: Fixture
                        ) -> AsyncIterator[tuple[dict[str, str], list[str]]]:
    """Per image-seeded seam a seeded clone for ``fixture``: (harness → hook URL, seed failures).

    The clones are dropped on exit: a fixture's brain never outlives its replay.
    """
    made: dict[str, tuple[SeededSeam, ImageBrain]] = {}
    failures: list[str] = []
    try:
        for harness, seam in seams.items():
            brain, failure = await seed_clone(seam, fixture)
            if brain is not None:
                made[harness] = (seam, brain)
            if failure:
                failures.append(failure)
        yield {h: b.url for h, (_, b) in made.items()}, failures
    finally:
        with anyio.CancelScope(shield=True):
            for seam, brain in made.values():
                with contextlib.suppress(Exception):
                    await seam.release(brain)
