"""Bring the run's seams up: pick each seam's provider, prepare it once, start every seam warm.

A seam with an image (``--image SEAM=IMAGE`` or a ``seams.toml`` entry) runs in Docker
whatever ``--executor`` says, so our local contract adapters and a production image mix
in one run.  A production image runs in stream mode only if it declares it (label
``io.brainbench.modes``); otherwise in exec mode, as real hooks run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from brainbench.brain.budget import cores, seam_mode
from brainbench.executors.base import Executor, ExecutorError, RunContext, SeamLaunch, SeamProcess
from brainbench.harnesses.registry import SEAMS, SeamSpec
from brainbench.models.config import RunConfig
from brainbench.models.result import SeamInfo
from brainbench.models.seed import BrainContract, BrainContractError, brain_contract_of
from brainbench.orchestrator.call_slots import SlottedProcess, call_slots


@dataclass
class ActiveSeam:
    spec: SeamSpec
    process: SeamProcess
    info: SeamInfo
    timeout_s: float
    env: dict[str, str]
    # Set when the image seeds its own brain (seed contract, orchestrator/image_seed.py).
    brain: BrainContract | None = None
    # The image swapped in behind the seam (--image, seams.toml); None for our own adapters.
    production_image: str | None = None


def seams_side_by_side(executor: str, seams: Sequence[ActiveSeam]) -> bool:
    """Whether a fixture's seams replay at once: each reads the brain through its own role and keeps
    its own transcript, so nothing of one reaches another, and the run's calls then fill the cores
    its jobs alone leave idle.  Not with an image behind a seam (a sidecar's may be anyone's): a
    production hook's own deadline (gbrain's 800 ms) must not depend on how many of our calls run
    beside it, as its call slots already keep it from --jobs."""
    return executor != "sidecar" and all(seam.production_image is None for seam in seams)


def ours_locally(config: RunConfig, harness: str) -> bool:
    """Whether the seam is our own adapter run as a local process of the runner (through the warm hook
    server): no image, no command of someone else's behind it."""
    override = config.seams.get(harness)
    return provider_for(config, harness) == "local" and not (override and override.command)


def gated_seams(config: RunConfig) -> list[str]:
    """The seams whose connections to a Unix-socket brain go through a gate of their own (brain/gate.py):
    every seam we did not write, and ours when they run in containers (docs/SECURITY-BRAIN.md)."""
    return [h for h in dict.fromkeys(config.harnesses) if not ours_locally(config, h)]


def provider_for(config: RunConfig, harness: str) -> str:
    if config.executor == "sidecar":
        return "sidecar"  # every seam is a sidecar's call server; the pod says which image
    override = config.seams.get(harness)
    return "docker" if config.executor == "docker" or (override and override.image) else "local"


def images_over_cores(config: RunConfig, jobs: int, cores: int) -> str | None:
    """A note when ``--jobs`` asks for more fixtures at once than an image's container has CPUs: its hook
    calls wait for a slot (orchestrator/call_slots.py), so that a deadline the image keeps of its own (gbrain's
    hook gives up after 800 ms and injects nothing) does not depend on our concurrency; the run says so, since
    those fixtures then take turns (docs/GBRAIN.md, "How many jobs").  Our own adapters keep no deadlines and
    are not slotted."""
    images = {h: o.image for h in dict.fromkeys(config.harnesses) if (o := config.seams.get(h)) and o.image}
    quota = config.limits(seam_cpus(config, cores)).cpus  # the run context's quota, --cpus or the default
    slots = call_slots(min(quota, cores) if quota else None, cores)  # as the provider caps it
    if jobs <= slots or not images:
        return None
    named = ", ".join(f"{h} ({image})" for h, image in images.items())
    return (f"note: --jobs {jobs} with an image behind seam(s) {named}: each gets at most {slots} hook call(s) at "
            f"once (its container's CPUs, on {cores} core(s)), so that a deadline an image keeps of its own does not "
            "depend on --jobs; the fixtures' other work still overlaps (docs/GBRAIN.md)")


def remote_docker(config: RunConfig) -> bool:
    """Some seam runs on a Docker engine that cannot see this machine's files (tcp://, ssh://)."""
    if not any(provider_for(config, h) == "docker" for h in config.harnesses):
        return False
    from brainbench.executors.docker.client import resolve_docker_host
    from brainbench.executors.docker.remote import is_remote

    return is_remote(resolve_docker_host(config.docker_host))


