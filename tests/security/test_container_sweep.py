"""Sweeps never touch a live run's containers: only provably dead owners are removed.

Owners are judged by ``brainbench.owner`` (boot id, pid namespace, pid, start time, lock
file), not host name + pid and not age.  Forged labels stand in for runs elsewhere (another
pid namespace, another machine, an object from before owner labels); a real runner
process stands in for a live run on this host.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from brainbench.executors.docker.cleanup import owner_labels, remove_labelled
from brainbench.executors.docker.client import DockerApi
from brainbench.executors.docker.config import LABEL_OWNER
from brainbench.executors.docker_cli import app as docker_app
from brainbench.models.owner import Owner
from brainbench.ownership import current_owner
from container_kit import BASE, CLIENT, needs_docker
from typer.testing import CliRunner

pytestmark = needs_docker

HOLD_LOCK = textwrap.dedent("""
    import fcntl, sys, time
    fd = open(sys.argv[1], "w")
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(300)
""")


def _container(run_id: str, labels: dict[str, str]) -> str:
    c = CLIENT.containers.create(BASE, command=["sleep", "300"], labels={**labels, "brainbench.run_id": run_id},
                                 network_mode="none")
    return c.id


def _exists(cid: str) -> bool:
    try:
        CLIENT.containers.get(cid)
        return True
    except Exception:
        return False


def _gone_within(cid: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _exists(cid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.fixture
def run_ids() -> Iterator[list[str]]:
    ids: list[str] = []
    yield ids
    api = DockerApi()
    for rid in ids:
        remove_labelled(api, run_id=rid)
    api.close()


def _sweep(api: DockerApi, run_ids: list[str]) -> None:
    # The start-of-run sweep's rule, limited to this test's run ids: the engine is shared,
    # and other sessions' leftovers are not ours to judge in a test.
    for rid in run_ids:
        assert remove_labelled(api, run_id=rid, dead_only=True, keep_run_id="bbtest-exec-nobody").errors == []


def _rid(ids: list[str]) -> str:
    ids.append(f"bbtest-exec-{uuid.uuid4().hex[:10]}")
    return ids[-1]


# Alone: a dead owner's leftover is fair game for any concurrent run's start-of-run sweep
# (other workers share this engine), so it may vanish before this test looks at it.
@pytest.mark.alone
def test_only_provably_dead_owners_are_swept(run_ids: list[str], tmp_path: Path) -> None:
    me = current_owner()
    lock = tmp_path / "owner.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        foreign_ns = Owner(boot_id=me.boot_id, pid_ns="pid:[1]", pid=1, start_ticks=1, lock_path=str(lock))
        other_machine = Owner(boot_id="another-kernel", pid_ns=me.pid_ns, pid=1, start_ticks=1)
        dead_here = Owner(boot_id=me.boot_id, pid_ns=me.pid_ns, pid=me.pid, start_ticks=me.start_ticks + 1)
        base = {"brainbench.managed": "1"}
        live_ns = _container(_rid(run_ids), {**base, LABEL_OWNER: foreign_ns.label(), "brainbench.created": "0"})
        unknown = _container(_rid(run_ids), {**base, LABEL_OWNER: other_machine.label()})
        # From before owner labels: same host name, a dead pid, six hours old -- once swept, now kept.
        legacy = _container(_rid(run_ids), {**base, "brainbench.owner_host": "seam", "brainbench.owner_pid": "999999",
                                             "brainbench.created": "1"})
        dead = _container(_rid(run_ids), {**base, LABEL_OWNER: dead_here.label()})
        mine = _container(_rid(run_ids), owner_labels("unused"))

        api = DockerApi()
        try:
            _sweep(api, run_ids)
        finally:
            api.close()
        assert not _exists(dead)
        assert all(_exists(c) for c in (live_ns, unknown, legacy, mine))

        holder.kill()  # the foreign-namespace owner dies: its lock is released
        holder.wait(timeout=10)
        result = CliRunner().invoke(docker_app, ["cleanup", "--run-id", run_ids[0]])
        assert result.exit_code == 0, result.output
        assert "removed container" in result.output and "owner dead" in result.output
        assert not _exists(live_ns)
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_cleanup_keeps_a_live_run_unless_all_and_says_so(run_ids: list[str]) -> None:
    rid = _rid(run_ids)
    # A live owner in this very pid namespace: ourselves.
    cid = _container(rid, owner_labels(rid))
    result = CliRunner().invoke(docker_app, ["cleanup", "--run-id", rid])
    assert result.exit_code == 0, result.output
    assert _exists(cid)
    assert "kept 1 object(s)" in result.output and "owner alive" in result.output and "--all" in result.output
    result = CliRunner().invoke(docker_app, ["cleanup", "--run-id", rid, "--all"])
    assert result.exit_code == 0, result.output
    assert not _exists(cid) and "removed container" in result.output


def test_a_live_runner_process_survives_another_runs_sweep(run_ids: list[str], tmp_path: Path) -> None:
    rid = _rid(run_ids)
    code = textwrap.dedent(f"""
        import time
        from brainbench.executors.docker.cleanup import owner_labels
        import docker
        c = docker.from_env().containers.create({BASE!r}, command=["sleep", "300"], labels=owner_labels({rid!r}),
                                                network_mode="none")
        print(c.id, flush=True)
        time.sleep(300)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        cid = proc.stdout.readline().strip()
        api = DockerApi()
        try:
            _sweep(api, [rid])
            assert _exists(cid)
            proc.kill()
            proc.wait(timeout=10)
            time.sleep(0.1)
            _sweep(api, [rid])
            # Now a dead owner's leftover, fair game for any concurrent run's sweep too: when one
            # was already removing it, ours is told "removal already in progress" and it is gone
            # a moment later.
            assert _gone_within(cid, 10)
        finally:
            api.close()
    finally:
        proc.kill()
        proc.wait(timeout=10)


