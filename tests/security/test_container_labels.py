"""An image's own LABELs: never on a container the runner creates, never believed by discovery.

Docker copies an image's labels onto every container made from it.  The hostile image here
carries the runner's own label names (managed, a victim run id, a dead owner, the remote
brain's role) and compose's service label, which is how the runner finds a run's Postgres.
A seam container started from it must carry the runner's labels and blanks; a container
someone else makes from it (inheriting them all) must never be swept as ours, nor taken for
the Postgres a run attaches to its network.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from brainbench.executors.base import RunContext
from brainbench.executors.docker import DockerExecutor
from brainbench.executors.docker.cleanup import owner_labels, remove_labelled
from brainbench.executors.docker.client import DockerApi
from brainbench.executors.docker.database import parse_target
from brainbench.executors.docker.failures import DockerInfraError
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner
from container_kit import CLIENT, build, needs_docker, run_id, with_seam  # noqa: F401

pytestmark = needs_docker


def _dead_owner(later: int = 1) -> str:
    """This process's pid with another start time: an owner that is provably gone."""
    me = current_owner()
    return Owner(boot_id=me.boot_id, pid_ns=me.pid_ns, pid=me.pid, start_ticks=me.start_ticks + later).label()


@pytest.fixture
def hostile() -> Iterator[tuple[str, dict[str, str]]]:
    """An image that labels itself as a dead run's object, a run's brain and a compose Postgres."""
    tag = uuid.uuid4().hex[:8]
    labels = {"brainbench.managed": "1", "brainbench.run_id": f"bbtest-exec-victim-{tag}",
              "brainbench.owner": _dead_owner(2), "brainbench.role": "brain", "brainbench.seam": "openclaw",
              "com.docker.compose.service": f"bbtest-pg-{tag}", "com.docker.compose.project": "bbtest",
              "io.brainbench.modes": "exec"}
    lines = " ".join(f"{key}={json.dumps(value)}" for key, value in labels.items())
    image = build(f"labels-{tag}", f'LABEL {lines}\nUSER 10001:10001\nENTRYPOINT ["/bin/sh", "-c", "cat >/dev/null"]\n')
    yield image, labels
    CLIENT.images.remove(image, force=True)


@pytest.fixture
def foreign(hostile: tuple[str, dict[str, str]]) -> Iterator[Any]:
    """A running container made from the image by someone other than the runner: it inherits every label."""
    container = CLIENT.containers.run(hostile[0], entrypoint=["sleep", "300"], detach=True, network_mode="none")
    yield container
    with contextlib.suppress(Exception):  # gone already if a sweep took it for ours (the failure shown)
        container.remove(force=True)


def test_a_seam_container_carries_the_runners_labels_and_blanks(hostile: tuple[str, dict[str, str]],
                                                                run_id: str) -> None:  # noqa: F811
    image, _ = hostile

    async def labels(process: Any) -> dict[str, str]:
        return dict(process.container.attrs["Config"]["Labels"])

    got = with_seam(image, run_id, "exec", labels)
    assert got["brainbench.run_id"] == run_id
    assert got["brainbench.owner"] == current_owner().label()
    assert got["brainbench.managed"] == "1" and got["brainbench.seam"] == "claude_code"
    for key in ("brainbench.role", "com.docker.compose.service", "com.docker.compose.project", "io.brainbench.modes"):
        assert got[key] == "", key
    assert set(got) == set(CLIENT.images.get(image).labels) | set(owner_labels(run_id)) | {
        "brainbench.seam", "brainbench.contract_version", "brainbench.mode"}


def test_a_container_made_from_such_an_image_is_never_swept_as_ours(hostile: tuple[str, dict[str, str]],
                                                                   foreign: Any) -> None:
    victim = hostile[1]["brainbench.run_id"]
    api = DockerApi()
    try:
        # A dead owner's leftover by its labels: the start-of-run sweep's rule, and `cleanup --all`'s.
        for dead_only in (True, False):
            report = remove_labelled(api, run_id=victim, dead_only=dead_only)
            assert report.containers == [] and report.kept == [] and report.errors == []
        assert DockerExecutor.cleanup(victim) == []
    finally:
        api.close()
    foreign.reload()
    assert foreign.status == "running"


def test_discovery_never_takes_an_image_labelled_container_for_the_runs_postgres(
        hostile: tuple[str, dict[str, str]], foreign: Any, run_id: str) -> None:  # noqa: F811
    image, labels = hostile
    service = labels["com.docker.compose.service"]

    async def prepare_beside_a_seam(seam: Any) -> str:
        """Run B finds its TCP Postgres by compose service while run A's seam (same image) is up."""
        other = DockerExecutor(run_id=f"{run_id}-b")
        try:
            await other.prepare(RunContext(run_id=f"{run_id}-b", database_url=f"postgresql://u:p@{service}:5432/x"))
        except DockerInfraError as exc:
            return str(exc)
        finally:
            await other.close()
        return "attached " + str(other.network_name)

    told = with_seam(image, run_id, "exec", prepare_beside_a_seam)
    assert f"Postgres at {service}:5432 is not a container this executor can attach to" in told

    async def loopback(seam: Any) -> tuple[Any, str]:
        executor = DockerExecutor(run_id=f"{run_id}-c")
        executor.context = RunContext(run_id=f"{run_id}-c")
        # No container publishes this port: compose's "postgres" service is the fallback.
        found = executor._find_postgres(parse_target("postgresql://u:p@127.0.0.1:9/x"))
        return found, seam.container.id

    relabelled = build(f"labels-pg-{uuid.uuid4().hex[:8]}",
                       'LABEL com.docker.compose.service="postgres"\nUSER 10001:10001\n'
                       'ENTRYPOINT ["/bin/sh", "-c", "cat >/dev/null"]\n')
    also = CLIENT.containers.run(relabelled, entrypoint=["sleep", "300"], detach=True, network_mode="none")
    try:
        found, seam_id = with_seam(relabelled, run_id, "exec", loopback)
        assert found is None or found.id not in (seam_id, also.id, foreign.id)
    finally:
        also.remove(force=True)
        CLIENT.images.remove(relabelled, force=True)


# Alone: a dead owner's container is fair game for any concurrent run's start-of-run sweep.
@pytest.mark.alone
def test_the_runner_still_sweeps_its_own_container_of_such_an_image(hostile: tuple[str, dict[str, str]],
                                                                   run_id: str) -> None:  # noqa: F811
    """Our own container of that image, its owner dead: ours by the labels we set, so it is swept."""
    image, _ = hostile
    with pytest.MonkeyPatch.context() as mp:
        # The owner the runner writes is a dead one, as after a SIGKILL: what the next sweep sees.
        import brainbench.executors.docker.cleanup as cleanup

        mp.setattr(cleanup, "current_owner", lambda: Owner.from_label(_dead_owner()))
        kept = anyio.run(_start_and_abandon, image, run_id)
    api = DockerApi()
    try:
        report = remove_labelled(api, run_id=run_id, dead_only=True)
    finally:
        api.close()
    assert [c for c in report.containers if c.startswith(run_id)] and kept not in [c.id for c in CLIENT.containers.list(
        all=True, filters={"label": f"brainbench.run_id={run_id}"})]


async def _start_and_abandon(image: str, run_id: str) -> str:  # noqa: F811
    """Start a seam and leave its container behind, as a killed runner does."""
    from brainbench.executors.base import SeamLaunch

    executor = DockerExecutor(run_id=run_id)
    process = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec", image=image, run_id=run_id))
    return str(process.container.id)  # type: ignore[attr-defined]