def seam_cpus(config: RunConfig, cores: int) -> float:
    """The CPU quota of each seam container when --cpus is not given: the machine's cores shared
    among the run's seams that run in containers, at least one each.  A lone image (the usual way
    a real memory system is graded) gets the machine: gbrain's image spends most of a run in its
    own bun processes, and capped at one of two cores its hook ran past its own 800 ms deadline on
    66 of 68 calls against 5 uncapped (docs/GBRAIN.md, "How many CPUs").  Several seams still
    cannot take more than their share from each other."""
    contained = [h for h in dict.fromkeys(config.harnesses) if provider_for(config, h) != "local"]
    return float(max(1, cores // max(1, len(contained))))


def run_context(config: RunConfig, run_id: str, database_url: str | None, work_root: Path | None,
                pool_size: int, phase: Callable[[str], None] | None = None,
                seam_sockets: Mapping[str, str] | None = None, cores: int = 1) -> RunContext:
    """What every provider of this run is given once, at ``prepare``: the options' one way in."""
    return RunContext(run_id=run_id, database_url=database_url, work_root=work_root, pool_size=pool_size,
                      limits=config.limits(seam_cpus(config, cores)), brain_container=config.brain_container,
                      container_db_host=config.container_db_host, notify=phase,
                      seam_sockets=dict(seam_sockets or {}))


def make_executor(kind: str, config: RunConfig, pool_size: int) -> Executor:
    if kind == "docker":
        from brainbench.executors.docker import DockerConfig, DockerExecutor  # lazy: the SDK is an optional extra

        docker = DockerConfig(docker_host=config.docker_host, private_brain_image=config.private_brain_image)
        return DockerExecutor(docker, pool_size=pool_size)
    if kind == "sidecar":
        from brainbench.executors.sidecar import SidecarExecutor, parse_endpoints

        return SidecarExecutor(parse_endpoints(config.seam_endpoints), config.seam_tokens)
    from brainbench.executors.local import LocalExecutor

    return LocalExecutor(pool_size=pool_size)


@dataclass
class Providers:
    """The executors one run uses (at most one per kind), each prepared once."""

    config: RunConfig
    context: RunContext
    executors: dict[str, Executor] = field(default_factory=dict)

    async def prepare(self) -> None:
        kinds = sorted({provider_for(self.config, h) for h in self.config.harnesses})
        for kind in kinds:
            self.executors[kind] = make_executor(kind, self.config, self.context.pool_size)
            if kind != "local" and self.context.notify is not None:
                self.context.notify(f"preparing the {kind} executor (dead runs' leftovers swept, the run's network)")
        async with anyio.create_task_group() as tg:
            for executor in self.executors.values():
                tg.start_soon(executor.prepare, self.context)

    async def close(self, interrupted: bool) -> None:
        for executor in self.executors.values():
            with contextlib.suppress(Exception):
                await executor.close(interrupted)


async def start_seam(config: RunConfig, providers: Providers, harness: str, workroot: Path) -> ActiveSeam:
    spec = SEAMS[harness]
    override = config.seams.get(harness)
    mode = seam_mode(config, harness)
    image = override.image if override else None
    if override and override.command:
        command = tuple(override.command)
    elif image:
        command = ()  # a production image runs its own ENTRYPOINT/CMD: that is the image contract
    else:
        command = spec.command(mode == "stream")
    kind = (override.kind if override and override.kind else None) or ("production" if image else spec.kind)
    # A seam sees its own subtree of the work root and nothing else: not the other seams'
    # transcripts, the gold, the fixtures or the result files.
    seam_root = workroot / harness
    seam_root.mkdir(mode=0o700, exist_ok=True)
    explicit_mode = bool(override and override.mode)
    launch = SeamLaunch(seam=harness, command=command, mode=mode, image=image,
                        env=dict(override.env) if override else {}, shared_paths=(str(seam_root),),
                        run_id=providers.context.run_id, mode_from_image=bool(image) and not explicit_mode)
    executor = providers.executors[provider_for(config, harness)]
    process = await executor.start(launch)
    try:
        brain = brain_contract_of(image, dict(process.image_labels)) if image else None
    except BrainContractError as exc:
        await process.stop()
        raise ExecutorError(str(exc)) from None
    # The image the seam ran (a production image, or our contract image under --executor docker): the
    # scoreboard, the HTML report and `explain` name it with its digest.
    info = SeamInfo(harness=harness, seam=kind, executor=executor.name, mode=process.mode,
                    image=image or process.image_ref, image_digest=process.image_digest, cpus=process.cpus,
                    brain_contract=brain.version if brain else None,
                    brain_not_applicable=brain.not_applicable() if brain else None)
    timeout = (override.timeout_s if override and override.timeout_s else None) or config.timeout_s
    if image and process.mode == "exec":
        process = SlottedProcess(process, call_slots(process.cpus, cores()))
    return ActiveSeam(spec, process, info, timeout, dict(override.env) if override else {}, brain,
                      production_image=image)


async def start_seams(config: RunConfig, providers: Providers, workroot: Path,
                      started: dict[str, ActiveSeam], phase: Callable[[str], None] | None = None) -> None:
    """Start every seam at once (their start-up is mostly imports); ``started`` keeps harness order.
    ``phase`` hears each seam start and come up."""
    harnesses = list(dict.fromkeys(config.harnesses))
    ready: dict[str, ActiveSeam] = {}
    say = phase or (lambda _line: None)

    async def one(harness: str) -> None:
        begun = time.monotonic()
        say(f"starting seam {harness} ({provider_for(config, harness)})")
        seam = ready[harness] = await start_seam(config, providers, harness, workroot)
        what = f"{seam.info.executor}, {seam.info.mode}" + (f", {seam.info.image}" if seam.info.image else "")
        say(f"seam {harness} up ({what}) in {time.monotonic() - begun:.1f} s")

    try:
        async with anyio.create_task_group() as tg:
            for harness in harnesses:
                tg.start_soon(one, harness)
    finally:
        # Whatever did start must be stoppable by the caller, even if another seam failed.
        started.update((h, ready[h]) for h in harnesses if h in ready)
